// Pass "arithmetic": algebraic rewrites that give the same value with less
// work. Each keeps the rewritten node's name (it becomes an Identity, or a
// cheaper op) and, through control inputs, the deadness of every input it
// stops reading.
//
// For every dtype (exact in IEEE arithmetic too):
//   x * 1, 1 * x, x / 1, x - 0        -> x  (the constant a scalar)
//   Neg(Neg(x)), LogicalNot(LogicalNot(x))  -> x
//   LogicalAnd(x, true), LogicalOr(x, false) -> x (scalar constant)
// Only for integer dtypes, whose wrap-around arithmetic is a ring (in
// floating point each changes rounding, or -0 + 0 = +0, or NaN ordering):
//   x + 0, 0 + x                               -> x
//   (x + c1) + c2, with c1, c2 scalar consts   -> x + (c1 + c2): one
//     broadcast add instead of two (the scalars are added first)
//   a*b + a*c, b*a + c*a                       -> a * (b + c)
//   LogicalNot(a < b) -> a >= b (and the other comparisons)
// For every dtype AddN takes, where static shapes (graph/
// shape_inference.hpp) show every input of the output's shape:
//   Add(Add(x, y), z), AddN(...) + z           -> AddN(x, y, z, ...): AddN
//     sums in input order, element by element, as the chain did
// A rewrite whose inner node has other consumers is not made (it would
// compute both).
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "graph/shapes/shape_inference.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

namespace {

bool is_add(const std::string& op) { return op == "Add" || op == "AddV2"; }

// A scalar Const (direct) whose value is v.
bool is_scalar_const(const Rewriter& r, Endpoint e, double v) {
  const Node& n = r.node(e.node);
  const ops::Tensor* t = const_value(n);
  return t != nullptr && e.port == 0 && t->rank() == 0 && all_elements_equal(*t, v);
}

bool single_use(const Rewriter& r, NodeId id) {
  if (r.kept(id)) return false;
  int uses = 0;
  for (const OutEdge& e : r.consumers(id)) {
    if (r.removed(e.dst)) continue;
    if (e.dst_input == kControlPort) return false;
    ++uses;
  }
  return uses == 1;
}

DType dtype_of(const Node& n) { return n.output_types.empty() ? DType::invalid : ops::base_dtype(n.output_types[0]); }

void to_identity(Rewriter& r, NodeId id, Endpoint x, const std::vector<Endpoint>& dropped, const std::string& why) {
  std::vector<NodeId> controls = deadness_controls(r, id, dropped);
  controls.erase(std::remove(controls.begin(), controls.end(), x.node), controls.end());
  r.rewrite(id, "Identity", {x}, std::move(controls), {{"T", dtype_of(r.node(id))}});
  r.record(id, "rewritten", why);
}

// -0.0 (x - (-0) is not x when x is -0).
bool negative_zero(const ops::Tensor& t) {
  if (t.dtype() == DType::float32) return std::signbit(t.data<float>()[0]);
  if (t.dtype() == DType::float64) return std::signbit(t.data<double>()[0]);
  return false;
}

// The other input of a binary node when input `i` is a scalar const v.
bool identity_rewrite(Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (n.inputs.size() == 1) {
    // Involutions: f(f(x)) -> x.
    if (n.op != "Neg" && n.op != "LogicalNot") return false;
    const Endpoint in = n.inputs[0];
    const Node& inner = r.node(in.node);
    if (inner.op != n.op || inner.inputs.size() != 1 || !inner.control_inputs.empty() || in.port != 0) return false;
    if (ops::is_ref(inner.input_types.empty() ? DType::invalid : inner.input_types[0])) return false;
    to_identity(r, id, inner.inputs[0], {in}, fmt::format("{}({}(x)) is x", n.op, n.op));
    return true;
  }
  if (n.inputs.size() != 2) return false;
  const DType t = dtype_of(n);
  const Endpoint a = n.inputs[0], b = n.inputs[1];
  const std::string& op = n.op;
  auto rewrite_to = [&](Endpoint x, Endpoint c, const std::string& why) {
    // The result must be x itself: same dtype (the const is a scalar, so
    // the shape is x's).
    if (r.node(x.node).output_types.size() <= static_cast<size_t>(x.port)) return false;
    if (ops::base_dtype(r.node(x.node).output_types[static_cast<size_t>(x.port)]) != t) return false;
    to_identity(r, id, x, {c}, why);
    return true;
  };
  if (op == "Mul") {
    if (is_scalar_const(r, b, 1)) return rewrite_to(a, b, "x * 1 is x");
    if (is_scalar_const(r, a, 1)) return rewrite_to(b, a, "1 * x is x");
  } else if (op == "RealDiv" || op == "Div" || op == "FloorDiv" || op == "TruncateDiv") {
    if (is_scalar_const(r, b, 1)) return rewrite_to(a, b, "x / 1 is x");
  } else if (op == "Sub") {
    if (is_scalar_const(r, b, 0) && !negative_zero(*const_value(r.node(b.node)))) return rewrite_to(a, b, "x - 0 is x");
  } else if (is_add(op) && exact_arithmetic(t)) {
    if (is_scalar_const(r, b, 0)) return rewrite_to(a, b, "x + 0 is x");
    if (is_scalar_const(r, a, 0)) return rewrite_to(b, a, "0 + x is x");
  } else if (op == "LogicalAnd") {
    if (is_scalar_const(r, b, 1)) return rewrite_to(a, b, "x and true is x");
    if (is_scalar_const(r, a, 1)) return rewrite_to(b, a, "true and x is x");
  } else if (op == "LogicalOr") {
    if (is_scalar_const(r, b, 0)) return rewrite_to(a, b, "x or false is x");
    if (is_scalar_const(r, a, 0)) return rewrite_to(b, a, "false or x is x");
  }
  return false;
}

// LogicalNot(a < b) -> a >= b, for integer comparisons.
bool negated_comparison(Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (n.op != "LogicalNot" || n.inputs.size() != 1) return false;
  const Endpoint in = n.inputs[0];
  const Node& cmp = r.node(in.node);
  static const std::vector<std::pair<std::string, std::string>> kInverse = {
      {"Less", "GreaterEqual"}, {"GreaterEqual", "Less"}, {"Greater", "LessEqual"},
      {"LessEqual", "Greater"}, {"Equal", "NotEqual"},    {"NotEqual", "Equal"}};
  auto it = std::find_if(kInverse.begin(), kInverse.end(), [&](const auto& p) { return p.first == cmp.op; });
  if (it == kInverse.end() || !single_use(r, in.node) || !cmp.control_inputs.empty()) return false;
  if (cmp.input_types.empty() || !exact_arithmetic(cmp.input_types[0])) return false;
  ops::AttrMap attrs = cmp.attrs;
  std::vector<Endpoint> inputs(cmp.inputs.begin(), cmp.inputs.end());
  std::vector<NodeId> controls = n.control_inputs;
  const std::string from = cmp.op;
  r.rewrite(id, it->second, std::move(inputs), std::move(controls), std::move(attrs));
  r.record(id, "rewritten", fmt::format("not {} is {}", from, it->second));
  return true;
}

// (x + c1) + c2 -> x + (c1 + c2), integer scalars; the inner Add becomes
// the scalar sum.
bool scalars_first(Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (!is_add(n.op) || n.inputs.size() != 2 || !exact_arithmetic(dtype_of(n))) return false;
  for (int side = 0; side < 2; ++side) {
    const Endpoint inner_e = n.inputs[static_cast<size_t>(side)];
    const Endpoint c2 = n.inputs[static_cast<size_t>(1 - side)];
    const Node& inner = r.node(inner_e.node);
    if (!is_add(inner.op) || !single_use(r, inner_e.node) || !inner.control_inputs.empty()) continue;
    const Node& c2n = r.node(c2.node);
    const ops::Tensor* c2v = const_value(c2n);
    if (c2v == nullptr || c2v->rank() != 0) continue;
    for (int k = 0; k < 2; ++k) {
      const Endpoint c1 = inner.inputs[static_cast<size_t>(k)];
      const Endpoint x = inner.inputs[static_cast<size_t>(1 - k)];
      const ops::Tensor* c1v = const_value(r.node(c1.node));
      if (c1v == nullptr || c1v->rank() != 0 || const_value(r.node(x.node)) != nullptr) continue;
      // c1 + c2 must be computed in the frame of the sum.
      if (r.frame_of(c2.node) != r.frame_of(id) || r.frame_of(c1.node) != r.frame_of(id)) continue;
      // inner := c1 + c2 (scalars, folded later), n := x + inner.
      const NodeId inner_id = inner_e.node;
      const std::string op = inner.op;
      ops::AttrMap attrs = inner.attrs;
      r.rewrite(inner_id, op, {c1, c2}, {}, attrs);
      ops::AttrMap outer = r.node(id).attrs;
      std::vector<NodeId> controls = r.node(id).control_inputs;
      r.rewrite(id, r.node(id).op, {x, {inner_id, 0}}, std::move(controls), std::move(outer));
      r.record(id, "rewritten", "scalars added before the broadcast");
      return true;
    }
  }
  return false;
}

// a*b + a*c -> a * (b + c), integers: the Add becomes the Mul, the first
// Mul the sum.
bool factor(Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (!is_add(n.op) || n.inputs.size() != 2 || !exact_arithmetic(dtype_of(n))) return false;
  const Endpoint l = n.inputs[0], rr = n.inputs[1];
  if (l.node == rr.node) return false;
  const Node& ln = r.node(l.node);
  const Node& rn = r.node(rr.node);
  if (ln.op != "Mul" || rn.op != "Mul" || !single_use(r, l.node) || !single_use(r, rr.node) ||
      !ln.control_inputs.empty() || !rn.control_inputs.empty())
    return false;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      if (ln.inputs[static_cast<size_t>(i)] != rn.inputs[static_cast<size_t>(j)]) continue;
      const Endpoint a = ln.inputs[static_cast<size_t>(i)];
      const Endpoint b = ln.inputs[static_cast<size_t>(1 - i)];
      const Endpoint c = rn.inputs[static_cast<size_t>(1 - j)];
      const NodeId sum = l.node, dropped = rr.node;
      ops::AttrMap add_attrs = n.attrs;
      const std::string add_op = n.op;
      ops::AttrMap mul_attrs = ln.attrs;
      r.rewrite(sum, add_op, {b, c}, {}, add_attrs);
      std::vector<NodeId> controls = r.node(id).control_inputs;
      r.rewrite(id, "Mul", {a, {sum, 0}}, std::move(controls), std::move(mul_attrs));
      r.remove(dropped);
      r.record(id, "rewritten", "a*b + a*c is a*(b + c)");
      return true;
    }
  return false;
}

bool known_and_equal(const ops::PartialShape& a, const ops::PartialShape& b) {
  return shape::fully_known(a) && shape::fully_known(b) && a.dims == b.dims;
}

// Add(Add(x, y), z) -> AddN(x, y, z), and AddN(...) + z -> AddN(..., z):
// AddN sums its inputs in order, element by element, as the chain did, so
// the value is the same bitwise in every dtype; it needs every input of
// one shape (no broadcasting), which static shapes must show.
bool add_chain(Rewriter& r, NodeId id, const ShapeMap* shapes) {
  const Node& n = r.node(id);
  if (shapes == nullptr || !is_add(n.op) || n.inputs.size() != 2) return false;
  const DType t = dtype_of(n);
  if (t != DType::float32 && t != DType::float64 && t != DType::int32 && t != DType::int64) return false;
  const Endpoint left = n.inputs[0], right = n.inputs[1];
  const Node& inner = r.node(left.node);
  if (!(is_add(inner.op) || inner.op == "AddN") || left.port != 0 || !inner.control_inputs.empty() ||
      !single_use(r, left.node))
    return false;
  auto shape_of = [&](Endpoint e) -> const ops::PartialShape* {
    if (static_cast<size_t>(e.node) >= shapes->nodes.size()) return nullptr;
    const auto& outs = shapes->nodes[static_cast<size_t>(e.node)];
    return static_cast<size_t>(e.port) < outs.size() ? &outs[static_cast<size_t>(e.port)].shape : nullptr;
  };
  const ops::PartialShape* out = shape_of({id, 0});
  if (out == nullptr) return false;
  std::vector<Endpoint> inputs(inner.inputs.begin(), inner.inputs.end());
  inputs.push_back(right);
  for (const Endpoint& e : inputs) {
    const ops::PartialShape* s = shape_of(e);
    if (s == nullptr || !known_and_equal(*s, *out)) return false;
  }
  const NodeId dropped = left.node;
  std::vector<NodeId> controls = n.control_inputs;
  const int64_t count = static_cast<int64_t>(inputs.size());
  r.rewrite(id, "AddN", std::move(inputs), std::move(controls), {{"N", count}, {"T", t}});
  r.remove(dropped);
  r.record(id, "rewritten", fmt::format("a chain of Adds is AddN of {}", count));
  return true;
}

}  // namespace

Expected<Graph> simplify_arithmetic(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) -> Expected<Graph> {
    TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(current, o, "arithmetic"));
    // Static shapes, for chains of Adds (inferred only when there is one).
    std::optional<ShapeMap> shapes;
    for (const Node& n : current.nodes()) {
      if (!is_add(n.op) || n.inputs.empty()) continue;
      const Node& in = current.node(n.inputs[0].node);
      if (!is_add(in.op) && in.op != "AddN") continue;
      auto inferred = infer_shapes(current);
      if (inferred.ok()) shapes = std::move(inferred).value();
      break;
    }
    for (NodeId id : analysis::topological_order(current)) {
      if (r.removed(id)) continue;
      const Node& n = r.node(id);
      if (n.def == nullptr || node_role(n) != ops::OpRole::ordinary) continue;
      if (identity_rewrite(r, id) || negated_comparison(r, id) || scalars_first(r, id) || factor(r, id)) continue;
      add_chain(r, id, shapes ? &*shapes : nullptr);
    }
    *changes = r.num_changes();
    if (*changes == 0) return current;
    return r.finish();
  });
}

}  // namespace tagflow::graph::optimize
