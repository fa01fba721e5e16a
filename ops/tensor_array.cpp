#include "ops/tensor_array.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <set>

#include "ops/index_args.hpp"
#include "ops/resource.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// The shape when every dimension is known.
std::optional<Shape> known_shape(const PartialShape& p) {
  if (p.unknown_rank) return std::nullopt;
  for (int64_t d : p.dims)
    if (d < 0) return std::nullopt;
  Expected<Shape> s = Shape::make(p.dims);
  if (!s.ok()) return std::nullopt;
  return *s;
}

// `shape` with `first` put in front: the shape of a gather or concat.
Expected<Shape> prepend(int64_t first, const Shape& shape) {
  std::vector<int64_t> dims = shape.dims();
  dims.insert(dims.begin(), first);
  return Shape::make(dims);
}

// `shape` without its dimension 0.
Shape drop_first(const Shape& shape) {
  std::vector<int64_t> dims = shape.dims();
  dims.erase(dims.begin());
  return Shape::make(dims).value();
}

}  // namespace

bool fits_partial_shape(const PartialShape& declared, const Shape& shape) {
  if (declared.unknown_rank) return true;
  if (static_cast<int>(declared.dims.size()) != shape.rank()) return false;
  for (int i = 0; i < shape.rank(); ++i)
    if (declared.dims[i] >= 0 && declared.dims[i] != shape.dim(i)) return false;
  return true;
}

TensorArray::TensorArray(std::string name, uint64_t step_id, const Options& options)
    : name_(std::move(name)), step_id_(step_id), options_(options),
      elements_(static_cast<size_t>(options.size)) {}

std::string TensorArray::where(int64_t index) const {
  return "TensorArray '" + name_ + "' index " + std::to_string(index);
}

Status TensorArray::check_open() const {
  if (!closed_) return ok_status();
  return Status(Error::failed_precondition, "TensorArray '" + name_ + "' has been closed");
}

Status TensorArray::check_dtype(const Tensor& value) const {
  if (value.valid() && value.dtype() == options_.dtype) return ok_status();
  return Status(Error::invalid_argument,
                "cannot write a " + (value.valid() ? dtype_name(value.dtype()) : "missing") +
                    " value to TensorArray '" + name_ + "' of " + dtype_name(options_.dtype));
}

Status TensorArray::check_write(int64_t index, const Shape& shape) const {
  const int64_t size = static_cast<int64_t>(elements_.size());
  if (index < 0)
    return Status(Error::out_of_range, "cannot write " + where(index) + ": it is negative");
  if (index >= size && !options_.dynamic_size)
    return Status(Error::out_of_range, "cannot write " + where(index) + ": the array has size " +
                                           std::to_string(size) + " and is not dynamic_size");
  if (index >= kMaxTensorArraySize)
    return Status(Error::out_of_range, "cannot write " + where(index) +
                                           ": beyond the TensorArray size limit of " +
                                           std::to_string(kMaxTensorArraySize));
  if (index < size) {
    const Element& e = elements_[static_cast<size_t>(index)];
    if (e.read)
      return Status(Error::invalid_argument,
                    "cannot write " + where(index) + ": it has already been read");
    if (e.written && !options_.multiple_writes_aggregate)
      return Status(Error::invalid_argument,
                    "cannot write " + where(index) + " twice: it has already been written");
    if (e.written && shape != e.shape)
      return Status(Error::invalid_argument, "cannot add a value of shape " + shape.to_string() +
                                                 " to " + where(index) + ", which has shape " +
                                                 e.shape.to_string());
  }
  if (!fits_partial_shape(options_.element_shape, shape))
    return Status(Error::invalid_argument, "cannot write a value of shape " + shape.to_string() +
                                               " to " + where(index) + ": elements have shape " +
                                               options_.element_shape.to_string());
  return ok_status();
}

Status TensorArray::check_read(int64_t index) const {
  const int64_t size = static_cast<int64_t>(elements_.size());
  if (index < 0 || index >= size)
    return Status(Error::out_of_range,
                  "cannot read " + where(index) + ": the array has size " + std::to_string(size));
  const Element& e = elements_[static_cast<size_t>(index)];
  if (!e.written)
    return Status(Error::failed_precondition,
                  "cannot read " + where(index) + ": it has not been written");
  if (e.cleared)
    return Status(Error::failed_precondition,
                  "cannot read " + where(index) +
                      " again: an earlier read cleared it (clear_after_read)");
  return ok_status();
}

Status TensorArray::grow_to(int64_t size) {
  if (size <= static_cast<int64_t>(elements_.size())) return ok_status();
  try {
    elements_.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return Status(Error::resource_exhausted, "out of memory growing TensorArray '" + name_ +
                                                 "' to " + std::to_string(size) + " elements");
  }
  return ok_status();
}

Status TensorArray::store(int64_t index, const Tensor& value) {
  TF_RETURN_IF_ERROR(grow_to(index + 1));
  Element& e = elements_[static_cast<size_t>(index)];
  if (e.written) {  // an aggregating array (check_write let it through)
    if (!e.value.valid()) {
      e.value = value;  // replaces a virtual zero
      return ok_status();
    }
    Status s = accumulate(e.value, value, false);
    return s.ok() ? s : s.with_prefix(where(index) + ": ");
  }
  e.value = value;
  e.shape = value.shape();
  e.written = true;
  if (options_.identical_element_shapes && !known_shape(options_.element_shape))
    options_.element_shape = PartialShape{false, value.shape().dims()};
  return ok_status();
}

Expected<Tensor> TensorArray::load(int64_t index) {
  Element& e = elements_[static_cast<size_t>(index)];
  Tensor out = e.value;
  if (!out.valid()) {  // a virtual zero of a gradient array
    TF_ASSIGN_OR_RETURN(out, allocate_tensor(options_.dtype, e.shape));
  }
  if (options_.clear_after_read) {
    e.value = Tensor();
    e.cleared = true;
  }
  e.read = true;
  return out;
}

Status TensorArray::write(int64_t index, const Tensor& value) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  TF_RETURN_IF_ERROR(check_dtype(value));
  TF_RETURN_IF_ERROR(check_write(index, value.shape()));
  return store(index, value);
}

Expected<Tensor> TensorArray::read(int64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  TF_RETURN_IF_ERROR(check_read(index));
  return load(index);
}

Status TensorArray::check_reads(const std::vector<int64_t>& indices, const char* op) const {
  std::set<int64_t> seen;
  for (size_t i = 0; i < indices.size(); ++i) {
    TF_RETURN_IF_ERROR(check_read(indices[i]));
    if (options_.clear_after_read && !seen.insert(indices[i]).second)
      return Status(Error::failed_precondition,
                    std::string("cannot ") + op + " " + where(indices[i]) +
                        " twice: clear_after_read is set");
    const Shape& first = elements_[static_cast<size_t>(indices[0])].shape;
    const Shape& shape = elements_[static_cast<size_t>(indices[i])].shape;
    if (shape != first)
      return Status(Error::invalid_argument,
                    std::string("cannot ") + op + " TensorArray '" + name_ + "': index " +
                        std::to_string(indices[i]) + " has shape " + shape.to_string() +
                        " but index " + std::to_string(indices[0]) + " has shape " +
                        first.to_string());
  }
  return ok_status();
}

Expected<Tensor> TensorArray::gather(const std::vector<int64_t>& indices,
                                     const PartialShape& element_shape) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  TF_RETURN_IF_ERROR(check_reads(indices, "gather"));
  std::optional<Shape> elem;
  if (!indices.empty()) elem = elements_[static_cast<size_t>(indices[0])].shape;
  if (!elem) elem = known_shape(element_shape);
  if (!elem) elem = known_shape(options_.element_shape);
  if (!elem)
    return Status(Error::invalid_argument, "cannot gather zero elements of TensorArray '" +
                                               name_ + "': the element shape is not known");
  TF_ASSIGN_OR_RETURN(Shape shape, prepend(static_cast<int64_t>(indices.size()), *elem));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(options_.dtype, shape));
  const int64_t n = elem->num_elements();
  for (size_t i = 0; i < indices.size(); ++i) {
    TF_ASSIGN_OR_RETURN(Tensor e, load(indices[i]));
    copy_elements(e, 0, out, static_cast<int64_t>(i) * n, n);
  }
  return out;
}

Status TensorArray::scatter(const std::vector<int64_t>& indices, const Tensor& value) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  TF_RETURN_IF_ERROR(check_dtype(value));
  if (value.rank() == 0 || value.dim(0) != static_cast<int64_t>(indices.size()))
    return Status(Error::invalid_argument,
                  "cannot scatter a value of shape " + value.shape().to_string() +
                      " into TensorArray '" + name_ + "' at " +
                      std::to_string(indices.size()) +
                      " indices: its dimension 0 must be the number of indices");
  const Shape elem = drop_first(value.shape());
  std::set<int64_t> seen;
  for (int64_t index : indices) {
    TF_RETURN_IF_ERROR(check_write(index, elem));
    if (!options_.multiple_writes_aggregate && !seen.insert(index).second)
      return Status(Error::invalid_argument,
                    "cannot scatter to " + where(index) + " twice in one scatter");
  }
  int64_t top = 0;
  for (int64_t index : indices) top = std::max(top, index + 1);
  TF_RETURN_IF_ERROR(grow_to(top));
  const int64_t n = elem.num_elements();
  for (size_t i = 0; i < indices.size(); ++i) {
    TF_ASSIGN_OR_RETURN(Tensor piece, allocate_tensor(options_.dtype, elem));
    copy_elements(value, static_cast<int64_t>(i) * n, piece, 0, n);
    TF_RETURN_IF_ERROR(store(indices[i], piece));
  }
  return ok_status();
}

Expected<std::pair<Tensor, Tensor>> TensorArray::concat(const PartialShape& element_shape_except0) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  const int64_t size = static_cast<int64_t>(elements_.size());
  std::optional<Shape> rest;
  int64_t rows = 0;
  for (int64_t i = 0; i < size; ++i) {
    TF_RETURN_IF_ERROR(check_read(i));
    const Shape& shape = elements_[static_cast<size_t>(i)].shape;
    if (shape.rank() == 0)
      return Status(Error::invalid_argument,
                    "cannot concat TensorArray '" + name_ + "': index " + std::to_string(i) +
                        " is a scalar (elements need a dimension 0 to concat along)");
    Shape mine = drop_first(shape);
    if (rest && mine != *rest)
      return Status(Error::invalid_argument,
                    "cannot concat TensorArray '" + name_ + "': index " + std::to_string(i) +
                        " has shape " + shape.to_string() + ", which differs from index 0 (" +
                        elements_[0].shape.to_string() + ") beyond dimension 0");
    rest = mine;
    rows += shape.dim(0);
  }
  if (!rest) rest = known_shape(element_shape_except0);
  if (!rest && !options_.element_shape.unknown_rank && !options_.element_shape.dims.empty()) {
    PartialShape tail = options_.element_shape;
    tail.dims.erase(tail.dims.begin());
    rest = known_shape(tail);
  }
  if (!rest)
    return Status(Error::invalid_argument, "cannot concat the empty TensorArray '" + name_ +
                                               "': the element shape is not known");
  TF_ASSIGN_OR_RETURN(Shape shape, prepend(rows, *rest));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(options_.dtype, shape));
  Tensor lengths(DType::int64, Shape{size});
  int64_t offset = 0;
  for (int64_t i = 0; i < size; ++i) {
    TF_ASSIGN_OR_RETURN(Tensor e, load(i));
    lengths.mutable_data<int64_t>()[i] = e.dim(0);
    copy_elements(e, 0, out, offset, e.num_elements());
    offset += e.num_elements();
  }
  return std::make_pair(std::move(out), std::move(lengths));
}

Status TensorArray::split(const Tensor& value, const std::vector<int64_t>& lengths) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  TF_RETURN_IF_ERROR(check_dtype(value));
  const std::string what = "cannot split a value of shape " + value.shape().to_string() +
                           " into TensorArray '" + name_ + "' with lengths " +
                           ints_to_string(lengths);
  if (value.rank() == 0)
    return Status(Error::invalid_argument, what + ": the value needs a dimension 0");
  int64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 0) return Status(Error::invalid_argument, what + ": a length is negative");
    if (len > value.dim(0) - total)
      return Status(Error::invalid_argument,
                    what + ": they sum to more than " + std::to_string(value.dim(0)));
    total += len;
  }
  if (total != value.dim(0))
    return Status(Error::invalid_argument, what + ": they sum to " + std::to_string(total) +
                                               ", not " + std::to_string(value.dim(0)));
  const int64_t n = static_cast<int64_t>(lengths.size());
  const int64_t size = static_cast<int64_t>(elements_.size());
  if (n != size && !(options_.dynamic_size && n > size))
    return Status(Error::invalid_argument, what + ": the array has size " +
                                               std::to_string(size) + ", not " +
                                               std::to_string(n));
  const Shape rest = drop_first(value.shape());
  for (int64_t i = 0; i < n; ++i) {
    TF_ASSIGN_OR_RETURN(Shape shape, prepend(lengths[static_cast<size_t>(i)], rest));
    TF_RETURN_IF_ERROR(check_write(i, shape));
    if (options_.identical_element_shapes && lengths[static_cast<size_t>(i)] != lengths[0])
      return Status(Error::invalid_argument,
                    what + ": identical_element_shapes needs equal lengths");
  }
  TF_RETURN_IF_ERROR(grow_to(n));
  const int64_t row_elements = rest.num_elements();
  int64_t row = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = lengths[static_cast<size_t>(i)];
    TF_ASSIGN_OR_RETURN(Tensor piece, allocate_tensor(options_.dtype, prepend(len, rest).value()));
    copy_elements(value, row * row_elements, piece, 0, len * row_elements);
    TF_RETURN_IF_ERROR(store(i, piece));
    row += len;
  }
  return ok_status();
}

Expected<int64_t> TensorArray::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  return static_cast<int64_t>(elements_.size());
}

void TensorArray::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  elements_ = {};
}

Expected<TensorArray::Options> TensorArray::grad_options() const {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(check_open());
  Options o = options_;
  o.size = static_cast<int64_t>(elements_.size());
  o.dynamic_size = false;
  o.clear_after_read = true;
  o.multiple_writes_aggregate = true;
  return o;
}

Status TensorArray::prepare_gradient(TensorArray& grad) {
  std::scoped_lock lock(mu_, grad.mu_);
  TF_RETURN_IF_ERROR(check_open());
  // The forward array must not grow once its gradient exists.
  options_.dynamic_size = false;
  const size_t n = std::min(elements_.size(), grad.elements_.size());
  for (size_t i = 0; i < n; ++i) {
    if (!elements_[i].written) continue;
    grad.elements_[i].written = true;
    grad.elements_[i].shape = elements_[i].shape;
  }
  return ok_status();
}

}  // namespace tagflow::ops
