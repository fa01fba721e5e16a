// GraphBuilder's named wrappers of common ops and the Output operators.
#include "graph/builder/builder.hpp"

namespace tagflow::graph {
inline namespace builder {

namespace {

template <class T>
ops::Tensor scalar_tensor(double v) {
  return ops::Tensor::scalar<T>(static_cast<T>(v));
}

}  // namespace

Output GraphBuilder::constant(const ops::Tensor& value, const NodeOptions& options) {
  if (ok() && !value.valid()) {
    fail(Error::invalid_argument, "constant: the value tensor is empty (dtype invalid)");
    return {};
  }
  return op1("Const", {}, {{"dtype", value.dtype()}, {"value", value}}, options);
}

Output GraphBuilder::scalar_of(DType dtype, double value, const NodeOptions& options) {
  ops::Tensor t;
  switch (dtype) {
    case DType::float32: t = scalar_tensor<float>(value); break;
    case DType::float64: t = scalar_tensor<double>(value); break;
    case DType::int32: t = scalar_tensor<int32_t>(value); break;
    case DType::int64: t = scalar_tensor<int64_t>(value); break;
    case DType::int16: t = scalar_tensor<int16_t>(value); break;
    case DType::int8: t = scalar_tensor<int8_t>(value); break;
    case DType::uint8: t = scalar_tensor<uint8_t>(value); break;
    case DType::boolean: t = ops::Tensor::scalar(value != 0); break;
    default:
      if (ok())
        fail(Error::invalid_argument,
             "scalar_of: no scalar of " + ops::dtype_name(dtype) + " from a number");
      return {};
  }
  return constant(t, options);
}

Output GraphBuilder::placeholder(DType dtype, const ops::PartialShape& shape,
                                 const NodeOptions& options) {
  return op1("Placeholder", {}, {{"dtype", dtype}, {"shape", shape}}, options);
}

Output GraphBuilder::identity(Output x, const NodeOptions& o) { return op1("Identity", {x}, {}, o); }
Output GraphBuilder::add(Output a, Output b, const NodeOptions& o) { return op1("AddV2", {a, b}, {}, o); }
Output GraphBuilder::sub(Output a, Output b, const NodeOptions& o) { return op1("Sub", {a, b}, {}, o); }
Output GraphBuilder::mul(Output a, Output b, const NodeOptions& o) { return op1("Mul", {a, b}, {}, o); }
Output GraphBuilder::div(Output a, Output b, const NodeOptions& o) {
  const bool integer = ops::dtype_is_integer(ops::base_dtype(a.dtype));
  return op1(integer ? "FloorDiv" : "RealDiv", {a, b}, {}, o);
}
Output GraphBuilder::floor_mod(Output a, Output b, const NodeOptions& o) { return op1("FloorMod", {a, b}, {}, o); }
Output GraphBuilder::maximum(Output a, Output b, const NodeOptions& o) { return op1("Maximum", {a, b}, {}, o); }
Output GraphBuilder::minimum(Output a, Output b, const NodeOptions& o) { return op1("Minimum", {a, b}, {}, o); }
Output GraphBuilder::pow(Output a, Output b, const NodeOptions& o) { return op1("Pow", {a, b}, {}, o); }
Output GraphBuilder::neg(Output x, const NodeOptions& o) { return op1("Neg", {x}, {}, o); }
Output GraphBuilder::abs(Output x, const NodeOptions& o) { return op1("Abs", {x}, {}, o); }
Output GraphBuilder::square(Output x, const NodeOptions& o) { return op1("Square", {x}, {}, o); }
Output GraphBuilder::sqrt(Output x, const NodeOptions& o) { return op1("Sqrt", {x}, {}, o); }
Output GraphBuilder::less(Output a, Output b, const NodeOptions& o) { return op1("Less", {a, b}, {}, o); }
Output GraphBuilder::less_equal(Output a, Output b, const NodeOptions& o) { return op1("LessEqual", {a, b}, {}, o); }
Output GraphBuilder::greater(Output a, Output b, const NodeOptions& o) { return op1("Greater", {a, b}, {}, o); }
Output GraphBuilder::greater_equal(Output a, Output b, const NodeOptions& o) { return op1("GreaterEqual", {a, b}, {}, o); }
Output GraphBuilder::equal(Output a, Output b, const NodeOptions& o) { return op1("Equal", {a, b}, {}, o); }
Output GraphBuilder::not_equal(Output a, Output b, const NodeOptions& o) { return op1("NotEqual", {a, b}, {}, o); }
Output GraphBuilder::logical_and(Output a, Output b, const NodeOptions& o) { return op1("LogicalAnd", {a, b}, {}, o); }
Output GraphBuilder::logical_or(Output a, Output b, const NodeOptions& o) { return op1("LogicalOr", {a, b}, {}, o); }
Output GraphBuilder::logical_not(Output x, const NodeOptions& o) { return op1("LogicalNot", {x}, {}, o); }

Output GraphBuilder::matmul(Output a, Output b, bool transpose_a, bool transpose_b,
                            const NodeOptions& o) {
  return op1("MatMul", {a, b}, {{"transpose_a", transpose_a}, {"transpose_b", transpose_b}}, o);
}

Output GraphBuilder::cast(Output x, DType to, const NodeOptions& o) {
  return op1("Cast", {x}, {{"DstT", to}}, o);
}

Output GraphBuilder::reduce_sum(Output x, Output axes, bool keep_dims, const NodeOptions& o) {
  return op1("Sum", {x, axes}, {{"keep_dims", keep_dims}}, o);
}
Output GraphBuilder::reduce_mean(Output x, Output axes, bool keep_dims, const NodeOptions& o) {
  return op1("Mean", {x, axes}, {{"keep_dims", keep_dims}}, o);
}
Output GraphBuilder::reduce_max(Output x, Output axes, bool keep_dims, const NodeOptions& o) {
  return op1("Max", {x, axes}, {{"keep_dims", keep_dims}}, o);
}

Output GraphBuilder::concat(const std::vector<Output>& values, Output axis, const NodeOptions& o) {
  std::vector<Output> in = values;
  in.push_back(axis);
  return op1("ConcatV2", in, {{"N", static_cast<int64_t>(values.size())}}, o);
}

Output GraphBuilder::stack(const std::vector<Output>& values, int64_t axis, const NodeOptions& o) {
  return op1("Pack", values, {{"axis", axis}}, o);
}

Output GraphBuilder::reshape(Output x, Output shape, const NodeOptions& o) {
  return op1("Reshape", {x, shape}, {}, o);
}
Output GraphBuilder::shape(Output x, const NodeOptions& o) { return op1("Shape", {x}, {}, o); }
Output GraphBuilder::fill(Output dims, Output value, const NodeOptions& o) {
  return op1("Fill", {dims, value}, {}, o);
}
Output GraphBuilder::range(Output start, Output limit, Output delta, const NodeOptions& o) {
  return op1("Range", {start, limit, delta}, {}, o);
}
Output GraphBuilder::select(Output pred, Output a, Output b, const NodeOptions& o) {
  return op1("SelectV2", {pred, a, b}, {}, o);
}
Output GraphBuilder::gather(Output params, Output indices, Output axis, const NodeOptions& o) {
  return op1("GatherV2", {params, indices, axis}, {}, o);
}
Output GraphBuilder::zeros_like(Output x, const NodeOptions& o) { return op1("ZerosLike", {x}, {}, o); }

Output GraphBuilder::group(const std::vector<Output>& deps, const NodeOptions& options) {
  NodeOptions o = options;
  o.control_inputs.insert(o.control_inputs.end(), deps.begin(), deps.end());
  return op("NoOp", {}, {}, o).control();
}

// --- operators ------------------------------------------------------------------

namespace {

GraphBuilder* builder_of(const Output& a, const Output& b) {
  return a.builder != nullptr ? a.builder : b.builder;
}

Output number_like(const Output& x, double v) {
  if (x.builder == nullptr) return {};
  return x.builder->scalar_of(ops::base_dtype(x.dtype), v);
}

}  // namespace

#define TAGFLOW_BINARY_OPERATOR(sym, method)                                  \
  Output operator sym(Output a, Output b) {                                 \
    GraphBuilder* g = builder_of(a, b);                                     \
    return g != nullptr ? g->method(a, b) : Output{};                      \
  }                                                                         \
  Output operator sym(Output a, double b) { return a sym number_like(a, b); }

TAGFLOW_BINARY_OPERATOR(+, add)
TAGFLOW_BINARY_OPERATOR(-, sub)
TAGFLOW_BINARY_OPERATOR(*, mul)
TAGFLOW_BINARY_OPERATOR(/, div)
TAGFLOW_BINARY_OPERATOR(<, less)
TAGFLOW_BINARY_OPERATOR(>, greater)
TAGFLOW_BINARY_OPERATOR(<=, less_equal)
TAGFLOW_BINARY_OPERATOR(>=, greater_equal)
#undef TAGFLOW_BINARY_OPERATOR

Output operator-(Output x) { return x.builder != nullptr ? x.builder->neg(x) : Output{}; }
Output operator+(double a, Output b) { return number_like(b, a) + b; }
Output operator-(double a, Output b) { return number_like(b, a) - b; }
Output operator*(double a, Output b) { return number_like(b, a) * b; }

}  // namespace builder
}  // namespace tagflow::graph
