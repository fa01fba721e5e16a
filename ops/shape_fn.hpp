// What an op's shape function sees and gives (OpDef::shape_fn): the
// partial shapes, dtypes and statically known values of a node's inputs,
// its attrs, and the outputs it sets. Static shape inference
// (graph/shapes/shape_inference.hpp) runs one per node to a fixed point; the
// rules themselves are declared with their ops (ops/shape_fns.hpp). An
// op whose exact rule is not written gives unknown shapes. Plain values:
// a context lives for one call of a shape function.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// What is known of one output before a step runs.
struct OutputInfo {
  DType dtype = DType::invalid;
  PartialShape shape{true, {}};
  // Set for small int32/int64 tensors known statically: Consts, the Shape,
  // Size or Rank of a fully known shape, and arithmetic, Pack, ConcatV2,
  // StridedSlice, Cast and Identity of those — what Reshape, Fill and the
  // other ops with a shape argument read.
  std::optional<Tensor> value;
};

// Runs the function calls of functional ops: the outputs of `function`
// called with `args` (nullopt when it cannot be instantiated or followed).
// Given by graph/ shape inference, which knows the function library.
using CallFn = std::function<std::optional<std::vector<OutputInfo>>(const NameAttrList& function,
                                                                    const std::vector<OutputInfo>& args)>;

class InferenceContext;
// A shape function: sets the outputs it knows; an error (invalid_argument,
// from InferenceContext::error) only for inputs that definitely contradict
// each other. A plain function, so that a rule is one symbol wherever it
// is registered.
using ShapeFn = Status (*)(InferenceContext&);

// What a shape function sees of one node. Outputs start with their dtype
// and unknown shape; a function sets those it knows.
class InferenceContext {
 public:
  InferenceContext(std::string_view name, std::string_view op, const AttrMap& attrs,
                   std::vector<const OutputInfo*> inputs, std::vector<OutputInfo>* outputs, const CallFn* call)
      : name_(name), op_(op), attrs_(attrs), inputs_(std::move(inputs)), outputs_(outputs), call_(call) {}

  // The node's name and op ("MatMul"): one rule serves several ops.
  std::string_view name() const { return name_; }
  std::string_view op() const { return op_; }
  const AttrMap& attrs() const { return attrs_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  const OutputInfo& input(int i) const { return *inputs_[static_cast<size_t>(i)]; }
  const PartialShape& input_shape(int i) const { return input(i).shape; }
  // The input's statically known value, or nullptr.
  const Tensor* input_value(int i) const { return input(i).value ? &*input(i).value : nullptr; }
  // The values of a known int32/int64 input, flattened; nullopt if unknown.
  std::optional<std::vector<int64_t>> input_ints(int i) const;
  // A shape given as an int vector input (Reshape, Fill, ...): its known
  // values (-1 stays unknown), else its rank from the input's length, else
  // unknown rank.
  PartialShape input_as_shape(int i) const;

  const OutputInfo& output(int i) const { return (*outputs_)[static_cast<size_t>(i)]; }
  void set_output(int i, PartialShape shape);
  // Sets output i's value (int32/int64 only) and its shape from it.
  void set_value(int i, Tensor value);
  // Every output the input's shape (Identity-like ops).
  void pass_through(int input = 0);

  // A typed attr or nullptr: c.attr<int64_t>("N").
  template <class T>
  const T* attr(std::string_view key) const {
    auto it = attrs_.find(key);
    return it == attrs_.end() ? nullptr : it->second.template get_if<T>();
  }
  int64_t int_attr(std::string_view key, int64_t otherwise) const;
  bool bool_attr(std::string_view key, bool otherwise) const;
  std::string string_attr(std::string_view key) const;

  // invalid_argument "Op 'name': what".
  Status error(const std::string& what) const;
  // The one shape all inputs must have (AddN, Pack): the most specific
  // shape they agree on, into *out; an error naming the first input that
  // contradicts the others.
  Status merged_inputs(PartialShape* out) const;

  // How the functional ops' rules (graph/shapes/functional_shape_functions.hpp)
  // follow their functions; nullptr when calls are not followed.
  const CallFn* call() const { return call_; }
  // The graph's producer version (GraphDef versions), for rules that
  // changed with it.
  int producer() const { return producer_; }
  void set_producer(int producer) { producer_ = producer; }

 private:
  std::string_view name_;
  std::string_view op_;
  const AttrMap& attrs_;
  std::vector<const OutputInfo*> inputs_;
  std::vector<OutputInfo>* outputs_;
  const CallFn* call_;
  int producer_ = 0;
};

// --- helpers the rules share ------------------------------------------------
namespace shape {

inline PartialShape unknown() { return {true, {}}; }
inline PartialShape known(std::vector<int64_t> dims) { return {false, std::move(dims)}; }
inline PartialShape scalar() { return {false, {}}; }
inline PartialShape vector(int64_t n) { return {false, {n}}; }
// Rank r, every dimension unknown; unknown rank for r < 0 or a rank past
// kMaxInferredRank (a shape argument's length read from an untrusted graph).
constexpr int64_t kMaxInferredRank = 64;
PartialShape of_rank(int64_t r);
inline bool known_rank(const PartialShape& s) { return !s.unknown_rank; }
inline int rank(const PartialShape& s) { return static_cast<int>(s.dims.size()); }
// Every dimension known.
bool fully_known(const PartialShape& s);
// The element count, or -1 when a dimension or the rank is unknown.
int64_t num_elements(const PartialShape& s);
// The dimension i (negative counts from the end), -1 when not known.
int64_t dim(const PartialShape& s, int i);
// Whether two dimensions may be equal (either unknown, or the same), and
// the known one of two compatible dimensions.
bool dims_compatible(int64_t a, int64_t b);
int64_t merge_dim(int64_t a, int64_t b);
// The most specific shape both describe, or nullopt when they contradict.
std::optional<PartialShape> merge(const PartialShape& a, const PartialShape& b);
// The most specific shape that every tensor of shape `a` or `b` has:
// dimensions that differ become -1, ranks that differ unknown.
PartialShape generalize(const PartialShape& a, const PartialShape& b);
// NumPy broadcasting; nullopt when known dimensions cannot broadcast.
std::optional<PartialShape> broadcast(const PartialShape& a, const PartialShape& b);
// The dimension arithmetic that keeps unknown (-1) unknown.
int64_t add_dims(int64_t a, int64_t b);
int64_t mul_dims(int64_t a, int64_t b);
// dims[begin, end) of a known-rank shape.
PartialShape sub(const PartialShape& s, int begin, int end);
PartialShape concat(const PartialShape& a, const PartialShape& b);
// A tensor of int values of dtype int32 or int64.
Tensor int_tensor(DType dtype, const std::vector<int64_t>& values, const Shape& shape);

}  // namespace shape
}  // namespace tagflow::ops
