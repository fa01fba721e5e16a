// The softmax cross-entropy losses, each computing the loss and its
// gradient in one pass, as TensorFlow's xent_op.cc and sparse_xent_op.cc:
//
// - SoftmaxCrossEntropyWithLogits(features [batch, classes], labels) ->
//   loss [batch] = -sum(labels * log_softmax(features)), backprop [batch,
//   classes] = softmax(features) - labels. As in TensorFlow, features and
//   labels may broadcast to one 2-D shape (labels [1, classes] for all rows).
// - SparseSoftmaxCrossEntropyWithLogits(features [batch, classes], labels
//   [batch] of class indices) -> the same with one-hot labels; a label
//   outside [0, classes) is an error, as on TensorFlow's CPU.
//
// Rows are shifted by their maximum before exp(), so large logits do not
// overflow. float32 and float64; stateless kernels.
#include <string>

#include <Eigen/Core>

#include "ops/broadcast.hpp"
#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

template <class T>
using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Column = Eigen::Array<T, Eigen::Dynamic, 1>;

// Writes softmax(logits) into backprop and returns, per row, the log of the
// sum of exp(logits - max) and the shifted logits (into `shifted`).
template <class T>
Column<T> softmax_rows(const Eigen::Map<const Rows<T>>& logits, Rows<T>& shifted,
                       Eigen::Map<Rows<T>>& backprop) {
  shifted = logits.colwise() - logits.rowwise().maxCoeff();
  backprop = shifted.exp();
  const Column<T> sum = backprop.rowwise().sum();
  backprop.colwise() /= sum;
  return sum.log();
}

// t itself if it has `shape`, else t broadcast to it (checked by the caller).
Expected<Tensor> broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(t.dtype(), shape));
  strided_copy(t, *broadcast_view(t.shape(), shape), out);
  return out;
}

template <class T>
Status softmax_xent(KernelContext& ctx) {
  const char* op = "SoftmaxCrossEntropyWithLogits";
  const Tensor& features_in = ctx.input(0);
  const Tensor& labels_in = ctx.input(1);
  if (!holds<T>(features_in) || !holds<T>(labels_in)) {
    const Tensor* inputs[] = {&features_in, &labels_in};
    return input_dtype_error(op, dtype_v<T>, inputs, 2);
  }
  const std::string shapes = "logits " + features_in.shape().to_string() + " and labels " +
                             labels_in.shape().to_string();
  Expected<Broadcast> b = Broadcast::make(features_in.shape(), labels_in.shape());
  if (!b.ok())
    return Status(Error::invalid_argument,
                  std::string(op) + ": logits and labels must be broadcastable, got " + shapes);
  const Shape shape = b->output_shape();
  if (shape.rank() != 2)
    return Status(Error::invalid_argument,
                  std::string(op) + ": logits and labels must be 2-dimensional, or broadcast " +
                      "to 2 dimensions, got " + shapes);
  TF_ASSIGN_OR_RETURN(Tensor features, broadcast_to(features_in, shape));
  TF_ASSIGN_OR_RETURN(Tensor labels, broadcast_to(labels_in, shape));
  const int64_t batch = shape.dim(0), classes = shape.dim(1);
  Tensor loss(dtype_v<T>, Shape{batch});  // zeros: the loss of no classes
  Tensor backprop = Tensor::uninitialized(dtype_v<T>, shape);
  if (batch > 0 && classes > 0) {
    Eigen::Map<const Rows<T>> x(elements<T>(features), batch, classes);
    Eigen::Map<const Rows<T>> y(elements<T>(labels), batch, classes);
    Eigen::Map<Rows<T>> grad(backprop.mutable_data<T>(), batch, classes);
    Rows<T> shifted;
    const Column<T> log_sum = softmax_rows<T>(x, shifted, grad);
    // -sum(y * (shifted - log_sum))
    Eigen::Map<Column<T>>(loss.mutable_data<T>(), batch) =
        (y * ((-shifted).colwise() + log_sum)).rowwise().sum();
    grad -= y;
  }
  ctx.set_output(0, std::move(loss));
  ctx.set_output(1, std::move(backprop));
  return ok_status();
}

template <class T>
Status sparse_softmax_xent(KernelContext& ctx) {
  const char* op = "SparseSoftmaxCrossEntropyWithLogits";
  const Tensor& features = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  if (!holds<T>(features)) {
    const Tensor* inputs[] = {&features};
    return input_dtype_error(op, dtype_v<T>, inputs, 1);
  }
  if (features.rank() != 2)
    return Status(Error::invalid_argument, std::string(op) +
                                               ": logits must be 2-dimensional, got shape " +
                                               features.shape().to_string());
  if (!labels.valid() || labels.rank() != 1 || labels.dim(0) != features.dim(0))
    return Status(Error::invalid_argument,
                  std::string(op) + ": labels must be a vector of one class per row of logits, " +
                      "got logits " + features.shape().to_string() + " and labels " +
                      labels.shape().to_string());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> label, read_int_values(labels, "labels"));
  const int64_t batch = features.dim(0), classes = features.dim(1);
  for (size_t b = 0; b < label.size(); ++b)
    if (label[b] < 0 || label[b] >= classes)
      return Status(Error::invalid_argument,
                    std::string(op) + ": labels[" + std::to_string(b) + "] = " +
                        std::to_string(label[b]) + " is outside the valid range of classes [0, " +
                        std::to_string(classes) + ")");
  Tensor loss(dtype_v<T>, Shape{batch});
  Tensor backprop = Tensor::uninitialized(dtype_v<T>, features.shape());
  if (batch > 0) {  // then classes > 0: every label is in range
    Eigen::Map<const Rows<T>> x(elements<T>(features), batch, classes);
    Eigen::Map<Rows<T>> grad(backprop.mutable_data<T>(), batch, classes);
    Rows<T> shifted;
    const Column<T> log_sum = softmax_rows<T>(x, shifted, grad);
    T* l = loss.mutable_data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      const Eigen::Index c = static_cast<Eigen::Index>(label[static_cast<size_t>(b)]);
      l[b] = log_sum(b) - shifted(b, c);
      grad(b, c) -= T(1);
    }
  }
  ctx.set_output(0, std::move(loss));
  ctx.set_output(1, std::move(backprop));
  return ok_status();
}

// The kernel fn<T> for the node's features dtype.
template <Status (*F32)(KernelContext&), Status (*F64)(KernelContext&)>
KernelFactory float_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    const DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    if (t == DType::float32) return std::unique_ptr<Kernel>(new FunctionKernel(F32));
    if (t == DType::float64) return std::unique_ptr<Kernel>(new FunctionKernel(F64));
    return no_kernel_error(op, t);
  };
}

}  // namespace

void register_softmax_xent_ops(OpRegistry& r) {
  register_builtin(r, OpDef("SoftmaxCrossEntropyWithLogits").shape_fn(shape_fns::softmax_xent)
                          .input("features: T")
                          .input("labels: T")
                          .output("loss: T")
                          .output("backprop: T")
                          .type_attr("T", float_types())
                          .kernel(float_factory<softmax_xent<float>, softmax_xent<double>>(
                              "SoftmaxCrossEntropyWithLogits")));
  register_builtin(r, OpDef("SparseSoftmaxCrossEntropyWithLogits").shape_fn(shape_fns::softmax_xent)
                          .input("features: T")
                          .input("labels: Tlabels")
                          .output("loss: T")
                          .output("backprop: T")
                          .type_attr("T", float_types())
                          .type_attr("Tlabels", {DType::int32, DType::int64}, DType::int64)
                          .kernel(float_factory<sparse_softmax_xent<float>, sparse_softmax_xent<double>>(
                              "SparseSoftmaxCrossEntropyWithLogits")));
}

}  // namespace tagflow::ops
