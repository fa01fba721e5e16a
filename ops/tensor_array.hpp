// TensorArray: the state behind the TensorArrayV3 ops — an array of tensors
// of one dtype, written once per index and read any number of times (or
// once, with clear_after_read), as TensorFlow's tensor_array.h defines it.
//
// Rules (each broken rule is an invalid_argument or out_of_range error that
// names the array and the index; nothing here aborts):
//   - an index is written at most once, unless the array aggregates writes
//     (gradient arrays), where later writes are summed into the first;
//   - an index that has been read cannot be written any more;
//   - reading an unwritten index is an error; reading a cleared one too;
//   - indices lie in [0, size); a write beyond size grows a dynamic_size
//     array;
//   - every element fits element_shape; with identical_element_shapes the
//     first write fixes the shape of every other element.
// Thread-safe: every method takes the array's own mutex. Made and found
// through ResourceManager (ops/resource.hpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// True if `shape` fits `declared`: unknown rank, or the same rank with
// every known dimension equal.
bool fits_partial_shape(const PartialShape& declared, const Shape& shape);

// The largest number of elements a TensorArray may hold.
inline constexpr int64_t kMaxTensorArraySize = int64_t{1} << 24;

class TensorArray {
 public:
  struct Options {
    DType dtype = DType::float32;
    int64_t size = 0;
    PartialShape element_shape{true, {}};
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    bool multiple_writes_aggregate = false;  // gradient arrays
  };

  // options.size must be in [0, kMaxTensorArraySize] (checked by the
  // ResourceManager).
  TensorArray(std::string name, uint64_t step_id, const Options& options);

  const std::string& name() const { return name_; }
  uint64_t step_id() const { return step_id_; }
  DType dtype() const { return options_.dtype; }

  Status write(int64_t index, const Tensor& value);
  Expected<Tensor> read(int64_t index);
  // The elements at `indices` stacked along a new dimension 0. With no
  // indices the element shape must be known: element_shape (if not
  // unknown-rank) or the array's own.
  Expected<Tensor> gather(const std::vector<int64_t>& indices, const PartialShape& element_shape);
  // Writes value[i] (a slice along dimension 0) to indices[i].
  Status scatter(const std::vector<int64_t>& indices, const Tensor& value);
  // Every element concatenated along dimension 0, and each one's length
  // there (an int64 vector). An empty array needs a known
  // element_shape_except0 (or the array's element shape) to shape its value.
  Expected<std::pair<Tensor, Tensor>> concat(const PartialShape& element_shape_except0);
  // Element i is the next lengths[i] rows of value.
  Status split(const Tensor& value, const std::vector<int64_t>& lengths);
  Expected<int64_t> size() const;
  // Frees the elements; every later call is an error.
  void close();

  // The options of this array's gradient array: same dtype and element
  // shape, the current size, fixed size, aggregating writes.
  Expected<Options> grad_options() const;
  // Makes every index written here a virtual zero of the same shape in
  // `grad` (a fresh array made with grad_options()), and stops this array
  // from growing.
  Status prepare_gradient(TensorArray& grad);

 private:
  struct Element {
    Tensor value;     // invalid for a virtual zero or a cleared element
    Shape shape;      // of the written value
    bool written = false;
    bool read = false;
    bool cleared = false;
  };

  // The checks run before anything changes, so a failed call leaves the
  // array as it was.
  Status check_open() const;
  Status check_dtype(const Tensor& value) const;
  Status check_write(int64_t index, const Shape& shape) const;
  Status check_read(int64_t index) const;
  // check_read for each index, no index twice when reads clear, and one
  // shape for all (`op` is "gather").
  Status check_reads(const std::vector<int64_t>& indices, const char* op) const;
  Status store(int64_t index, const Tensor& value);
  Expected<Tensor> load(int64_t index);
  Status grow_to(int64_t size);
  std::string where(int64_t index) const;  // "TensorArray 'ta#1@step1' index 3"

  const std::string name_;
  const uint64_t step_id_;
  mutable std::mutex mu_;
  Options options_;  // element_shape refines with identical_element_shapes
  std::vector<Element> elements_;
  bool closed_ = false;
};

}  // namespace tagflow::ops
