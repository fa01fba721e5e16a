// MatMul and BatchMatMul: matrix products by Eigen, on row-major tensors.
//
// MatMul multiplies two matrices, either transposed on request.
// BatchMatMulV2 multiplies the last two dimensions of x and y (adjoint =
// transpose, for tagflow's real types) and broadcasts the dimensions before
// them NumPy-style; BatchMatMul (v1) requires equal batch dimensions.
// Integer products wrap on overflow (computed in the unsigned twin type).
#include <Eigen/Core>

#include "ops/cpu/dnnl_matmul.hpp"

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

// A row-major matrix of `rows` x `cols` at `data`, to be used transposed
// or not.
template <class T>
struct MatrixArg {
  const T* data;
  int64_t rows;
  int64_t cols;
  bool transpose;
  int64_t out_rows() const { return transpose ? cols : rows; }
  int64_t inner() const { return transpose ? rows : cols; }
};

// out (m x n) = op(a) * op(b); a.inner() == b.out_rows(). Eigen writes every
// element of out, except with an empty inner dimension: out must then be
// zero-filled already (output_for allocates it so).
template <class T>
void multiply(const MatrixArg<T>& a, const MatrixArg<T>& b, T* out) {
  using C = wrapping_t<T>;
  using Matrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t m = a.out_rows();
  const int64_t n = b.transpose ? b.rows : b.cols;
  if (m == 0 || n == 0 || a.inner() == 0) return;  // nothing, or all zeros
  Eigen::Map<const Matrix> A(reinterpret_cast<const C*>(a.data), a.rows, a.cols);
  Eigen::Map<const Matrix> B(reinterpret_cast<const C*>(b.data), b.rows, b.cols);
  Eigen::Map<Matrix> O(reinterpret_cast<C*>(out), m, n);
  if (!a.transpose && !b.transpose) O.noalias() = A * B;
  else if (a.transpose && !b.transpose) O.noalias() = A.transpose() * B;
  else if (!a.transpose) O.noalias() = A * B.transpose();
  else O.noalias() = A.transpose() * B.transpose();
}

// Float products, over `batch` consecutive pairs: oneDNN, or Eigen built
// for the machine for small ones (cpu::matmul_f32).
void multiply(const MatrixArg<float>& a, const MatrixArg<float>& b, float* out, int64_t batch = 1) {
  cpu::MatMulShape s;
  s.batch = batch;
  s.m = a.out_rows();
  s.k = a.inner();
  s.n = b.transpose ? b.rows : b.cols;
  s.transpose_a = a.transpose;
  s.transpose_b = b.transpose;
  cpu::matmul_f32(s, a.data, b.data, out);
}

// An output of m x n products over `inner` terms: zero-filled only when
// the products are empty sums, which multiply() does not write.
template <class T>
Tensor output_for(const Shape& shape, int64_t inner) {
  return inner == 0 ? Tensor(dtype_v<T>, shape) : Tensor::uninitialized(dtype_v<T>, shape);
}

template <class T>
Status check_operands(const char* op, const Tensor& a, const Tensor& b) {
  if (holds<T>(a) && holds<T>(b)) return ok_status();
  const Tensor* inputs[] = {&a, &b};
  return input_dtype_error(op, dtype_v<T>, inputs, 2);
}

std::string flag(const char* name, bool value) {
  return std::string(" (") + name + (value ? "=true)" : "=false)");
}

template <class T>
class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(bool transpose_a, bool transpose_b)
      : transpose_a_(transpose_a), transpose_b_(transpose_b) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TF_RETURN_IF_ERROR(check_operands<T>("MatMul", a, b));
    if (a.rank() != 2 || b.rank() != 2)
      return Status(Error::invalid_argument, "MatMul: a and b must be matrices, got shapes " +
                                                 a.shape().to_string() + " and " +
                                                 b.shape().to_string());
    MatrixArg<T> ma{a.data<T>(), a.dim(0), a.dim(1), transpose_a_};
    MatrixArg<T> mb{b.data<T>(), b.dim(0), b.dim(1), transpose_b_};
    if (ma.inner() != mb.out_rows())
      return Status(Error::invalid_argument,
                    "MatMul: inner dimensions differ: a " + a.shape().to_string() +
                        flag("transpose_a", transpose_a_) + " has " + std::to_string(ma.inner()) +
                        ", b " + b.shape().to_string() + flag("transpose_b", transpose_b_) +
                        " has " + std::to_string(mb.out_rows()));
    Tensor out = output_for<T>(Shape{ma.out_rows(), transpose_b_ ? mb.rows : mb.cols}, ma.inner());
    multiply(ma, mb, out.mutable_data<T>());
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  bool transpose_a_;
  bool transpose_b_;
};

// _FusedMatMul of [BiasAdd] or [BiasAdd, Relu] on float: the bias
// (args[0]) as a oneDNN post-op when the product runs there, else after it
// with BiasAdd's expression; then Relu (nn_ops.hpp).
class FusedMatMulKernel final : public Kernel {
 public:
  FusedMatMulKernel(bool transpose_a, bool transpose_b, bool relu)
      : transpose_a_(transpose_a), transpose_b_(transpose_b), relu_(relu) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "_FusedMatMul";
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    TF_RETURN_IF_ERROR(check_operands<float>(op, a, b));
    if (!holds<float>(bias)) {
      const Tensor* inputs[] = {&bias};
      return input_dtype_error(op, DType::float32, inputs, 1);
    }
    if (a.rank() != 2 || b.rank() != 2)
      return Status(Error::invalid_argument, std::string(op) + ": a and b must be matrices, got shapes " +
                                                 a.shape().to_string() + " and " + b.shape().to_string());
    MatrixArg<float> ma{a.data<float>(), a.dim(0), a.dim(1), transpose_a_};
    MatrixArg<float> mb{b.data<float>(), b.dim(0), b.dim(1), transpose_b_};
    if (ma.inner() != mb.out_rows())
      return Status(Error::invalid_argument,
                    std::string(op) + ": inner dimensions differ: a " + a.shape().to_string() +
                        flag("transpose_a", transpose_a_) + " has " + std::to_string(ma.inner()) + ", b " +
                        b.shape().to_string() + flag("transpose_b", transpose_b_) + " has " +
                        std::to_string(mb.out_rows()));
    const Shape shape{ma.out_rows(), transpose_b_ ? mb.rows : mb.cols};
    TF_RETURN_IF_ERROR(check_bias(op, shape, 1, bias));
    Tensor out = output_for<float>(shape, ma.inner());
    cpu::MatMulShape s;
    s.m = ma.out_rows();
    s.k = ma.inner();
    s.n = shape.dim(1);
    s.transpose_a = transpose_a_;
    s.transpose_b = transpose_b_;
    bool biased = false;
    if (s.k > 0 && cpu::on_dnnl(s)) {
      cpu::Epilogue epilogue;
      epilogue.bias = bias.data<float>();
      biased = cpu::dnnl_matmul(s, ma.data, mb.data, out.mutable_data<float>(), epilogue);
    } else {
      multiply(ma, mb, out.mutable_data<float>());
    }
    apply_bias_relu(out.mutable_data<float>(), shape, 1, biased ? nullptr : bias.data<float>(), relu_);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  bool transpose_a_;
  bool transpose_b_;
  bool relu_;
};

// The dimensions of s before its last two.
Shape batch_shape(const Shape& s) {
  Shape b;
  for (int d = 0; d + 2 < s.rank(); ++d) b.add_dim(s.dim(d));
  return b;
}

template <class T>
class BatchMatMulKernel final : public Kernel {
 public:
  BatchMatMulKernel(const char* op, bool adj_x, bool adj_y, bool broadcast)
      : op_(op), adj_x_(adj_x), adj_y_(adj_y), broadcast_(broadcast) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    TF_RETURN_IF_ERROR(check_operands<T>(op_, x, y));
    if (x.rank() < 2 || y.rank() < 2)
      return Status(Error::invalid_argument, std::string(op_) +
                                                 ": x and y must have rank >= 2, got shapes " +
                                                 x.shape().to_string() + " and " +
                                                 y.shape().to_string());
    const int xr = x.rank(), yr = y.rank();
    MatrixArg<T> mx{x.data<T>(), x.dim(xr - 2), x.dim(xr - 1), adj_x_};
    MatrixArg<T> my{y.data<T>(), y.dim(yr - 2), y.dim(yr - 1), adj_y_};
    if (mx.inner() != my.out_rows())
      return Status(Error::invalid_argument,
                    std::string(op_) + ": inner dimensions differ: x " + x.shape().to_string() +
                        flag("adj_x", adj_x_) + " has " + std::to_string(mx.inner()) + ", y " +
                        y.shape().to_string() + flag("adj_y", adj_y_) + " has " +
                        std::to_string(my.out_rows()));
    const Shape xb = batch_shape(x.shape());
    const Shape yb = batch_shape(y.shape());
    if (!broadcast_ && xb != yb)
      return Status(Error::invalid_argument, std::string(op_) + ": batch dimensions differ: x " +
                                                 x.shape().to_string() + ", y " +
                                                 y.shape().to_string());
    Expected<Broadcast> b = Broadcast::make(xb, yb);
    if (!b.ok())
      return b.status().with_prefix(std::string(op_) + ": batch dimensions of x " +
                                    x.shape().to_string() + " and y " + y.shape().to_string() +
                                    ": ");
    const int64_t m = mx.out_rows();
    const int64_t n = adj_y_ ? my.rows : my.cols;
    Shape out_shape = b->output_shape();
    out_shape.add_dim(m);
    out_shape.add_dim(n);
    Tensor out = output_for<T>(out_shape, mx.inner());
    T* op = out.mutable_data<T>();
    const T* xp = mx.data;
    const T* yp = my.data;
    const int64_t x_size = mx.rows * mx.cols, y_size = my.rows * my.cols, o_size = m * n;
    const int last = b->rank() - 1;
    const int64_t len = b->dim(last), sx = b->stride(0, last), sy = b->stride(1, last);
    if constexpr (std::is_same_v<T, float>) {
      if (xb == yb) {  // no broadcasting: one product over the whole batch
        multiply(mx, my, op, xb.num_elements());
        ctx.set_output(0, std::move(out));
        return ok_status();
      }
    }
    b->for_each_row([&](int64_t o, const int64_t* in) {
      for (int64_t j = 0; j < len; ++j) {
        mx.data = xp + (in[0] + j * sx) * x_size;
        my.data = yp + (in[1] + j * sy) * y_size;
        multiply(mx, my, op + (o + j) * o_size);
      }
    });
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  bool adj_x_;
  bool adj_y_;
  bool broadcast_;
};

template <class F>
bool dispatch_matmul_type(const KernelInit& init, F&& f) {
  DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
  return dispatch_among<float, double, int32_t, int64_t>(t, f);
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fused_matmul_kernel(const KernelInit& init, bool relu) {
  TF_ASSIGN_OR_RETURN(bool ta, init.attr<bool>("transpose_a"));
  TF_ASSIGN_OR_RETURN(bool tb, init.attr<bool>("transpose_b"));
  return std::unique_ptr<Kernel>(std::make_unique<FusedMatMulKernel>(ta, tb, relu));
}

namespace {

Expected<std::unique_ptr<Kernel>> make_matmul_kernel(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(bool ta, init.attr<bool>("transpose_a"));
  TF_ASSIGN_OR_RETURN(bool tb, init.attr<bool>("transpose_b"));
  std::unique_ptr<Kernel> k;
  dispatch_matmul_type(init, [&](auto tag) {
    k = std::make_unique<MatMulKernel<typename decltype(tag)::type>>(ta, tb);
  });
  if (!k) return no_kernel_error("MatMul", init.input_types.empty() ? DType::invalid : init.input_types[0]);
  return k;
}

KernelFactory batch_matmul_factory(const char* op, bool broadcast) {
  return [op, broadcast](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(bool adj_x, init.attr<bool>("adj_x"));
    TF_ASSIGN_OR_RETURN(bool adj_y, init.attr<bool>("adj_y"));
    std::unique_ptr<Kernel> k;
    dispatch_matmul_type(init, [&](auto tag) {
      using T = typename decltype(tag)::type;
      k = std::make_unique<BatchMatMulKernel<T>>(op, adj_x, adj_y, broadcast);
    });
    if (!k) return no_kernel_error(op, init.input_types.empty() ? DType::invalid : init.input_types[0]);
    return k;
  };
}

void batch_matmul_op(OpRegistry& r, const char* name, bool broadcast) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::batch_matmul)
                          .input("x: T")
                          .input("y: T")
                          .output("output: T")
                          .type_attr("T", real_types())
                          .attr("adj_x", "bool", false)
                          .attr("adj_y", "bool", false)
                          .expensive()
                          .kernel(batch_matmul_factory(name, broadcast)));
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  register_builtin(r, OpDef("MatMul").shape_fn(shape_fns::matmul)
                          .input("a: T")
                          .input("b: T")
                          .output("product: T")
                          .attr("transpose_a", "bool", false)
                          .attr("transpose_b", "bool", false)
                          .type_attr("T", real_types())
                          .expensive()
                          .kernel(make_matmul_kernel));
  batch_matmul_op(r, "BatchMatMul", false);
  batch_matmul_op(r, "BatchMatMulV2", true);
}

}  // namespace tagflow::ops
