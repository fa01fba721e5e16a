// Shape functions of the math ops: elementwise unary and binary ops (NumPy
// broadcasting), their gradients, reductions, MatMul and BatchMatMul,
// Select, ArgMax/ArgMin, Range and LinSpace, with the integer arithmetic
// on known values that shape computations use.
#include <algorithm>

#include "ops/shape_fns.hpp"

namespace tagflow::ops::shape_fns {


Status unary(InferenceContext& c) {
  c.set_output(0, c.input_shape(0));
  return ok_status();
}

// The integer result of a binary op on known values, when both are
// scalars or vectors of one length (or one is a scalar).
static std::optional<std::vector<int64_t>> fold(std::string_view op, const std::vector<int64_t>& x,
                                                const std::vector<int64_t>& y) {
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return std::nullopt;
  const size_t n = std::max(x.size(), y.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = x[x.size() == 1 ? 0 : i];
    const int64_t b = y[y.size() == 1 ? 0 : i];
    if (op == "Add" || op == "AddV2") out[i] = a + b;
    else if (op == "Sub") out[i] = a - b;
    else if (op == "Mul") out[i] = a * b;
    else if (op == "Maximum") out[i] = std::max(a, b);
    else if (op == "Minimum") out[i] = std::min(a, b);
    else if (op == "FloorDiv") {
      if (b == 0) return std::nullopt;
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      out[i] = q;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// x op y with broadcasting; an error when known dimensions cannot
// broadcast (except for comparisons told not to fail).
Status binary(InferenceContext& c) {
  const PartialShape& a = c.input_shape(0);
  const PartialShape& b = c.input_shape(1);
  auto out = shape::broadcast(a, b);
  if (!out) {
    if (!c.bool_attr("incompatible_shape_error", true)) return ok_status();  // a scalar false at run time
    return c.error("shapes cannot broadcast: " + a.to_string() + " and " + b.to_string());
  }
  c.set_output(0, *out);
  auto x = c.input_ints(0);
  auto y = c.input_ints(1);
  if (x && y && !x->empty() && !y->empty() && out->dims.size() <= 1 && shape::fully_known(*out))
    if (auto v = fold(c.op(), *x, *y); v && static_cast<int64_t>(v->size()) == shape::num_elements(*out))
      c.set_value(0, shape::int_tensor(c.output(0).dtype, *v, *Shape::make(out->dims)));
  return ok_status();
}

// Two inputs of one shape (the gradients of elementwise ops): the more
// specific of the two, no error (the kernel reports a mismatch).
Status same_shape_pair(InferenceContext& c) {
  auto m = shape::merge(c.input_shape(0), c.input_shape(1));
  c.set_output(0, m ? *m : c.input_shape(0));
  return ok_status();
}

Status add_n(InferenceContext& c) {
  PartialShape s;
  TF_RETURN_IF_ERROR(c.merged_inputs(&s));
  c.set_output(0, s);
  return ok_status();
}

// Sum, Mean, Max, Min, Prod, All, Any: the reduced axes removed (kept as
// 1 with keep_dims); unknown axes keep the rank with keep_dims only.
Status reduction(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  const bool keep = c.bool_attr("keep_dims", false);
  auto axes = c.input_ints(1);
  if (in.unknown_rank || !axes) {
    if (keep && !in.unknown_rank) c.set_output(0, shape::of_rank(shape::rank(in)));
    else if (!in.unknown_rank && in.dims.empty()) c.set_output(0, shape::scalar());
    return ok_status();
  }
  const int r = shape::rank(in);
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : *axes) {
    if (a < -r || a >= r) return ok_status();  // the kernel says what is wrong
    reduced[static_cast<size_t>(a < 0 ? a + r : a)] = true;
  }
  PartialShape out = shape::scalar();
  for (int i = 0; i < r; ++i) {
    if (!reduced[static_cast<size_t>(i)]) out.dims.push_back(in.dims[static_cast<size_t>(i)]);
    else if (keep) out.dims.push_back(1);
  }
  c.set_output(0, out);
  return ok_status();
}

Status matmul(InferenceContext& c) {
  const PartialShape& a = c.input_shape(0);
  const PartialShape& b = c.input_shape(1);
  const bool ta = c.bool_attr("transpose_a", false);
  const bool tb = c.bool_attr("transpose_b", false);
  if ((!a.unknown_rank && a.dims.size() != 2) || (!b.unknown_rank && b.dims.size() != 2))
    return c.error("inputs must be matrices: " + a.to_string() + " x " + b.to_string());
  const int64_t m = shape::dim(a, ta ? 1 : 0), ka = shape::dim(a, ta ? 0 : 1);
  const int64_t kb = shape::dim(b, tb ? 1 : 0), n = shape::dim(b, tb ? 0 : 1);
  if (!shape::dims_compatible(ka, kb))
    return c.error("inner dimensions differ: " + a.to_string() + " x " + b.to_string() +
                   (ta || tb ? std::string(" (transpose_a ") + (ta ? "true" : "false") + ", transpose_b " +
                                   (tb ? "true" : "false") + ")"
                             : std::string()));
  c.set_output(0, shape::known({m, n}));
  return ok_status();
}

// BatchMatMul (batch dimensions equal) and BatchMatMulV2 (broadcast).
Status batch_matmul(InferenceContext& c) {
  const PartialShape& a = c.input_shape(0);
  const PartialShape& b = c.input_shape(1);
  if (a.unknown_rank || b.unknown_rank) return ok_status();
  if (a.dims.size() < 2 || b.dims.size() < 2)
    return c.error("inputs must have rank 2 or more: " + a.to_string() + " x " + b.to_string());
  const bool ax = c.bool_attr("adj_x", false), ay = c.bool_attr("adj_y", false);
  const int64_t m = shape::dim(a, ax ? -1 : -2), ka = shape::dim(a, ax ? -2 : -1);
  const int64_t kb = shape::dim(b, ay ? -1 : -2), n = shape::dim(b, ay ? -2 : -1);
  if (!shape::dims_compatible(ka, kb))
    return c.error("inner dimensions differ: " + a.to_string() + " x " + b.to_string());
  const PartialShape ba = shape::sub(a, 0, shape::rank(a) - 2), bb = shape::sub(b, 0, shape::rank(b) - 2);
  std::optional<PartialShape> batch = c.op() == "BatchMatMul" ? shape::merge(ba, bb) : shape::broadcast(ba, bb);
  if (!batch)
    return c.error("batch dimensions do not agree: " + a.to_string() + " x " + b.to_string());
  batch->dims.push_back(m);
  batch->dims.push_back(n);
  c.set_output(0, *batch);
  return ok_status();
}

// Select: t and e of one shape; the condition of that shape or, for a
// vector, its first dimension. SelectV2 broadcasts all three.
Status select(InferenceContext& c) {
  if (c.op() == "SelectV2") {
    auto te = shape::broadcast(c.input_shape(1), c.input_shape(2));
    auto all = te ? shape::broadcast(c.input_shape(0), *te) : std::nullopt;
    if (!all)
      return c.error("shapes cannot broadcast: " + c.input_shape(0).to_string() + ", " +
                     c.input_shape(1).to_string() + " and " + c.input_shape(2).to_string());
    c.set_output(0, *all);
    return ok_status();
  }
  auto te = shape::merge(c.input_shape(1), c.input_shape(2));
  if (!te)
    return c.error("t and e must have one shape: " + c.input_shape(1).to_string() + " and " +
                   c.input_shape(2).to_string());
  c.set_output(0, *te);
  return ok_status();
}

// ArgMax/ArgMin: the input without the reduced axis.
Status arg_reduce(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto axis = c.input_ints(1);
  if (in.unknown_rank) return ok_status();
  const int r = shape::rank(in);
  if (!axis || axis->size() != 1 || (*axis)[0] < -r || (*axis)[0] >= r) {
    if (r > 0) c.set_output(0, shape::of_rank(r - 1));
    return ok_status();
  }
  const int64_t a = (*axis)[0] < 0 ? (*axis)[0] + r : (*axis)[0];
  PartialShape out = in;
  out.dims.erase(out.dims.begin() + a);
  c.set_output(0, out);
  return ok_status();
}

Status range(InferenceContext& c) {
  auto start = c.input_ints(0), limit = c.input_ints(1), delta = c.input_ints(2);
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1 &&
      (*delta)[0] != 0) {
    const int64_t s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
    const int64_t n = (d > 0 ? (l > s ? (l - s + d - 1) / d : 0) : (s > l ? (s - l - d - 1) / -d : 0));
    c.set_output(0, shape::vector(n));
    return ok_status();
  }
  c.set_output(0, shape::vector(-1));
  return ok_status();
}

Status lin_space(InferenceContext& c) {
  auto num = c.input_ints(2);
  c.set_output(0, shape::vector(num && num->size() == 1 ? (*num)[0] : -1));
  return ok_status();
}

Status cast(InferenceContext& c) {
  c.set_output(0, c.input_shape(0));
  auto v = c.input_ints(0);
  const DType to = c.output(0).dtype;
  if (v && (to == DType::int32 || to == DType::int64))
    c.set_value(0, shape::int_tensor(to, *v, c.input_value(0)->shape()));
  return ok_status();
}


}  // namespace tagflow::ops::shape_fns
