#include "ops/index_args.hpp"

#include <type_traits>

namespace tagflow::ops {

namespace {

template <class F>
bool dispatch_integer(DType t, F&& f) {
  switch (base_dtype(t)) {
    case DType::int32: f(int32_t{}); return true;
    case DType::int64: f(int64_t{}); return true;
    case DType::int16: f(int16_t{}); return true;
    case DType::int8: f(int8_t{}); return true;
    case DType::uint8: f(uint8_t{}); return true;
    case DType::uint16: f(uint16_t{}); return true;
    case DType::uint32: f(uint32_t{}); return true;
    case DType::uint64: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace

Expected<std::vector<int64_t>> read_int_values(const Tensor& t, const char* what) {
  if (!t.valid()) return Status(Error::invalid_argument, std::string(what) + " is missing");
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  bool ok = dispatch_integer(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
  });
  if (!ok)
    return Status(Error::invalid_argument, std::string(what) + " must be an integer tensor, got " +
                                               dtype_name(t.dtype()));
  return out;
}

Expected<std::vector<int64_t>> read_int_vector(const Tensor& t, const char* what) {
  if (t.valid() && t.rank() != 1)
    return Status(Error::invalid_argument, std::string(what) + " must be a vector, got shape " +
                                               t.shape().to_string());
  return read_int_values(t, what);
}

Expected<int64_t> read_int_scalar(const Tensor& t, const char* what) {
  if (t.valid() && t.num_elements() != 1)
    return Status(Error::invalid_argument, std::string(what) + " must be a scalar, got shape " +
                                               t.shape().to_string());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_int_values(t, what));
  return v[0];
}

Expected<int> canonical_axis(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank)
    return Status(Error::invalid_argument,
                  std::string(what) + " " + std::to_string(axis) +
                      " is out of range for a tensor of rank " + std::to_string(rank) +
                      " (must be in [" + std::to_string(-rank) + ", " + std::to_string(rank) +
                      "))");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Expected<Shape> shape_from_tensor(const Tensor& t, const char* what) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, read_int_vector(t, what));
  for (int64_t d : dims)
    if (d < 0)
      return Status(Error::invalid_argument, std::string(what) + " " + ints_to_string(dims) +
                                                 " has a negative dimension");
  Expected<Shape> s = Shape::make(dims);
  if (!s.ok()) return s.status().with_prefix(std::string(what) + ": ");
  return s;
}

Expected<std::vector<int64_t>> nd_slice_numbers(const Tensor& indices, const Shape& shape,
                                                const char* what, const char* shape_what) {
  if (!indices.valid() || indices.rank() < 1)
    return Status(Error::invalid_argument,
                  std::string(what) + " must have rank >= 1, got " +
                      (indices.valid() ? "shape " + indices.shape().to_string() : "no tensor"));
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth > shape.rank())
    return Status(Error::invalid_argument,
                  std::string(what) + " has tuples of length " + std::to_string(depth) +
                      ", more than the rank " + std::to_string(shape.rank()) + " of " +
                      shape_what + " " + shape.to_string());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> flat, read_int_values(indices, what));
  Shape prefix;  // the shape of the tuples: indices' without its last dimension
  for (int i = 0; i + 1 < indices.rank(); ++i) prefix.add_dim(indices.dim(i));
  const int64_t tuples = prefix.num_elements();
  std::vector<int64_t> numbers;
  numbers.reserve(static_cast<size_t>(tuples));
  // With depth 0 every tuple is empty and names the whole shape (number 0).
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t* tuple = flat.data() + t * depth;
    int64_t number = 0;
    for (int d = 0; d < depth; ++d) {
      if (tuple[d] < 0 || tuple[d] >= shape.dim(d)) {
        std::vector<int64_t> values(tuple, tuple + depth);
        return Status(Error::invalid_argument,
                      std::string(what) + (prefix.rank() > 0 ? element_index(prefix, t) : "") +
                          " = " + ints_to_string(values) + " does not index into " + shape_what +
                          " " + shape.to_string());
      }
      number = number * shape.dim(d) + tuple[d];
    }
    numbers.push_back(number);
  }
  return numbers;
}

std::string element_index(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()));
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[static_cast<size_t>(i)] = flat % shape.dim(i);
    flat /= shape.dim(i);
  }
  return ints_to_string(index);
}

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace tagflow::ops
