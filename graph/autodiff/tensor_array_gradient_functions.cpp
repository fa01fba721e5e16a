// The gradient functions of the TensorArray ops, in the form of
// TensorFlow's tensor_array_grad.py: gradients go through a gradient
// array of each array. Added to GradientRegistry::global() by
// gradient_functions.cpp.

#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace gradient_util;

// --- TensorArrays: gradients go through a gradient array of each array
// (TensorArrayGradV3, one per gradients() call), carried by the flow.

// One gradient array per array and gradients() call: TensorFlow's
// `source` is the gradient's name scope too.
std::string source_of(C& c) { return c.scope(); }

// Read and Gather (handle, index or indices, flow -> value): the gradient
// is written into the gradient array at the same place by `writer` (Write,
// Scatter); its flow is the forward flow's gradient.
GradientFunction ta_read_grad(const char* writer) {
  return [writer](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint handle, c.input(0));
    TRY(Endpoint where, c.input(1));
    TRY(Endpoint flow, c.input(2));
    TRY(std::vector<Endpoint> ga, c.op("TensorArrayGradV3", {handle, flow}, {{"source", source_of(c)}}));
    TRY(Endpoint w, c.op1(writer, {ga[0], where, g, ga[1]}));
    c.set(2, w);
    return ok_status();
  };
}

// Write and Scatter (handle, index or indices, value, flow -> flow): the
// value's gradient is read back from the gradient array by `reader` (Read,
// Gather) once the flow's gradient says it was written.
GradientFunction ta_write_grad(const char* reader) {
  return [reader](C& c) -> Status {
    TRY(Endpoint flow, need_dy(c, 0));
    TRY(Endpoint handle, c.input(0));
    TRY(Endpoint where, c.input(1));
    TRY(std::vector<Endpoint> ga, c.op("TensorArrayGradV3", {handle, flow}, {{"source", source_of(c)}}));
    TRY(Endpoint value, c.op1(reader, {ga[0], where, ga[1]}, {{"dtype", c.input_type(2)}}));
    c.set(2, value);
    c.set(3, flow);
    return ok_status();
  };
}

}  // namespace

void add_tensor_array_gradients(GradientRegistry& r) {
  // TensorArrays.
  add(r, "TensorArrayReadV3", ta_read_grad("TensorArrayWriteV3"));
  add(r, "TensorArrayWriteV3", ta_write_grad("TensorArrayReadV3"));
  add(r, "TensorArrayGatherV3", ta_read_grad("TensorArrayScatterV3"));
  add(r, "TensorArrayScatterV3", ta_write_grad("TensorArrayGatherV3"));
}

#undef TRY

}  // namespace autodiff
}  // namespace tagflow::graph
