#include "run_program.hpp"

#include <algorithm>
#include <set>

#include "graph/builder/builder.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/io/import.hpp"
#include "graph/validate.hpp"

namespace tagflow::fuzz {

namespace {

using graph::GraphBuilder;
using ops::DType;
using ops::Status;
using graph::Output;
using Vars = std::vector<Output>;

constexpr int kMaxDepth = 3;     // nesting of cond / while / case
constexpr int kMaxNodes = 200;   // a program stops growing the graph here
constexpr size_t kMaxStack = 16;

// The bytes of one program or sub-program; reading past the end gives 0.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), end_(size) {}
  bool done() const { return pos_ >= end_; }
  uint8_t next() { return pos_ < end_ ? data_[pos_++] : 0; }
  // The next `n` bytes (fewer at the end) as a reader of their own.
  Reader take(size_t n) {
    n = std::min(n, end_ - std::min(pos_, end_));
    Reader sub(data_ + pos_, n);
    pos_ += n;
    return sub;
  }

 private:
  const uint8_t* data_;
  size_t pos_ = 0;
  size_t end_;
};

struct Value {
  Output out;
  int rank = 0;  // 0 or 1, known while building (vectors have 1-4 elements)
};

// Builds the graph of one program into a GraphBuilder (see run_program.hpp).
class Decoder {
 public:
  explicit Decoder(GraphBuilder& b) : b_(b) {}

  bool uses_placeholder() const { return placeholder_.valid(); }
  bool raw_merge() const { return raw_merge_; }

  // Runs `in` on `stack`; returns the stack at the end.
  std::vector<Value> run(Reader in, std::vector<Value> stack, int depth) {
    while (!in.done() && b_.ok() && b_.graph().num_nodes() < kMaxNodes) {
      step(in, stack, depth);
      if (stack.size() > kMaxStack) stack.erase(stack.begin());
    }
    return stack;
  }

 private:
  Value pop(std::vector<Value>& s) {
    if (s.empty()) return {b_.scalar<int32_t>(1), 0};
    Value v = s.back();
    s.pop_back();
    return v;
  }
  Value as_int(Value v) {
    if (v.out.dtype == DType::int32) return v;
    return {b_.cast(v.out, DType::int32), v.rank};
  }
  // A scalar int32: vectors reduced by their maximum.
  Output as_scalar(Value v) {
    v = as_int(v);
    return v.rank == 0 ? v.out : b_.reduce_max(v.out, b_.scalar<int32_t>(0));
  }
  // A scalar bool, as a Switch's predicate must be.
  Output as_pred(Value v) {
    if (v.out.dtype == DType::boolean && v.rank == 0) return v.out;
    return b_.greater(as_scalar(v), b_.scalar<int32_t>(0));
  }
  Value binary_int(uint8_t kind, Value a, Value c) {
    a = as_int(a);
    c = as_int(c);
    Output x = a.out, y = c.out;
    Output r;
    switch (kind % 7) {
      case 0: r = b_.add(x, y); break;
      case 1: r = b_.sub(x, y); break;
      case 2: r = b_.mul(x, y); break;
      case 3: r = b_.div(x, y); break;  // FloorDiv: division by zero is a step error
      case 4: r = b_.floor_mod(x, y); break;
      case 5: r = b_.maximum(x, y); break;
      default: r = b_.minimum(x, y); break;
    }
    return {r, std::max(a.rank, c.rank)};
  }
  // The top of a branch's or body's stack as an int32 value.
  Output result_of(std::vector<Value> stack) { return as_int(pop(stack)).out; }

  void step(Reader& in, std::vector<Value>& s, int depth) {
    const uint8_t op = in.next() % 20;
    switch (op) {
      case 0: s.push_back({b_.scalar<int32_t>(static_cast<int8_t>(in.next())), 0}); break;
      case 1: {
        std::vector<int32_t> v(1 + in.next() % 4);
        for (int32_t& x : v) x = static_cast<int8_t>(in.next());
        s.push_back({b_.vector<int32_t>(v), 1});
        break;
      }
      case 2:
        if (!placeholder_.valid()) placeholder_ = b_.placeholder(DType::int32, {}, "x");
        s.push_back({placeholder_, 0});
        break;
      case 3: {
        const uint8_t kind = in.next();
        Value y = pop(s), x = pop(s);
        s.push_back(binary_int(kind, x, y));
        break;
      }
      case 4: {
        const uint8_t kind = in.next() % 4;
        Value x = as_int(pop(s));
        Output r = kind == 0 ? b_.neg(x.out) : kind == 1 ? b_.abs(x.out)
                 : kind == 2 ? b_.square(x.out) : b_.identity(x.out);
        s.push_back({r, x.rank});
        break;
      }
      case 5: {
        const uint8_t kind = in.next() % 4;
        Value y = as_int(pop(s)), x = as_int(pop(s));
        Output r = kind == 0 ? b_.less(x.out, y.out) : kind == 1 ? b_.greater(x.out, y.out)
                 : kind == 2 ? b_.equal(x.out, y.out) : b_.not_equal(x.out, y.out);
        s.push_back({r, std::max(x.rank, y.rank)});
        break;
      }
      case 6: {
        const uint8_t kind = in.next() % 3;
        Output x = as_pred(pop(s));
        if (kind == 0) {
          s.push_back({b_.logical_not(x), 0});
        } else {
          Output y = as_pred(pop(s));
          s.push_back({kind == 1 ? b_.logical_and(x, y) : b_.logical_or(x, y), 0});
        }
        break;
      }
      case 7: cond(in, s, depth); break;
      case 8: loop(in, s, depth); break;
      case 9: case_(in, s, depth); break;
      case 10:
        if (!s.empty()) s.push_back(s.back());
        break;
      case 11:
        if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
        break;
      case 12:
        if (s.size() >= 2) s.pop_back();
        break;
      case 13: {  // a raw Switch: one port of it, dead when not taken
        const int port = in.next() % 2;
        Output pred = as_pred(pop(s));
        Value data = pop(s);
        graph::Outputs sw = b_.op("Switch", {data.out, pred});
        s.push_back({sw[static_cast<size_t>(port)], data.rank});
        break;
      }
      case 14: {  // a raw Merge of two values: both may be live
        Value y = as_int(pop(s)), x = as_int(pop(s));
        graph::Outputs m = b_.op("Merge", {x.out, y.out});
        raw_merge_ = true;
        s.push_back({m[0], std::max(x.rank, y.rank)});
        break;
      }
      case 15: {  // a constant that runs after (and dies with) the top
        graph::NodeOptions o;
        if (!s.empty()) o.control_inputs.push_back(s.back().out);
        s.push_back({b_.scalar<int32_t>(static_cast<int8_t>(in.next()), o), 0});
        break;
      }
      case 16: {
        Value x = as_int(pop(s));
        Output axis = b_.scalar<int32_t>(0);
        Output r = x.rank == 0 ? x.out : in.next() % 2 ? b_.reduce_sum(x.out, axis)
                                                      : b_.reduce_max(x.out, axis);
        s.push_back({r, 0});
        break;
      }
      case 17: {
        Value x = pop(s);
        if (in.next() % 2) s.push_back({b_.zeros_like(x.out), x.rank});
        else s.push_back({b_.shape(x.out), 1});
        break;
      }
      case 18: {
        Value y = as_int(pop(s)), x = as_int(pop(s));
        Output p = as_pred(pop(s));
        s.push_back({b_.select(p, x.out, y.out), std::max(x.rank, y.rank)});
        break;
      }
      default: {  // an identity of the top that waits for the one below
        Value x = pop(s);
        graph::NodeOptions o;
        if (!s.empty()) o.control_inputs.push_back(s.back().out);
        s.push_back({b_.identity(x.out, o), x.rank});
        break;
      }
    }
  }

  void cond(Reader& in, std::vector<Value>& s, int depth) {
    if (depth >= kMaxDepth) return;
    Output pred = as_pred(pop(s));
    Reader t = in.take(in.next() % 32);
    Reader f = in.take(in.next() % 32);
    graph::Outputs r = b_.cond(
        pred, [&] { return Vars{result_of(run(t, s, depth + 1))}; },
        [&] { return Vars{result_of(run(f, s, depth + 1))}; });
    s.push_back({r[0], 1});  // the branches' ranks may differ
  }

  // A while loop over one or two int32 variables. Unless the loop is wild,
  // variable 0 counts the iterations and the loop stops at a small limit;
  // a wild loop's condition and body are whatever the sub-programs make
  // (the session's iteration limit ends the loops that do not stop).
  void loop(Reader& in, std::vector<Value>& s, int depth) {
    if (depth >= kMaxDepth) return;
    const size_t n = 1 + in.next() % 2;
    const uint8_t flags = in.next();
    const bool wild = flags & 1;
    const int32_t limit = (flags >> 1) % 8;
    graph::WhileOptions options;
    options.parallel_iterations = 1 + (flags >> 4) % 4;
    if (flags & 0x40) options.maximum_iterations = int64_t{(flags >> 1) % 5};
    Reader c = in.take(wild ? in.next() % 16 : 0);
    Reader body = in.take(in.next() % 32);
    Vars vars(n);
    std::vector<int> ranks(n);
    for (size_t i = 0; i < n; ++i) {
      Value v = as_int(pop(s));
      vars[n - 1 - i] = v.out;
      ranks[n - 1 - i] = v.rank;
    }
    auto values = [&](const Vars& v) {
      std::vector<Value> out;
      for (size_t i = 0; i < v.size(); ++i) out.push_back({v[i], ranks[i]});
      return out;
    };
    graph::Outputs r = b_.while_loop(
        [&](const Vars& v) {
          if (!wild) return b_.less(as_scalar({v[0], ranks[0]}), b_.scalar<int32_t>(limit));
          std::vector<Value> end = run(c, values(v), depth + 1);
          return as_pred(pop(end));
        },
        [&](const Vars& v) {
          std::vector<Value> end = run(body, values(v), depth + 1);
          Vars next(v.size());
          for (size_t i = v.size(); i-- > 0;) {
            // a body value of another rank is a step error at run time
            next[i] = end.empty() ? v[i] : as_int(pop(end)).out;
          }
          if (!wild) next[0] = b_.add(v[0], b_.scalar<int32_t>(1));
          return next;
        },
        vars, options);
    for (size_t i = 0; i < r.size(); ++i) s.push_back({r[i], ranks[i]});
  }

  void case_(Reader& in, std::vector<Value>& s, int depth) {
    if (depth >= kMaxDepth) return;
    Output index = as_scalar(pop(s));
    const size_t n = 1 + in.next() % 3;
    std::vector<Reader> bodies;
    for (size_t i = 0; i < n; ++i) bodies.push_back(in.take(in.next() % 24));
    std::vector<graph::BranchFn> branches;
    for (size_t i = 0; i < n; ++i)
      branches.push_back([&, i] { return Vars{result_of(run(bodies[i], s, depth + 1))}; });
    graph::Outputs r = b_.case_(index, branches);
    s.push_back({r[0], 1});
  }

  GraphBuilder& b_;
  Output placeholder_;
  bool raw_merge_ = false;
};

ops::Expected<RunCase> decode_program(const uint8_t* data, size_t size, RunCase c, int32_t fed) {
  GraphBuilder b;
  Decoder d(b);
  std::vector<Value> end = d.run(Reader(data, size), {}, 0);
  if (end.empty()) end.push_back({b.scalar<int32_t>(0), 0});
  TF_ASSIGN_OR_RETURN(c.graph, b.finish());
  std::set<std::string> fetched;
  for (size_t i = 0; i < 3 && i < end.size(); ++i) {
    std::string name = end[end.size() - 1 - i].out.name();
    if (fetched.insert(name).second) c.fetches.push_back(name);
  }
  if (d.uses_placeholder()) c.feeds.emplace_back("x", ops::Tensor::scalar<int32_t>(fed));
  c.deterministic_result = !d.raw_merge() || c.strict_merge;
  return c;
}

// The ops a GraphDef may use: control flow, arithmetic and reductions, and
// ops that make large tensors from small inputs (Fill, Tile, Range,
// ConcatV2 in a loop), which the session's memory limit must stop.
const std::set<std::string>& admitted_ops() {
  static const std::set<std::string> ops = {
      "Switch", "RefSwitch", "_SwitchN", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
      "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ToBool", "Identity",
      "IdentityN", "NoOp", "Const", "Placeholder", "PlaceholderWithDefault", "_Arg", "_Retval",
      "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Mod", "TruncateDiv",
      "Maximum", "Minimum", "Pow", "Neg", "Abs", "Square", "Sqrt", "Exp", "Log", "Sign", "Floor",
      "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd",
      "LogicalOr", "LogicalNot", "Cast", "Select", "SelectV2", "Sum", "Max", "Min", "Mean",
      "Prod", "All", "Any", "ZerosLike", "OnesLike", "Shape", "Size", "Rank", "Squeeze",
      "Assert", "StopGradient", "Snapshot", "Fill", "Tile", "Range", "ConcatV2", "Pack",
      "Reshape", "ExpandDims", "BroadcastTo"};
  return ops;
}

// A GraphDef is admitted if it is small, its constants are at most 16
// elements of rank at most 2, and every op is one of admitted_ops().
ops::Status admit(const graph::Graph& g) {
  if (g.num_nodes() > kMaxNodes) return Status(ops::Error::invalid_argument, "too many nodes");
  for (const graph::Node& n : g.nodes()) {
    if (admitted_ops().count(n.op) == 0)
      return Status(ops::Error::invalid_argument, "op " + n.op + " is not admitted");
    if (n.op != "Const") continue;
    auto value = n.attrs.find("value");
    if (value == n.attrs.end()) continue;
    const auto* t = value->second.get_if<ops::Tensor>();
    if (t != nullptr && (t->num_elements() > 16 || t->rank() > 2))
      return Status(ops::Error::invalid_argument, "constant too large");
  }
  return ops::ok_status();
}

ops::Expected<RunCase> decode_graph(const uint8_t* data, size_t size, RunCase c, int32_t fed) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  TF_ASSIGN_OR_RETURN(c.graph, graph::import_graph_bytes(bytes, "<fuzz>"));
  // What Session::create will do, to find feeds and fetches and to admit it.
  graph::Graph g = c.graph;
  TF_RETURN_IF_ERROR(graph::lower_functional_ops(&g));
  TF_RETURN_IF_ERROR(graph::validate(g));
  TF_RETURN_IF_ERROR(admit(g));
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.op == "Placeholder" && n.output_types.size() == 1) {
      const DType t = ops::base_dtype(n.output_types[0]);
      if (t == DType::int32) c.feeds.emplace_back(n.name, ops::Tensor::scalar<int32_t>(fed));
      else if (t == DType::float32) c.feeds.emplace_back(n.name, ops::Tensor::scalar<float>(static_cast<float>(fed)));
      else if (t == DType::boolean) c.feeds.emplace_back(n.name, ops::Tensor::scalar<bool>(fed > 0));
      else return Status(ops::Error::invalid_argument, "a Placeholder of another dtype");
    }
    if (g.out_edges(id).empty() && g.num_outputs(id) > 0 && c.fetches.size() < 4)
      c.fetches.push_back(n.name);
  }
  if (c.fetches.empty()) return Status(ops::Error::invalid_argument, "nothing to fetch");
  // Two live inputs of a Merge cannot be ruled out in a foreign graph.
  c.deterministic_result = c.strict_merge;
  return c;
}

}  // namespace

ops::Expected<RunCase> decode_run_case(const uint8_t* data, size_t size) {
  if (size < 2) return Status(ops::Error::invalid_argument, "too short");
  RunCase c;
  c.devices = 1 + (data[0] & 3);
  c.threaded = (data[0] & 0x14) == 0x14;
  c.strict_merge = (data[0] & 8) != 0;
  c.placement_seed = data[1];
  const int32_t fed = static_cast<int8_t>(data[1]);
  if (data[0] & 0x80) return decode_graph(data + 2, size - 2, std::move(c), fed);
  return decode_program(data + 2, size - 2, std::move(c), fed);
}

}  // namespace tagflow::fuzz
