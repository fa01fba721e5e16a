#include "graph/builder/builder.hpp"

#include <algorithm>

#include "graph/builder/builder_context.hpp"
#include "graph/builder/infer_attrs.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace builder {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// TensorFlow's producer version of the corpus files; every op we emit
// exists (with these attrs) at that version.
constexpr int32_t kProducer = 27;

}  // namespace

// --- Output / Outputs ----------------------------------------------------------

std::string Output::name() const {
  if (!valid()) return "<invalid>";
  if (port == kControlPort) return node_name();
  return builder->graph().endpoint_name(endpoint());
}

const std::string& Output::node_name() const {
  static const std::string none = "<invalid>";
  return valid() ? builder->graph().node(node).name : none;
}

const Output& Outputs::operator[](size_t i) const {
  static const Output none;
  return i < values_.size() ? values_[i] : none;
}

// --- GraphBuilder: state and errors ------------------------------------------

GraphBuilder::GraphBuilder(const ops::OpRegistry* registry)
    : registry_(registry != nullptr ? registry : &ops::OpRegistry::global()) {
  contexts_.emplace_back();
  graph_.set_versions(Versions{kProducer, 0, {}});
}

GraphBuilder::GraphBuilder(Style style, const ops::OpRegistry* registry) : GraphBuilder(registry) {
  style_ = style;
}

GraphBuilder::~GraphBuilder() = default;

void GraphBuilder::record_error(Status s) {
  if (status_.ok() && !s.ok()) status_ = std::move(s);
}

void GraphBuilder::fail(Error code, const std::string& message) {
  record_error(Status(code, message));
}

Output GraphBuilder::make_output(NodeId node, int port) const {
  const Node& n = graph_.node(node);
  DType t = port >= 0 && static_cast<size_t>(port) < n.output_types.size()
                ? n.output_types[static_cast<size_t>(port)]
                : DType::invalid;
  return {const_cast<GraphBuilder*>(this), node, port, t};
}

Expected<Graph> GraphBuilder::finish() {
  if (!ok()) return status_;
  if (active_ != nullptr)
    return Status(Error::failed_precondition,
                  "finish() called while a branch or body function is being built");
  if (current_ != 0)
    return Status(Error::failed_precondition,
                  "finish() called while " + context_description(current_) + " is being built");
  Graph g = graph_;
  Status s = validate(g);
  if (!s.ok()) return s.with_prefix("the built graph does not validate: ");
  return g;
}

// --- names ---------------------------------------------------------------------

std::string GraphBuilder::scope_prefix() const { return scopes_.empty() ? "" : scopes_.back(); }

std::string GraphBuilder::unique_name(const std::string& prefix, const std::string& base) {
  const std::string full = prefix + base;
  auto used = [&](const std::string& n) {
    return name_counts_.count(n) != 0 || graph_.find(n) != kNoNode;
  };
  std::string candidate = full;
  if (used(full)) {
    int& next = name_counts_[full];
    int i = std::max(next, 1);
    do {
      candidate = full + "_" + std::to_string(i++);
    } while (used(candidate));
    next = i;
  }
  name_counts_.emplace(candidate, 1);
  return candidate;
}

Expected<std::string> GraphBuilder::node_name(const NodeOptions& options,
                                              const std::string& op_name) {
  if (options.name.empty()) return unique_name(scope_prefix(), op_name);
  if (options.make_unique) return unique_name(scope_prefix(), options.name);
  std::string full = scope_prefix() + options.name;
  if (name_counts_.count(full) != 0 || graph_.find(full) != kNoNode)
    return Status(Error::invalid_argument,
                  "cannot name a " + op_name + " node " + quoted(full) + ": the name is taken");
  name_counts_.emplace(full, 1);
  return full;
}

GraphBuilder::NameScope GraphBuilder::name_scope(const std::string& name) {
  if (GraphBuilder* t = forward_target()) return t->name_scope(name);
  scopes_.push_back(unique_name(scope_prefix(), name) + "/");
  return NameScope(this);
}

GraphBuilder::NameScope::~NameScope() {
  if (b_ != nullptr && !b_->scopes_.empty()) b_->scopes_.pop_back();
}

// --- contexts and capture ----------------------------------------------------

bool GraphBuilder::is_ancestor(int ancestor, int c) const {
  for (; c >= 0; c = contexts_[static_cast<size_t>(c)].parent)
    if (c == ancestor) return true;
  return false;
}

bool GraphBuilder::crosses_loop(int from, int to) const {
  for (int c = to; c >= 0 && c != from; c = contexts_[static_cast<size_t>(c)].parent)
    if (contexts_[static_cast<size_t>(c)].kind == Context::Kind::loop) return true;
  return false;
}

std::string GraphBuilder::context_description(int c) const {
  const Context& ctx = contexts_[static_cast<size_t>(c)];
  switch (ctx.kind) {
    case Context::Kind::root: return "the top level";
    case Context::Kind::branch:
      return std::string("the ") + (ctx.branch == 1 ? "true" : "false") + " branch of cond " +
             quoted(ctx.name);
    case Context::Kind::loop: return "while loop " + quoted(ctx.name);
  }
  return "?";
}

Output GraphBuilder::pivot_of(int c) const { return contexts_[static_cast<size_t>(c)].pivot; }

// TensorFlow's _MaybeAddControlDependency: a node made in loop context `c`
// (or entering a context nested in it) whose inputs are all loop invariants
// of `c` would otherwise run, live, even in the loop's last iteration, whose
// other values are dead; a control input from the loop's pivot makes it dead
// there too. Nodes with control inputs of their own are left alone.
void GraphBuilder::add_pivot_dependency(int c, const std::vector<Output>& inputs,
                                        std::vector<NodeId>* control) const {
  if (c < 0 || contexts_[static_cast<size_t>(c)].kind != Context::Kind::loop || inputs.empty() ||
      !control->empty())
    return;
  for (const Output& x : inputs) {
    const Node& n = graph_.node(x.node);
    const bool* is_constant = n.attr<bool>("is_constant");
    if ((n.op != "Enter" && n.op != "RefEnter") || is_constant == nullptr || !*is_constant) return;
  }
  const Output pivot = pivot_of(c);
  if (pivot.valid()) control->push_back(pivot.node);
}

int GraphBuilder::push_context(Context ctx) {
  contexts_.push_back(std::move(ctx));
  return static_cast<int>(contexts_.size()) - 1;
}

void GraphBuilder::pop_context(int c) { current_ = contexts_[static_cast<size_t>(c)].parent; }

Expected<Output> GraphBuilder::capture(int c, Output x, const std::string& user) {
  const int xc = context_of(x.node);
  if (xc == c) return x;
  if (!is_ancestor(xc, c))
    return Status(Error::invalid_graph,
                  user + " uses " + quoted(x.name()) + ", which was made in " +
                      context_description(xc) + " and is not visible in " +
                      context_description(c) + " (return it from there instead)");
  auto key = std::make_tuple(c, x.node, x.port);
  if (auto it = captured_.find(key); it != captured_.end()) return it->second;
  const int parent = contexts_[static_cast<size_t>(c)].parent;
  TF_ASSIGN_OR_RETURN(Output outer, capture(parent, x, user));
  const Context& ctx = contexts_[static_cast<size_t>(c)];
  const bool ref = ops::is_ref(x.dtype);
  ops::AttrMap attrs{{"T", ops::base_dtype(x.dtype)}};
  Output inner;
  std::vector<NodeId> control;
  if (ctx.kind == Context::Kind::branch) {
    const std::string name = unique_name(ctx.scope, "Switch");
    const int port = ctx.branch;
    add_pivot_dependency(parent, {outer, ctx.pred}, &control);
    TF_ASSIGN_OR_RETURN(NodeId id, add_raw(name, ref ? "RefSwitch" : "Switch", {outer, ctx.pred},
                                           std::move(attrs), c, std::move(control)));
    inner = make_output(id, port);
  } else {
    attrs["frame_name"] = ctx.frame_name;
    attrs["is_constant"] = true;
    attrs["parallel_iterations"] = ctx.parallel_iterations;
    const std::string name = unique_name(ctx.scope, "Enter");
    add_pivot_dependency(parent, {outer}, &control);
    TF_ASSIGN_OR_RETURN(NodeId id, add_raw(name, ref ? "RefEnter" : "Enter", {outer},
                                           std::move(attrs), c, std::move(control)));
    inner = make_output(id, 0);
  }
  captured_.emplace(key, inner);
  return inner;
}

Expected<NodeId> GraphBuilder::capture_control(int c, NodeId dep, const std::string& user) {
  const int dc = context_of(dep);
  if (dc == c) return dep;
  if (!is_ancestor(dc, c))
    return Status(Error::invalid_graph,
                  user + " has a control input from " + quoted(graph_.node(dep).name) +
                      ", which was made in " + context_description(dc) +
                      " and is not visible in " + context_description(c));
  // A control edge may cross into a branch (the pivot keeps deadness right)
  // but not into a frame: it enters as a value, a Const that runs after dep.
  if (!crosses_loop(dc, c)) return dep;
  auto key = std::make_tuple(dc, dep, kControlPort);
  auto it = captured_.find(key);
  if (it == captured_.end()) {
    const std::string name =
        unique_name(contexts_[static_cast<size_t>(dc)].scope, "control_dependency");
    TF_ASSIGN_OR_RETURN(NodeId id,
                        add_raw(name, "Const", {},
                                {{"dtype", DType::boolean}, {"value", ops::Tensor::scalar(true)}},
                                dc, {dep}));
    it = captured_.emplace(key, make_output(id, 0)).first;
  }
  TF_ASSIGN_OR_RETURN(Output inner, capture(c, it->second, user));
  return inner.node;
}

// --- adding nodes ----------------------------------------------------------------

Expected<NodeId> GraphBuilder::add_raw(const std::string& name, const std::string& op,
                                       std::vector<Output> inputs, ops::AttrMap attrs,
                                       int context, std::vector<NodeId> control) {
  const ops::OpDef* def = registry_->find(op);
  if (def == nullptr) return Status(Error::not_found, "unknown op " + quoted(op));
  const std::string where = op + " " + quoted(name) + ": ";
  TF_RETURN_IF_ERROR(def->check_and_complete_attrs(attrs).with_prefix(where));
  auto in = def->input_types(attrs);
  if (!in.ok()) return in.status().with_prefix(where);
  auto out = def->output_types(attrs);
  if (!out.ok()) return out.status().with_prefix(where);
  if (in->size() != inputs.size())
    return Status(Error::invalid_argument,
                  where + "takes " + std::to_string(in->size()) + " inputs but was given " +
                      std::to_string(inputs.size()));
  Node n;
  n.name = name;
  n.op = op;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!dtypes_match(inputs[i].dtype, (*in)[i]))
      return Status(Error::invalid_argument,
                    where + "input " + std::to_string(i) + " (" + quoted(inputs[i].name()) +
                        ") is " + ops::dtype_name(inputs[i].dtype) + " but " + op + " expects " +
                        ops::dtype_name((*in)[i]) + " there");
    n.inputs.push_back(inputs[i].endpoint());
  }
  n.control_inputs = std::move(control);
  n.attrs = std::move(attrs);
  n.def = def;
  n.input_types = std::move(in).value();
  n.output_types = std::move(out).value();
  TF_ASSIGN_OR_RETURN(NodeId id, graph_.add_node(std::move(n)));
  node_context_.push_back(context);
  return id;
}

Status GraphBuilder::check_input(const Output& x, const std::string& where) const {
  if (!x.valid())
    return Status(Error::invalid_argument,
                  where + " was given an invalid Output (default-made, or from a failed call)");
  if (x.builder != this || x.node >= graph_.num_nodes())
    return Status(Error::invalid_argument, where + " was given an Output of another GraphBuilder");
  return ok_status();
}

Outputs GraphBuilder::op(const std::string& op_name, const std::vector<Output>& inputs,
                         ops::AttrMap attrs, const NodeOptions& options) {
  if (GraphBuilder* t = forward_target()) return t->op(op_name, inputs, std::move(attrs), options);
  if (!ok()) return {};
  auto name = node_name(options, op_name);
  if (!name.ok()) {
    record_error(name.status());
    return {};
  }
  return add_op(*name, op_name, inputs, std::move(attrs), options);
}

Outputs GraphBuilder::add_op(const std::string& name, const std::string& op_name,
                             const std::vector<Output>& inputs, ops::AttrMap attrs,
                             const NodeOptions& options) {
  const std::string where = op_name + " " + quoted(name);
  const ops::OpDef* def = registry_->find(op_name);
  if (def == nullptr) {
    fail(Error::not_found, "unknown op " + quoted(op_name) + " (building node " + quoted(name) + ")");
    return {};
  }
  auto build = [&]() -> Expected<NodeId> {
    std::vector<Output> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TF_ASSIGN_OR_RETURN(Output given, resolve(inputs[i]));
      TF_RETURN_IF_ERROR(check_input(given, where + " input " + std::to_string(i)));
      TF_ASSIGN_OR_RETURN(Output x, capture(current_, given, where));
      in.push_back(x);
    }
    std::vector<DType> in_types;
    in_types.reserve(in.size());
    for (const Output& x : in) in_types.push_back(x.dtype);
    TF_RETURN_IF_ERROR(infer_type_attrs(*def, in_types, attrs, where));
    std::vector<NodeId> control;
    for (const Output& given : options.control_inputs) {
      TF_ASSIGN_OR_RETURN(Output c, resolve(given));
      TF_RETURN_IF_ERROR(check_input(c, where + " control input"));
      TF_ASSIGN_OR_RETURN(NodeId dep, capture_control(current_, c.node, where));
      if (std::find(control.begin(), control.end(), dep) == control.end()) control.push_back(dep);
    }
    add_pivot_dependency(current_, in, &control);
    // An input-less op inside a branch or loop lives there through its pivot.
    if (in.empty() && current_ != 0) {
      const Output pivot = pivot_of(current_);
      if (pivot.valid() && std::find(control.begin(), control.end(), pivot.node) == control.end())
        control.push_back(pivot.node);
    }
    TF_ASSIGN_OR_RETURN(NodeId id, add_raw(name, op_name, std::move(in), std::move(attrs),
                                           current_, std::move(control)));
    graph_.mutable_node(id).device = options.device;
    return id;
  };
  auto id = build();
  if (!id.ok()) {
    record_error(id.status());
    return {};
  }
  std::vector<Output> outs;
  const int n = static_cast<int>(graph_.node(*id).output_types.size());
  for (int p = 0; p < n; ++p) outs.push_back(make_output(*id, p));
  return Outputs(std::move(outs), make_output(*id, kControlPort));
}

Output GraphBuilder::op1(const std::string& op_name, const std::vector<Output>& inputs,
                         ops::AttrMap attrs, const NodeOptions& options) {
  if (GraphBuilder* t = forward_target()) return t->op1(op_name, inputs, std::move(attrs), options);
  Outputs out = op(op_name, inputs, std::move(attrs), options);
  if (ok() && out.size() != 1)
    fail(Error::invalid_argument, "op1: op " + op_name + " has " + std::to_string(out.size()) +
                                      " outputs, not one (use op())");
  return out[0];
}

}  // namespace builder
}  // namespace tagflow::graph

namespace tagflow::graph {
inline namespace builder {

std::vector<Output> GraphBuilder::gradients(const std::vector<Output>& ys,
                                            const std::vector<Output>& xs,
                                            const std::vector<Output>& grad_ys,
                                            const GradientOptions& options) {
  std::vector<Output> none(xs.size());
  if (!ok()) return none;
  if (current_ != 0) {
    fail(Error::failed_precondition,
         "gradients() called while " + context_description(current_) + " is being built");
    return none;
  }
  std::vector<Endpoint> y, x, gy;
  for (const Output& o : ys) {
    if (Status s = check_input(o, "gradients() y"); !s.ok()) return record_error(s), none;
    y.push_back(o.endpoint());
  }
  for (const Output& o : xs) {
    if (Status s = check_input(o, "gradients() x"); !s.ok()) return record_error(s), none;
    x.push_back(o.endpoint());
  }
  for (const Output& o : grad_ys) {
    if (!o.valid()) {
      gy.push_back({kNoNode, 0});
      continue;
    }
    if (Status s = check_input(o, "gradients() grad_y"); !s.ok()) return record_error(s), none;
    gy.push_back(o.endpoint());
  }
  const int before = graph_.num_nodes();
  GradientOptions o = options;
  if (o.ops == nullptr) o.ops = registry_;
  // TensorFlow 2's control flow is differentiated as written
  // (graph/autodiff/functional_gradients.hpp).
  if (style_ == Style::tf2 || has_functional_ops(graph_)) o.functional = true;
  auto r = graph::gradients(graph_, y, x, gy, o);
  // The new nodes belong to no builder cond or loop: nothing built later
  // may capture from inside a gradient loop.
  node_context_.resize(static_cast<size_t>(graph_.num_nodes()), 0);
  if (!r.ok()) {
    record_error(r.status());
    return none;
  }
  (void)before;
  std::vector<Output> out;
  for (const Endpoint& d : r->dxs) out.push_back(d.node == kNoNode ? Output{} : make_output(d.node, d.port));
  return out;
}

}  // namespace builder
}  // namespace tagflow::graph
