// GraphBuilder: tagflow's C++ construction API. Ops are added by name with
// typed output handles (Output), checked against the OpRegistry as they are
// added (arity, dtypes, type attrs such as T, N, Tidx inferred from the
// inputs); control flow is built as TensorFlow 1.x builds it — cond() as
// Switch/Merge with pivot Identities, while_loop() as Enter/Merge/LoopCond/
// Switch/NextIteration/Exit with is_constant Enters for loop invariants —
// so that the result exports to a GraphDef TensorFlow's loaders accept.
//
// Tensors from outside a branch or loop are captured automatically: while a
// branch function runs, an outside input is rewritten through a Switch on the
// cond's predicate (one per tensor per branch); while a loop function runs,
// through an is_constant Enter (one per tensor per frame), through every
// level of nesting. Input-less ops inside a branch or loop get a control
// edge from its pivot so that they live there. docs/construction.md shows
// what each construct emits.
//
// In the TensorFlow 2 style (GraphBuilder::Style::tf2), cond(), while_loop()
// and case_() emit functional ops instead — StatelessIf / If,
// StatelessWhile / While, StatelessCase / Case — whose branches and bodies
// are library functions. While a branch or body function runs, the builder
// hands every node to a nested builder of that function (the loop body's
// `vars` are that builder's arguments); a value of an enclosing builder used
// there is captured as tf.function captures it: it becomes an argument of
// the function and an extra input of the functional op (of a While, an extra
// loop variable passed through unchanged). docs/tf2.md shows the forms.
//
// Errors do not interrupt construction code: the builder records the first
// one (naming the node, op, cond or loop being built), later calls return
// invalid handles, and finish() returns it. One builder is used by one
// thread; Outputs point back to their builder, which must outlive them and
// must not move.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "graph/autodiff/gradients.hpp"
#include "graph/graph.hpp"
#include "ops/tensor.hpp"

namespace tagflow::graph {
inline namespace builder {

class GraphBuilder;

// One output of a node (or, with port == kControlPort, the node itself as a
// control dependency). Plain value; invalid when default-made or returned by
// a builder that has failed.
struct Output {
  GraphBuilder* builder = nullptr;
  NodeId node = kNoNode;
  int port = 0;
  DType dtype = DType::invalid;

  bool valid() const { return builder != nullptr && node != kNoNode; }
  Endpoint endpoint() const { return {node, port}; }
  // The producing node as a control input or session target.
  Output control() const { return {builder, node, kControlPort, DType::invalid}; }
  // "node" for port 0 and for the control handle, "node:k" otherwise — the
  // form Session::run takes for fetches and targets.
  std::string name() const;
  const std::string& node_name() const;
};

// The outputs of one op or construct. Indexing past the end gives an invalid
// Output (the builder has recorded why), so fluent code never crashes.
class Outputs {
 public:
  Outputs() = default;
  Outputs(std::vector<Output> values, Output control)
      : values_(std::move(values)), control_(control) {}

  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  const Output& operator[](size_t i) const;
  std::vector<Output>::const_iterator begin() const { return values_.begin(); }
  std::vector<Output>::const_iterator end() const { return values_.end(); }
  const std::vector<Output>& vector() const { return values_; }
  operator const std::vector<Output>&() const { return values_; }
  // A node that has run once the op (or the whole cond / loop) has: the op
  // itself; a cond's first Merge (its only node when the branches return
  // nothing); a loop's first Exit.
  Output control() const { return control_; }

 private:
  std::vector<Output> values_;
  Output control_;
};

// How a node is named and placed. A bare string is its name (made unique
// within the current name scope only if left empty; a taken name is an
// error).
struct NodeOptions {
  NodeOptions() = default;
  NodeOptions(const char* n) : name(n) {}
  NodeOptions(std::string n) : name(std::move(n)) {}

  // A name in the style of an auto name: "name", else "name_1", ...
  static NodeOptions unique(std::string base) {
    NodeOptions o(std::move(base));
    o.make_unique = true;
    return o;
  }

  std::string name;
  bool make_unique = false;  // suffix a taken name instead of failing
  std::vector<Output> control_inputs;  // any Output; its node is used
  std::string device;
};

using BranchFn = std::function<std::vector<Output>()>;
using LoopCondFn = std::function<Output(const std::vector<Output>& vars)>;
using LoopBodyFn = std::function<std::vector<Output>(const std::vector<Output>& vars)>;
// map_fn: one slice of each elems tensor → the results for that slice.
using MapFn = std::function<std::vector<Output>(const std::vector<Output>& slices)>;
// scan: (accumulators, slices) → new accumulators.
using ScanFn = std::function<std::vector<Output>(const std::vector<Output>& acc,
                                                 const std::vector<Output>& slices)>;

struct WhileOptions {
  int64_t parallel_iterations = 10;
  // At most this many iterations (an int32 scalar): built as TensorFlow does,
  // with an extra counter loop variable `i < maximum_iterations && cond`.
  std::optional<std::variant<int64_t, Output>> maximum_iterations;
  std::string name;  // the loop's name scope; "while" if empty
};

class GraphBuilder {
 public:
  // How cond(), while_loop() and case_() build control flow: tf1 as
  // TensorFlow 1.x's graph mode (Switch/Merge/Enter/Exit), tf2 as
  // TensorFlow 2's tf.function (functional ops over library functions).
  enum class Style { tf1, tf2 };

  // registry nullptr: ops::OpRegistry::global().
  explicit GraphBuilder(const ops::OpRegistry* registry = nullptr);
  explicit GraphBuilder(Style style, const ops::OpRegistry* registry = nullptr);
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  Style style() const { return style_; }
  // Switches the style for the constructs built from now on (those built
  // already keep their form); a builder may hold both.
  void set_control_flow_style(Style style) { style_ = style; }

  bool ok() const { return status_.ok(); }
  // The first error, or ok.
  const Status& status() const { return status_; }
  // Records an error from construction code (kept only if it is the first).
  void record_error(Status s);

  const Graph& graph() const { return graph_; }
  // A validated copy (graph::validate) of the graph built so far, or the
  // first error. Building may go on and finish() be called again.
  Expected<Graph> finish();

  // --- naming ---------------------------------------------------------------
  // Nodes made while the returned guard lives are named "<scope>/<name>".
  class NameScope {
   public:
    ~NameScope();
    NameScope(NameScope&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
    NameScope(const NameScope&) = delete;
    NameScope& operator=(const NameScope&) = delete;
    NameScope& operator=(NameScope&&) = delete;

   private:
    friend class GraphBuilder;
    explicit NameScope(GraphBuilder* b) : b_(b) {}
    GraphBuilder* b_;
  };
  // The scope name is made unique like a node name ("layer", "layer_1").
  [[nodiscard]] NameScope name_scope(const std::string& name);

  // --- any op ----------------------------------------------------------------
  // Adds one node of a registered op. `inputs` are all data inputs, flat: a
  // list argument (`N * T`, a type list) takes as many as its attr says or,
  // if the attr is not given, all that the other arguments leave. Type attrs
  // and N are inferred from the inputs; other attrs are given in `attrs`
  // (defaults are added).
  Outputs op(const std::string& op_name, const std::vector<Output>& inputs,
             ops::AttrMap attrs = {}, const NodeOptions& options = {});
  // op() for an op with one output.
  Output op1(const std::string& op_name, const std::vector<Output>& inputs,
             ops::AttrMap attrs = {}, const NodeOptions& options = {});

  // --- constants and feeds ---------------------------------------------------
  Output constant(const ops::Tensor& value, const NodeOptions& options = {});
  template <class T>
  Output scalar(T value, const NodeOptions& options = {}) {
    return constant(ops::Tensor::scalar<T>(std::move(value)), options);
  }
  template <class T>
  Output vector(const std::vector<T>& values, const NodeOptions& options = {}) {
    return constant(ops::Tensor::vector<T>(values), options);
  }
  // A scalar of any numeric or bool dtype, converted from `value`.
  Output scalar_of(DType dtype, double value, const NodeOptions& options = {});
  Output placeholder(DType dtype, const ops::PartialShape& shape = {true, {}},
                     const NodeOptions& options = {});

  // --- common ops (TensorFlow's op names) -------------------------------------
  Output identity(Output x, const NodeOptions& options = {});
  Output add(Output a, Output b, const NodeOptions& options = {});  // AddV2
  Output sub(Output a, Output b, const NodeOptions& options = {});
  Output mul(Output a, Output b, const NodeOptions& options = {});
  Output div(Output a, Output b, const NodeOptions& options = {});  // RealDiv; FloorDiv for integers
  Output floor_mod(Output a, Output b, const NodeOptions& options = {});
  Output maximum(Output a, Output b, const NodeOptions& options = {});
  Output minimum(Output a, Output b, const NodeOptions& options = {});
  Output pow(Output a, Output b, const NodeOptions& options = {});
  Output neg(Output x, const NodeOptions& options = {});
  Output abs(Output x, const NodeOptions& options = {});
  Output square(Output x, const NodeOptions& options = {});
  Output sqrt(Output x, const NodeOptions& options = {});
  Output less(Output a, Output b, const NodeOptions& options = {});
  Output less_equal(Output a, Output b, const NodeOptions& options = {});
  Output greater(Output a, Output b, const NodeOptions& options = {});
  Output greater_equal(Output a, Output b, const NodeOptions& options = {});
  Output equal(Output a, Output b, const NodeOptions& options = {});
  Output not_equal(Output a, Output b, const NodeOptions& options = {});
  Output logical_and(Output a, Output b, const NodeOptions& options = {});
  Output logical_or(Output a, Output b, const NodeOptions& options = {});
  Output logical_not(Output x, const NodeOptions& options = {});
  Output matmul(Output a, Output b, bool transpose_a = false, bool transpose_b = false,
                const NodeOptions& options = {});
  Output cast(Output x, DType to, const NodeOptions& options = {});
  Output reduce_sum(Output x, Output axes, bool keep_dims = false, const NodeOptions& options = {});
  Output reduce_mean(Output x, Output axes, bool keep_dims = false, const NodeOptions& options = {});
  Output reduce_max(Output x, Output axes, bool keep_dims = false, const NodeOptions& options = {});
  Output concat(const std::vector<Output>& values, Output axis, const NodeOptions& options = {});
  Output stack(const std::vector<Output>& values, int64_t axis = 0, const NodeOptions& options = {});
  Output reshape(Output x, Output shape, const NodeOptions& options = {});
  Output shape(Output x, const NodeOptions& options = {});
  Output fill(Output dims, Output value, const NodeOptions& options = {});
  Output range(Output start, Output limit, Output delta, const NodeOptions& options = {});
  Output select(Output pred, Output a, Output b, const NodeOptions& options = {});  // SelectV2
  Output gather(Output params, Output indices, Output axis, const NodeOptions& options = {});
  Output zeros_like(Output x, const NodeOptions& options = {});
  // A NoOp that runs after every given node (tf.group).
  Output group(const std::vector<Output>& deps, const NodeOptions& options = {});

  // --- gradients -------------------------------------------------------------
  // d(sum of ys · grad_ys)/d(xs), added to the graph (graph/autodiff/gradients.hpp):
  // one Output per x, invalid where no gradient flows to it (unless
  // options.unconnected is zeros). Called outside every cond and loop; the
  // ys and xs must be too. Gradient loops, stacks and counters are added
  // for the loops on the way.
  std::vector<Output> gradients(const std::vector<Output>& ys, const std::vector<Output>& xs,
                                const std::vector<Output>& grad_ys = {},
                                const GradientOptions& options = {});

  // --- control flow ----------------------------------------------------------
  // tf.cond: see the header comment and docs/construction.md. Both
  // branches must return as many tensors, of equal dtypes. `name` is the
  // name scope ("cond" if empty); in the tf2 style, the If node's name, its
  // branch functions being "<name>_true_<k>" and "<name>_false_<k>".
  Outputs cond(Output pred, const BranchFn& true_fn, const BranchFn& false_fn,
               const std::string& name = "");
  // tf.while_loop. The loop variables' dtypes are fixed; cond_fn must
  // return a bool. In the tf2 style: a While node named options.name
  // ("while") over functions "<name>_cond_<k>" and "<name>_body_<k>", with
  // the parallel_iterations attr; maximum_iterations is, as in TensorFlow's
  // while_v2, a counter loop variable and `counter < maximum_iterations` in
  // the condition.
  Outputs while_loop(const LoopCondFn& cond_fn, const LoopBodyFn& body_fn,
                     const std::vector<Output>& loop_vars, const WhileOptions& options = {});
  // Branch `index` (an int32 scalar); an index out of range takes the last
  // branch, as TensorFlow's Case lowering does. Built as a chain of conds
  // (`index == 0`, else `index == 1`, ...), so the graph holds only the
  // standard Switch/Merge primitives. In the tf2 style: one StatelessCase
  // (Case) node over functions "<name>_branch<i>_<k>".
  Outputs case_(Output index, const std::vector<BranchFn>& branches, const std::string& name = "");
  // --- TensorFlow 2 functions and functional control flow -------------------
  // (docs/tf2.md) Adds a library function built by `body` in a builder of its
  // own: `body` gets that builder and one placeholder per argument dtype and
  // returns the function's results (Outputs of that builder; an argument may
  // be returned as is). The body may define and call functions itself; they
  // join this graph's library. Stateful nodes of the body are control
  // results, so they run when the function does. Returns the function's
  // name, `name` made unique in the library ("" when it fails; the error is
  // the builder's).
  using FunctionBodyFn = std::function<std::vector<Output>(GraphBuilder& body, const std::vector<Output>& args)>;
  std::string function(const std::string& name, const std::vector<DType>& arg_types, const FunctionBodyFn& body);
  // A call of a library function: PartitionedCall, or StatefulPartitionedCall
  // when the function is stateful. One Output per result.
  Outputs call(const std::string& function_name, const std::vector<Output>& args, const NodeOptions& options = {});
  // StatelessIf (If when a branch is stateful): then_fn(args) when pred is
  // true (TensorFlow's truthiness for a non-bool or non-scalar pred), else
  // else_fn(args). Both functions take `args` and return the same dtypes.
  Outputs functional_if(Output pred, const std::string& then_fn, const std::string& else_fn,
                        const std::vector<Output>& args, const NodeOptions& options = {});
  // StatelessWhile (While when cond or body is stateful): cond_fn(vars) is
  // one predicate, body_fn(vars) returns the next vars.
  Outputs functional_while(const std::string& cond_fn, const std::string& body_fn, const std::vector<Output>& vars,
                           int64_t parallel_iterations = 10, const NodeOptions& options = {});
  // StatelessCase (Case when a branch is stateful): branch `index` (int32)
  // of `branch_fns` on `args`, the last one for an index out of range.
  Outputs functional_case(Output index, const std::vector<std::string>& branch_fns, const std::vector<Output>& args,
                          const NodeOptions& options = {});
  // For: vars = body_fn(i, vars) for i from start by delta while i < limit
  // (delta > 0) or i > limit (delta < 0); start, limit and delta int32.
  Outputs for_loop(Output start, Output limit, Output delta, const std::string& body_fn,
                   const std::vector<Output>& vars, const NodeOptions& options = {});

  // tf.map_fn: applies fn to the slices elems[i] along dimension 0 of every
  // tensor of `elems` (equal lengths) in a while loop and stacks the results:
  // one TensorArrayV3 per input (filled by TensorArrayScatterV3, read with
  // TensorArrayReadV3) and one per result (TensorArrayWriteV3 in the loop,
  // TensorArrayGatherV3 after it); in the tf2 style, TensorLists as
  // TensorFlow 2 builds them (TensorListFromTensor and TensorListGetItem,
  // TensorListReserve and TensorListSetItem, TensorListStack after the
  // loop). fn returns one tensor per `out_dtypes` (default: the dtypes of
  // elems).
  Outputs map_fn(const MapFn& fn, const std::vector<Output>& elems,
                 const std::vector<DType>& out_dtypes = {}, const std::string& name = "",
                 int64_t parallel_iterations = 10);
  // tf.scan: acc = fn(acc, elems[i]) from `initializer`; returns every
  // accumulator stacked (result[k][i] = accumulator k after slice i).
  Outputs scan(const ScanFn& fn, const std::vector<Output>& elems,
               const std::vector<Output>& initializer, const std::string& name = "",
               int64_t parallel_iterations = 10);

 private:
  friend struct Output;
  struct Context;
  struct BuildingNode;
  struct FunctionBody;

  // --- the tf2 style (graph/builder_tf2.cpp) ---
  // The innermost function builder nodes go to while a branch or body runs
  // (nullptr when nodes go to this builder).
  GraphBuilder* forward_target() const;
  // Runs `fn` with a new function builder active; what it returns is
  // resolved in that builder (captured if it comes from outside).
  FunctionBody run_function(const std::vector<DType>& arg_types,
                            const std::function<std::vector<Output>(const std::vector<Output>&)>& fn);
  // In a function builder: x itself, or the argument that carries a value
  // of an enclosing builder (made on first use).
  Expected<Output> resolve(const Output& x);
  // A library function name "<base>_<k>", unique in every builder's library.
  std::string new_function_name(const std::string& base);
  // Writes a function builder's graph into this builder's library.
  Status write_function(GraphBuilder& fb, const std::string& name, const std::vector<Output>& args,
                        const std::vector<Output>& rets);
  Outputs cond_tf2(Output pred, const BranchFn& true_fn, const BranchFn& false_fn, const std::string& name);
  Expected<Outputs> while_tf2(const std::string& node, const LoopCondFn& cond_fn, const LoopBodyFn& body_fn,
                              const std::vector<Output>& loop_vars, int64_t parallel_iterations);
  Outputs case_tf2(Output index, const std::vector<BranchFn>& branches, const std::string& name);
  // op() with the node's full name already chosen.
  Outputs add_op(const std::string& name, const std::string& op_name, const std::vector<Output>& inputs,
                 ops::AttrMap attrs, const NodeOptions& options);

  void fail(Error code, const std::string& message);  // record_error
  Output invalid() const { return {}; }
  Output make_output(NodeId node, int port) const;

  // Names.
  std::string scope_prefix() const;
  std::string unique_name(const std::string& prefix, const std::string& base);
  Expected<std::string> node_name(const NodeOptions& options, const std::string& op_name);

  // The node as it is added: raw (inputs already in the right context).
  Expected<NodeId> add_raw(const std::string& name, const std::string& op,
                           std::vector<Output> inputs, ops::AttrMap attrs, int context,
                           std::vector<NodeId> control = {});
  Status check_input(const Output& x, const std::string& where) const;

  // Capture into a context: the value of `x` as seen by nodes of context `c`.
  Expected<Output> capture(int c, Output x, const std::string& user);
  Expected<NodeId> capture_control(int c, NodeId dep, const std::string& user);
  bool is_ancestor(int ancestor, int c) const;
  bool crosses_loop(int from, int to) const;
  std::string context_description(int c) const;
  int context_of(NodeId n) const { return node_context_[static_cast<size_t>(n)]; }
  Output pivot_of(int c) const;
  void add_pivot_dependency(int c, const std::vector<Output>& inputs,
                            std::vector<NodeId>* control) const;

  // Control flow pieces.
  int push_context(Context ctx);
  void pop_context(int c);
  std::vector<Output> run_branch(int c, const BranchFn& fn, const std::string& cond_name,
                                 const char* which, bool* returned_nothing);
  Expected<Outputs> build_while(const std::string& scope, const LoopCondFn& cond_fn,
                                const LoopBodyFn& body_fn, const std::vector<Output>& loop_vars,
                                int64_t parallel_iterations);
  // The loop of map_fn and scan: `accumulators` are extra loop variables
  // that fn updates; one TensorArray (tf2 style: TensorList) collects each
  // of fn's `collected` results per iteration.
  Outputs tensor_array_loop(const std::string& what, const std::string& name,
                            const std::vector<Output>& elems,
                            const std::vector<Output>& accumulators,
                            const std::vector<DType>& collected, const ScanFn& fn,
                            int64_t parallel_iterations);

  const ops::OpRegistry* registry_;
  Graph graph_;
  Status status_;
  bool finished_ = false;
  std::vector<std::string> scopes_;          // name scope stack, each ending in "/"
  std::map<std::string, int> name_counts_;   // base name -> next suffix
  std::vector<Context> contexts_;            // [0] is the root
  int current_ = 0;                          // the context new nodes go into
  std::vector<int> node_context_;            // by NodeId
  // (context, node, port) -> the captured value in that context.
  std::map<std::tuple<int, NodeId, int>, Output> captured_;

  // The tf2 style.
  Style style_ = Style::tf1;
  GraphBuilder* enclosing_ = nullptr;  // a function builder's: whose values it captures
  GraphBuilder* active_ = nullptr;     // the function builder of the branch or body running
  // A function builder's captures: (builder, node, port) of the outside
  // value -> its argument here; and the outside values in capture order.
  std::map<std::tuple<const GraphBuilder*, NodeId, int>, Output> fn_captures_;
  std::vector<Output> capture_order_;
  // Function builders stay alive with this one, so that their Outputs do.
  std::vector<std::unique_ptr<GraphBuilder>> function_builders_;
  int function_counter_ = 0;                 // the root builder's
  std::set<std::string> function_names_;     // the root builder's: names given out
};

// Arithmetic and comparison on Outputs of one builder (AddV2, Sub, Mul,
// RealDiv/FloorDiv, Neg, Less, Greater, LessEqual, GreaterEqual); a C++
// number on either side becomes a scalar Const of the other side's dtype.
Output operator+(Output a, Output b);
Output operator-(Output a, Output b);
Output operator*(Output a, Output b);
Output operator/(Output a, Output b);
Output operator-(Output x);
Output operator<(Output a, Output b);
Output operator>(Output a, Output b);
Output operator<=(Output a, Output b);
Output operator>=(Output a, Output b);
Output operator+(Output a, double b);
Output operator-(Output a, double b);
Output operator*(Output a, double b);
Output operator/(Output a, double b);
Output operator<(Output a, double b);
Output operator>(Output a, double b);
Output operator<=(Output a, double b);
Output operator>=(Output a, double b);
Output operator+(double a, Output b);
Output operator-(double a, Output b);
Output operator*(double a, Output b);

}  // namespace builder
}  // namespace tagflow::graph
