// The shape functions of shape inference (graph/shape_inference.hpp): one
// per op name, from the shapes, known values and attrs of a node's inputs
// to the shapes (and values) of its outputs, or an error when the inputs
// definitely contradict each other. Every op with a kernel has one
// (tests/graph/shape_inference_test.cpp checks); an op whose exact rule is
// not written says so beside its entry and gives unknown shapes. The
// registry is built once and immutable: thread-safe to read.
//
// The rules are spread by op family: shape_functions_array.cpp (shapes,
// slicing, gathering), shape_functions_math.cpp (elementwise, reductions,
// matmul), shape_functions_nn.cpp (conv, pooling, normalisation, cells),
// shape_functions_state.cpp (variables, queues, lists, control flow,
// functional ops, checkpoints).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/shape_inference.hpp"

namespace tagflow::graph {

class InferenceContext;
using ShapeFn = std::function<Status(InferenceContext&)>;
using ShapeFunctionMap = std::map<std::string, ShapeFn, std::less<>>;

// Runs the function calls of functional ops: the outputs of `function`
// called with `args` (nullopt when it cannot be instantiated or followed).
using CallFn = std::function<std::optional<std::vector<OutputInfo>>(
    const ops::NameAttrList& function, const std::vector<OutputInfo>& args)>;

// What a shape function sees of one node. Outputs start with their dtype
// and unknown shape; a function sets those it knows.
class InferenceContext {
 public:
  InferenceContext(const Node& node, std::vector<const OutputInfo*> inputs, std::vector<OutputInfo>* outputs,
                   const CallFn* call)
      : node_(node), inputs_(std::move(inputs)), outputs_(outputs), call_(call) {}

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  const OutputInfo& input(int i) const { return *inputs_[static_cast<size_t>(i)]; }
  const ops::PartialShape& input_shape(int i) const { return input(i).shape; }
  // The input's statically known value, or nullptr.
  const ops::Tensor* input_value(int i) const {
    return input(i).value ? &*input(i).value : nullptr;
  }
  // The values of a known int32/int64 input, flattened; nullopt if unknown.
  std::optional<std::vector<int64_t>> input_ints(int i) const;
  // A shape given as an int vector input (Reshape, Fill, ...): its known
  // values (-1 stays unknown), else its rank from the input's length, else
  // unknown rank.
  ops::PartialShape input_as_shape(int i) const;

  const OutputInfo& output(int i) const { return (*outputs_)[static_cast<size_t>(i)]; }
  void set_output(int i, ops::PartialShape shape);
  // Sets output i's value (int32/int64 only) and its shape from it.
  void set_value(int i, ops::Tensor value);
  // Every output the input's shape (Identity-like ops).
  void pass_through(int input = 0);

  template <class T>
  const T* attr(std::string_view key) const { return node_.attr<T>(key); }
  int64_t int_attr(std::string_view key, int64_t otherwise) const;
  bool bool_attr(std::string_view key, bool otherwise) const;
  std::string string_attr(std::string_view key) const;

  // invalid_argument "Op 'name': what".
  Status error(const std::string& what) const;
  // The one shape all inputs must have (AddN, Pack): the most specific
  // shape they agree on, into *out; an error naming the first input that
  // contradicts the others.
  Status merged_inputs(ops::PartialShape* out) const;

  const CallFn* call() const { return call_; }
  // The graph's producer version (GraphDef versions), for rules that
  // changed with it.
  int producer() const { return producer_; }
  void set_producer(int producer) { producer_ = producer; }

 private:
  const Node& node_;
  std::vector<const OutputInfo*> inputs_;
  std::vector<OutputInfo>* outputs_;
  const CallFn* call_;
  int producer_ = 0;
};

// The registry: every op with a shape function.
const ShapeFunctionMap& shape_functions();

// The registry's parts, by op family.
void add_array_shape_functions(ShapeFunctionMap& m);
void add_math_shape_functions(ShapeFunctionMap& m);
void add_nn_shape_functions(ShapeFunctionMap& m);
void add_state_shape_functions(ShapeFunctionMap& m);

// A rule whose one output has the shape of input `i` (unknown when the
// node has no input i).
ShapeFn shape_of_input(int i);

// --- helpers the rules share ------------------------------------------------
namespace shape {

inline ops::PartialShape unknown() { return {true, {}}; }
inline ops::PartialShape known(std::vector<int64_t> dims) { return {false, std::move(dims)}; }
inline ops::PartialShape scalar() { return {false, {}}; }
inline ops::PartialShape vector(int64_t n) { return {false, {n}}; }
// Rank r, every dimension unknown; unknown rank for r < 0 or a rank past
// kMaxInferredRank (a shape argument's length read from an untrusted graph).
constexpr int64_t kMaxInferredRank = 64;
ops::PartialShape of_rank(int64_t r);
inline bool known_rank(const ops::PartialShape& s) { return !s.unknown_rank; }
inline int rank(const ops::PartialShape& s) { return static_cast<int>(s.dims.size()); }
// Every dimension known.
bool fully_known(const ops::PartialShape& s);
// The element count, or -1 when a dimension or the rank is unknown.
int64_t num_elements(const ops::PartialShape& s);
// The dimension i (negative counts from the end), -1 when not known.
int64_t dim(const ops::PartialShape& s, int i);
// Whether two dimensions may be equal (either unknown, or the same), and
// the known one of two compatible dimensions.
bool dims_compatible(int64_t a, int64_t b);
int64_t merge_dim(int64_t a, int64_t b);
// The most specific shape both describe, or nullopt when they contradict.
std::optional<ops::PartialShape> merge(const ops::PartialShape& a, const ops::PartialShape& b);
// NumPy broadcasting; nullopt when known dimensions cannot broadcast.
std::optional<ops::PartialShape> broadcast(const ops::PartialShape& a, const ops::PartialShape& b);
// The dimension arithmetic that keeps unknown (-1) unknown.
int64_t add_dims(int64_t a, int64_t b);
int64_t mul_dims(int64_t a, int64_t b);
// dims[begin, end) of a known-rank shape.
ops::PartialShape sub(const ops::PartialShape& s, int begin, int end);
ops::PartialShape concat(const ops::PartialShape& a, const ops::PartialShape& b);
// A tensor of int values of dtype int32 or int64.
ops::Tensor int_tensor(DType dtype, const std::vector<int64_t>& values, const ops::Shape& shape);

}  // namespace shape
}  // namespace tagflow::graph
