// The fused recurrent cells of TensorFlow's core/ops/rnn_ops.cc, one time
// step each, with their gradients:
//
// LSTMBlockCell(x, cs_prev, h_prev, w, wci, wcf, wco, b) -> i, cs, f, o, ci,
// co, h. The gate pre-activations [x, h_prev] * w + b hold four column
// blocks of cell_size in the order i, ci, f, o:
//   i = sigmoid(i_pre + cs_prev * wci)     (peephole terms only with
//   f = sigmoid(f_pre + forget_bias + cs_prev * wcf)       use_peephole)
//   ci = tanh(ci_pre);  cs = i * ci + f * cs_prev, clipped to
//   [-cell_clip, cell_clip] when cell_clip > 0
//   o = sigmoid(o_pre + cs * wco);  co = tanh(cs);  h = o * co
// LSTMBlockCellGrad returns the gradients of cs_prev, of the gate
// pre-activations (dicfo; the caller multiplies by w for x and h_prev, and
// sums over the batch for b) and of the peephole weights. As TensorFlow's,
// it ignores the clip.
//
// GRUBlockCell(x, h_prev, w_ru, w_c, b_ru, b_c) -> r, u, c, h:
//   [r, u] = sigmoid([x, h_prev] * w_ru + b_ru)
//   c = tanh([x, r * h_prev] * w_c + b_c);  h = u * h_prev + (1 - u) * c
// GRUBlockCellGrad returns d_x, d_h_prev, d_c_bar and d_r_bar_u_bar (the
// gradients of the pre-activations of c and of [r, u]).
//
// TensorFlow computes these in half/float; here in float and double. Float
// products run on tagflow's float product (oneDNN, or Eigen built for the
// machine for small ones: ops/cpu/dnnl_matmul.hpp), double ones on Eigen.
#include <type_traits>

#include <Eigen/Core>

#include "ops/cpu/dnnl_matmul.hpp"

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Row = Eigen::Array<T, 1, Eigen::Dynamic>;

template <class T>
Eigen::Map<const Matrix<T>> matrix(const Tensor& t) {
  return Eigen::Map<const Matrix<T>>(t.data<T>(), t.dim(0), t.dim(1));
}
template <class T>
Eigen::Map<const Rows<T>> rows(const Tensor& t) {
  return Eigen::Map<const Rows<T>>(t.data<T>(), t.dim(0), t.dim(1));
}
template <class T>
Eigen::Map<const Row<T>> row(const Tensor& t) {
  return Eigen::Map<const Row<T>>(t.data<T>(), t.num_elements());
}

template <class T, class E>
Tensor tensor_of(const E& e) {
  Tensor t = Tensor::uninitialized(dtype_v<T>, Shape{e.rows(), e.cols()});
  Eigen::Map<Rows<T>>(t.mutable_data<T>(), e.rows(), e.cols()) = e;
  return t;
}
template <class T>
Tensor vector_of(const Row<T>& r) {
  Tensor t = Tensor::uninitialized(dtype_v<T>, Shape{r.size()});
  Eigen::Map<Row<T>>(t.mutable_data<T>(), r.size()) = r;
  return t;
}

// a [m, k] * b [k, n] (b^T when `transpose_b`: b is [n, k]) for the
// cells' gates: float on tagflow's product (oneDNN, or Eigen built for the
// machine when small: ops/cpu/dnnl_matmul.hpp), double on Eigen.
template <class T, class A>
Rows<T> product(const A& a, const Tensor& b, bool transpose_b = false) {
  const int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  if constexpr (std::is_same_v<T, float>) {
    const Matrix<T>& lhs = a;  // a itself, or a contiguous copy
    Rows<T> out(lhs.rows(), n);
    if (lhs.cols() == 0) {
      out.setZero();
      return out;
    }
    cpu::MatMulShape s;
    s.m = lhs.rows();
    s.k = lhs.cols();
    s.n = n;
    s.transpose_b = transpose_b;
    cpu::matmul_f32(s, lhs.data(), b.data<T>(), out.data());
    return out;
  } else {
    if (transpose_b) return (a * matrix<T>(b).transpose()).array();
    return (a * matrix<T>(b)).array();
  }
}

template <class T>
Rows<T> sigmoid(const Rows<T>& a) {
  return T(1) / (T(1) + (-a).exp());
}

// Checks input `index` (named `name`) has the given shape.
Status check_shape(const char* op, KernelContext& ctx, int index, const char* name, const Shape& want) {
  const Tensor& t = ctx.input(index);
  if (t.shape() == want) return ok_status();
  return Status(Error::invalid_argument, std::string(op) + ": " + name + " must have shape " +
                                             want.to_string() + ", got " + t.shape().to_string());
}

template <class T>
Status check_dtypes(const char* op, KernelContext& ctx) {
  std::vector<const Tensor*> inputs;
  bool ok = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    inputs.push_back(&ctx.input(i));
    ok = ok && holds<T>(ctx.input(i));
  }
  if (ok) return ok_status();
  return input_dtype_error(op, dtype_v<T>, inputs.data(), static_cast<int>(inputs.size()));
}

// batch, input_size and cell_size from x [batch, input] and h_prev (input
// `h_index`) [batch, cell].
Status cell_sizes(const char* op, KernelContext& ctx, int h_index, int64_t* batch, int64_t* input,
                  int64_t* cell) {
  const Tensor& x = ctx.input(0);
  const Tensor& h = ctx.input(h_index);
  if (x.rank() != 2)
    return Status(Error::invalid_argument,
                  std::string(op) + ": x must be a matrix [batch, input_size], got shape " + x.shape().to_string());
  if (h.rank() != 2 || h.dim(0) != x.dim(0))
    return Status(Error::invalid_argument, std::string(op) + ": h_prev must be a matrix [" +
                                               std::to_string(x.dim(0)) + ", cell_size], got shape " +
                                               h.shape().to_string());
  *batch = x.dim(0);
  *input = x.dim(1);
  *cell = h.dim(1);
  return ok_status();
}

// [x, h] as one matrix.
template <class T, class H>
Matrix<T> concat(const Tensor& x, const H& h) {
  Matrix<T> xh(x.dim(0), x.dim(1) + h.cols());
  xh << matrix<T>(x), h;
  return xh;
}

struct LstmAttrs {
  float forget_bias = 1;
  float cell_clip = 3;
  bool use_peephole = false;
};

// Inputs x 0, cs_prev 1, h_prev 2, w 3, wci 4, wcf 5, wco 6, b 7.
Status check_lstm_inputs(const char* op, KernelContext& ctx, int64_t* batch, int64_t* cell) {
  int64_t input = 0;
  TF_RETURN_IF_ERROR(cell_sizes(op, ctx, 2, batch, &input, cell));
  const int64_t b = *batch, c = *cell;
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 1, "cs_prev", Shape{b, c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 3, "w", Shape{input + c, 4 * c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 4, "wci", Shape{c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 5, "wcf", Shape{c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 6, "wco", Shape{c}));
  return check_shape(op, ctx, 7, "b", Shape{4 * c});
}

template <class T>
class LSTMBlockCellKernel final : public Kernel {
 public:
  explicit LSTMBlockCellKernel(LstmAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "LSTMBlockCell";
    TF_RETURN_IF_ERROR(check_dtypes<T>(op, ctx));
    int64_t batch = 0, cell = 0;
    TF_RETURN_IF_ERROR(check_lstm_inputs(op, ctx, &batch, &cell));
    const Matrix<T> xh = concat<T>(ctx.input(0), matrix<T>(ctx.input(2)));
    Rows<T> icfo = product<T>(xh, ctx.input(3));
    icfo.rowwise() += row<T>(ctx.input(7));
    const auto cs_prev = rows<T>(ctx.input(1));
    const T peep = a_.use_peephole ? T(1) : T(0);
    const Rows<T> i = sigmoid<T>(icfo.leftCols(cell) + (cs_prev.rowwise() * (peep * row<T>(ctx.input(4)))));
    const Rows<T> ci = icfo.middleCols(cell, cell).tanh();
    const Rows<T> f = sigmoid<T>((icfo.middleCols(2 * cell, cell) + T(a_.forget_bias)) +
                                 (cs_prev.rowwise() * (peep * row<T>(ctx.input(5)))));
    Rows<T> cs = i * ci + f * cs_prev;
    if (a_.cell_clip > 0) cs = cs.min(T(a_.cell_clip)).max(T(-a_.cell_clip));
    const Rows<T> o = sigmoid<T>(icfo.rightCols(cell) + (cs.rowwise() * (peep * row<T>(ctx.input(6)))));
    const Rows<T> co = cs.tanh();
    ctx.set_output(0, tensor_of<T>(i));
    ctx.set_output(1, tensor_of<T>(cs));
    ctx.set_output(2, tensor_of<T>(f));
    ctx.set_output(3, tensor_of<T>(o));
    ctx.set_output(4, tensor_of<T>(ci));
    ctx.set_output(5, tensor_of<T>(co));
    ctx.set_output(6, tensor_of<T>(o * co));
    return ok_status();
  }

 private:
  LstmAttrs a_;
};

// Inputs 0-7 as LSTMBlockCell's, then i 8, cs 9, f 10, o 11, ci 12, co 13,
// cs_grad 14, h_grad 15.
template <class T>
class LSTMBlockCellGradKernel final : public Kernel {
 public:
  explicit LSTMBlockCellGradKernel(LstmAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "LSTMBlockCellGrad";
    TF_RETURN_IF_ERROR(check_dtypes<T>(op, ctx));
    int64_t batch = 0, cell = 0;
    TF_RETURN_IF_ERROR(check_lstm_inputs(op, ctx, &batch, &cell));
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"};
    for (int k = 0; k < 8; ++k) TF_RETURN_IF_ERROR(check_shape(op, ctx, 8 + k, names[k], Shape{batch, cell}));
    const auto cs_prev = rows<T>(ctx.input(1));
    const auto i = rows<T>(ctx.input(8)), cs = rows<T>(ctx.input(9)), f = rows<T>(ctx.input(10));
    const auto o = rows<T>(ctx.input(11)), ci = rows<T>(ctx.input(12)), co = rows<T>(ctx.input(13));
    const auto cs_grad = rows<T>(ctx.input(14)), h_grad = rows<T>(ctx.input(15));
    const Rows<T> d_o = o * (T(1) - o) * h_grad * co;
    Rows<T> d_cs = (T(1) - co * co) * h_grad * o + cs_grad;
    if (a_.use_peephole) d_cs += d_o.rowwise() * row<T>(ctx.input(6));
    const Rows<T> d_ci = (T(1) - ci * ci) * d_cs * i;
    const Rows<T> d_f = f * (T(1) - f) * d_cs * cs_prev;
    const Rows<T> d_i = i * (T(1) - i) * d_cs * ci;
    Rows<T> dicfo(batch, 4 * cell);
    dicfo << d_i, d_ci, d_f, d_o;
    Rows<T> cs_prev_grad = d_cs * f;
    Row<T> wci_grad = Row<T>::Zero(cell), wcf_grad = Row<T>::Zero(cell), wco_grad = Row<T>::Zero(cell);
    if (a_.use_peephole) {
      cs_prev_grad += (d_i.rowwise() * row<T>(ctx.input(4))) + (d_f.rowwise() * row<T>(ctx.input(5)));
      wci_grad = (d_i * cs_prev).colwise().sum();
      wcf_grad = (d_f * cs_prev).colwise().sum();
      wco_grad = (d_o * cs).colwise().sum();
    }
    ctx.set_output(0, tensor_of<T>(cs_prev_grad));
    ctx.set_output(1, tensor_of<T>(dicfo));
    ctx.set_output(2, vector_of<T>(wci_grad));
    ctx.set_output(3, vector_of<T>(wcf_grad));
    ctx.set_output(4, vector_of<T>(wco_grad));
    return ok_status();
  }

 private:
  LstmAttrs a_;
};

// Inputs x 0, h_prev 1, w_ru 2, w_c 3, b_ru 4, b_c 5.
Status check_gru_inputs(const char* op, KernelContext& ctx, int64_t* batch, int64_t* input, int64_t* cell) {
  TF_RETURN_IF_ERROR(cell_sizes(op, ctx, 1, batch, input, cell));
  const int64_t c = *cell;
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 2, "w_ru", Shape{*input + c, 2 * c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 3, "w_c", Shape{*input + c, c}));
  TF_RETURN_IF_ERROR(check_shape(op, ctx, 4, "b_ru", Shape{2 * c}));
  return check_shape(op, ctx, 5, "b_c", Shape{c});
}

template <class T>
class GRUBlockCellKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const char* op = "GRUBlockCell";
    TF_RETURN_IF_ERROR(check_dtypes<T>(op, ctx));
    int64_t batch = 0, input = 0, cell = 0;
    TF_RETURN_IF_ERROR(check_gru_inputs(op, ctx, &batch, &input, &cell));
    const auto h_prev = rows<T>(ctx.input(1));
    Rows<T> ru_bar = product<T>(concat<T>(ctx.input(0), matrix<T>(ctx.input(1))), ctx.input(2));
    ru_bar.rowwise() += row<T>(ctx.input(4));
    const Rows<T> ru = sigmoid<T>(ru_bar);
    const Rows<T> r = ru.leftCols(cell), u = ru.rightCols(cell);
    const Matrix<T> rh = (r * h_prev).matrix();
    Rows<T> c_bar = product<T>(concat<T>(ctx.input(0), rh), ctx.input(3));
    c_bar.rowwise() += row<T>(ctx.input(5));
    const Rows<T> c = c_bar.tanh();
    ctx.set_output(0, tensor_of<T>(r));
    ctx.set_output(1, tensor_of<T>(u));
    ctx.set_output(2, tensor_of<T>(c));
    ctx.set_output(3, tensor_of<T>(u * h_prev + (T(1) - u) * c));
    return ok_status();
  }
};

// Inputs 0-5 as GRUBlockCell's, then r 6, u 7, c 8, d_h 9.
template <class T>
class GRUBlockCellGradKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const char* op = "GRUBlockCellGrad";
    TF_RETURN_IF_ERROR(check_dtypes<T>(op, ctx));
    int64_t batch = 0, input = 0, cell = 0;
    TF_RETURN_IF_ERROR(check_gru_inputs(op, ctx, &batch, &input, &cell));
    const char* names[] = {"r", "u", "c", "d_h"};
    for (int k = 0; k < 4; ++k) TF_RETURN_IF_ERROR(check_shape(op, ctx, 6 + k, names[k], Shape{batch, cell}));
    const auto h_prev = rows<T>(ctx.input(1));
    const auto r = rows<T>(ctx.input(6)), u = rows<T>(ctx.input(7)), c = rows<T>(ctx.input(8));
    const auto d_h = rows<T>(ctx.input(9));
    const Rows<T> d_c_bar = d_h * (T(1) - u) * (T(1) - c * c);
    const Rows<T> d_u_bar = d_h * (h_prev - c) * u * (T(1) - u);
    // Through c: d[x, r * h_prev] = d_c_bar * w_c^T.
    const Rows<T> d_xrh = product<T>(d_c_bar.matrix(), ctx.input(3), true);
    const Rows<T> d_rh = d_xrh.rightCols(cell);
    const Rows<T> d_r_bar = d_rh * h_prev * r * (T(1) - r);
    Rows<T> d_ru_bar(batch, 2 * cell);
    d_ru_bar << d_r_bar, d_u_bar;
    // Through r and u: d[x, h_prev] = d_ru_bar * w_ru^T.
    const Rows<T> d_xh = product<T>(d_ru_bar.matrix(), ctx.input(2), true);
    ctx.set_output(0, tensor_of<T>(d_xh.leftCols(input) + d_xrh.leftCols(input)));
    ctx.set_output(1, tensor_of<T>(d_xh.rightCols(cell) + d_rh * r + d_h * u));
    ctx.set_output(2, tensor_of<T>(d_c_bar));
    ctx.set_output(3, tensor_of<T>(d_ru_bar));
    return ok_status();
  }
};

template <template <class> class Kern>
KernelFactory lstm_factory(const char* op, bool forward) {
  return [op, forward](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    LstmAttrs a;
    if (forward) {
      TF_ASSIGN_OR_RETURN(a.forget_bias, init.attr<float>("forget_bias"));
      TF_ASSIGN_OR_RETURN(a.cell_clip, init.attr<float>("cell_clip"));
    }
    TF_ASSIGN_OR_RETURN(a.use_peephole, init.attr<bool>("use_peephole"));
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>(a);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

template <template <class> class Kern>
KernelFactory gru_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>();
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

OpDef with_inputs(OpDef def, std::initializer_list<const char*> names) {
  for (const char* n : names) def.input(std::string(n) + ": T");
  return def;
}

OpDef with_outputs(OpDef def, std::initializer_list<const char*> names) {
  for (const char* n : names) def.output(std::string(n) + ": T");
  return def;
}

}  // namespace

void register_rnn_cell_ops(OpRegistry& r) {
  OpDef lstm("LSTMBlockCell");
  lstm.shape_fn(shape_fns::lstm_block_cell).type_attr("T", float_types())
      .attr("forget_bias", "float", 1.0f)
      .attr("cell_clip", "float", 3.0f)
      .attr("use_peephole", "bool", false);
  lstm = with_inputs(std::move(lstm), {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"});
  lstm = with_outputs(std::move(lstm), {"i", "cs", "f", "o", "ci", "co", "h"});
  register_builtin(r, lstm.kernel(lstm_factory<LSTMBlockCellKernel>("LSTMBlockCell", true)));

  OpDef lstm_grad("LSTMBlockCellGrad");
  lstm_grad.shape_fn(shape_fns::lstm_block_cell_grad).type_attr("T", float_types()).attr("use_peephole", "bool");
  lstm_grad = with_inputs(std::move(lstm_grad), {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b", "i",
                                                 "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"});
  lstm_grad = with_outputs(std::move(lstm_grad), {"cs_prev_grad", "dicfo", "wci_grad", "wcf_grad", "wco_grad"});
  register_builtin(r, lstm_grad.kernel(lstm_factory<LSTMBlockCellGradKernel>("LSTMBlockCellGrad", false)));

  OpDef gru("GRUBlockCell");
  gru.shape_fn(shape_fns::gru_block_cell).type_attr("T", float_types());
  gru = with_inputs(std::move(gru), {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c"});
  gru = with_outputs(std::move(gru), {"r", "u", "c", "h"});
  register_builtin(r, gru.kernel(gru_factory<GRUBlockCellKernel>("GRUBlockCell")));

  OpDef gru_grad("GRUBlockCellGrad");
  gru_grad.shape_fn(shape_fns::gru_block_cell_grad).type_attr("T", float_types());
  gru_grad = with_inputs(std::move(gru_grad), {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c", "r", "u", "c", "d_h"});
  gru_grad = with_outputs(std::move(gru_grad), {"d_x", "d_h_prev", "d_c_bar", "d_r_bar_u_bar"});
  register_builtin(r, gru_grad.kernel(gru_factory<GRUBlockCellGradKernel>("GRUBlockCellGrad")));
}

}  // namespace tagflow::ops
