// The optimiser update ops, with TensorFlow's signatures and arithmetic
// (training_ops.cc): ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
// ApplyRMSProp and ApplyAdam on ref variables (VariableV2), each
// outputting the ref it updated, and their Resource* twins on resource
// variables (VarHandleOp), which output nothing.
//
// An update reads and writes the variable and its slots (accum, m, v, ...)
// as one step under every one of their locks (ResourceManager::
// update_variables). TensorFlow takes the locks only when use_locking is
// set; tagflow always takes them, so the attr is accepted and has no
// further effect. A value a reader still holds is never written: the
// update then works on a copy, which becomes the variable's value.
//
// The arithmetic follows TensorFlow's CPU functors term by term, in T
// (Adam's alpha first, then m, v and var), so float32 results round as
// TensorFlow's scalar code does; where Eigen vectorises an approximate
// function (Adagrad's rsqrt) the last bit may differ. Kernels
// exist for float32, float64 and half; the signature allows any number
// type, as TensorFlow's does, and other types fail with "no kernel".
#include <cmath>
#include <string>
#include <vector>

#include "ops/cwise_kernel.hpp"
#include "ops/op_def.hpp"
#include "ops/resource.hpp"
#include "ops/shape_fns.hpp"
#include "ops/state_kernels.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// One update: n elements of the variable and its slots (in input order),
// the scalar inputs (in input order), the gradient, and the op's flag
// (use_nesterov, or update_slots for Adagrad).
template <class T>
struct Update {
  int64_t n = 0;
  T* var[3] = {nullptr, nullptr, nullptr};
  T s[6] = {};
  const T* grad = nullptr;
  bool flag = false;
};

template <class T>
T sqrt_of(T x) {
  return Eigen::numext::sqrt(x);
}

// var -= delta * alpha
struct GradientDescent {
  template <class T>
  static void apply(const Update<T>& u) {
    T* var = u.var[0];
    for (int64_t i = 0; i < u.n; ++i) var[i] -= u.grad[i] * u.s[0];
  }
};

// accum = accum * momentum + grad; var -= accum * lr, or with Nesterov
// var -= grad * lr + accum * momentum * lr. Scalars: lr, momentum.
struct Momentum {
  template <class T>
  static void apply(const Update<T>& u) {
    T *var = u.var[0], *accum = u.var[1];
    const T lr = u.s[0], momentum = u.s[1];
    for (int64_t i = 0; i < u.n; ++i) {
      const T g = u.grad[i];
      accum[i] = accum[i] * momentum + g;
      if (u.flag) var[i] -= g * lr + accum[i] * momentum * lr;
      else var[i] -= accum[i] * lr;
    }
  }
};

// accum += grad^2 (if update_slots); var -= grad * lr * rsqrt(accum).
struct Adagrad {
  template <class T>
  static void apply(const Update<T>& u) {
    T *var = u.var[0], *accum = u.var[1];
    const T lr = u.s[0];
    for (int64_t i = 0; i < u.n; ++i) {
      const T g = u.grad[i];
      if (u.flag) accum[i] += g * g;
      var[i] -= g * lr * (T(1) / sqrt_of(accum[i]));
    }
  }
};

// ms += (grad^2 - ms) * (1 - rho); mom = mom * momentum + grad * lr /
// sqrt(ms + epsilon); var -= mom. Scalars: lr, rho, momentum, epsilon.
struct RMSProp {
  template <class T>
  static void apply(const Update<T>& u) {
    T *var = u.var[0], *ms = u.var[1], *mom = u.var[2];
    const T lr = u.s[0], rho = u.s[1], momentum = u.s[2], epsilon = u.s[3];
    for (int64_t i = 0; i < u.n; ++i) {
      const T g = u.grad[i];
      ms[i] += (g * g - ms[i]) * (T(1) - rho);
      mom[i] = mom[i] * momentum + (g * lr) / sqrt_of(ms[i] + epsilon);
      var[i] -= mom[i];
    }
  }
};

// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power), computed once in
// T in this order; m += (grad - m) * (1 - beta1); v += (grad^2 - v) *
// (1 - beta2); var -= m * alpha / (sqrt(v) + epsilon), or with Nesterov
// var -= (grad * (1 - beta1) + beta1 * m) * alpha / (sqrt(v) + epsilon).
// Scalars: beta1_power, beta2_power, lr, beta1, beta2, epsilon.
struct Adam {
  template <class T>
  static void apply(const Update<T>& u) {
    T *var = u.var[0], *m = u.var[1], *v = u.var[2];
    const T beta1_power = u.s[0], beta2_power = u.s[1], lr = u.s[2], beta1 = u.s[3],
            beta2 = u.s[4], epsilon = u.s[5];
    const T alpha = lr * sqrt_of(T(1) - beta2_power) / (T(1) - beta1_power);
    for (int64_t i = 0; i < u.n; ++i) {
      const T g = u.grad[i];
      m[i] += (g - m[i]) * (T(1) - beta1);
      v[i] += (g * g - v[i]) * (T(1) - beta2);
      const T step = u.flag ? (g * (T(1) - beta1) + beta1 * m[i]) * alpha : m[i] * alpha;
      var[i] -= step / (sqrt_of(v[i]) + epsilon);
    }
  }
};

// What an op's inputs are: the variable and its slots, the scalars and the
// one tensor the size of the variable (grad, or delta), by name and in
// input order.
enum class Role { variable, scalar, tensor };
struct Arg {
  const char* name;
  Role role;
};

struct Spec {
  const char* op;            // the ref form's name; "Resource" + op for the other
  std::vector<Arg> args;
  const char* flag_attr;     // nullptr when the op has no flag
  bool flag_default;
};

// The variable's value, writable: its own buffer, or a copy when a reader
// still holds it (tensors are immutable once shared).
Status make_writable(Tensor& value) {
  if (value.is_unique()) return ok_status();
  TF_ASSIGN_OR_RETURN(Tensor copy, allocate_uninitialized(value.dtype(), value.shape()));
  copy_elements(value, 0, copy, 0, value.num_elements());
  value = std::move(copy);
  return ok_status();
}

template <class Algo>
class ApplyKernel final : public Kernel {
 public:
  ApplyKernel(Spec spec, std::string op, DType dtype, bool ref, bool flag)
      : spec_(std::move(spec)), op_(std::move(op)), dtype_(dtype), ref_(ref), flag_(flag) {}

  Status compute(KernelContext& ctx) const override {
    const int num_inputs = static_cast<int>(spec_.args.size());
    TF_ASSIGN_OR_RETURN(ResourceManager * rm,
                        state_kernels::session_state(ctx, num_inputs, ref_ ? 1 : 0));
    std::vector<std::string> names;
    std::vector<const char*> var_args;
    const Tensor* grad = nullptr;
    const char* grad_name = nullptr;
    std::vector<const Tensor*> scalars;
    for (int i = 0; i < num_inputs; ++i) {
      const Arg& arg = spec_.args[static_cast<size_t>(i)];
      const Tensor& t = ctx.input(i);
      if (arg.role == Role::variable) {
        TF_ASSIGN_OR_RETURN(std::string name, handle_name(t, arg.name));
        names.push_back(std::move(name));
        var_args.push_back(arg.name);
        continue;
      }
      if (!t.valid() || t.dtype() != dtype_)
        return Status(Error::invalid_argument,
                      op_ + " input " + arg.name + " must be " + dtype_name(dtype_) + ", got " +
                          (t.valid() ? dtype_name(t.dtype()) : std::string("no tensor")));
      if (arg.role == Role::tensor) {
        grad = &t;
        grad_name = arg.name;
      } else if (!t.shape().is_scalar()) {
        return Status(Error::invalid_argument,
                      op_ + ": " + arg.name + " is not a scalar: " + t.shape().to_string());
      } else {
        scalars.push_back(&t);
      }
    }
    TF_RETURN_IF_ERROR(rm->update_variables(names, [&](const std::vector<Tensor*>& values) {
      return apply(values, names, var_args, scalars, *grad, grad_name);
    }));
    if (ref_) ctx.set_output(0, ctx.input(0));
    return ok_status();
  }

 private:
  Status apply(const std::vector<Tensor*>& values, const std::vector<std::string>& names,
               const std::vector<const char*>& var_args, const std::vector<const Tensor*>& scalars,
               const Tensor& grad, const char* grad_name) const {
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i]->dtype() != dtype_)
        return Status(Error::invalid_argument,
                      op_ + ": " + var_args[i] + " (variable '" + names[i] + "') holds " +
                          dtype_name(values[i]->dtype()) + ", not " + dtype_name(dtype_));
    const Shape& shape = values[0]->shape();
    auto mismatch = [&](const char* other, const Shape& other_shape) {
      return Status(Error::invalid_argument, op_ + ": var and " + other +
                                                 " do not have the same shape: " +
                                                 shape.to_string() + " vs " +
                                                 other_shape.to_string());
    };
    for (size_t i = 1; i < values.size(); ++i)
      if (values[i]->shape() != shape) return mismatch(var_args[i], values[i]->shape());
    if (grad.shape() != shape) return mismatch(grad_name, grad.shape());
    for (Tensor* v : values) TF_RETURN_IF_ERROR(make_writable(*v));
    switch (dtype_) {
      case DType::float32: run<float>(values, scalars, grad); break;
      case DType::float64: run<double>(values, scalars, grad); break;
      default: run<Eigen::half>(values, scalars, grad); break;
    }
    return ok_status();
  }

  template <class T>
  void run(const std::vector<Tensor*>& values, const std::vector<const Tensor*>& scalars,
           const Tensor& grad) const {
    Update<T> u;
    u.n = values[0]->num_elements();
    for (size_t i = 0; i < values.size(); ++i) u.var[i] = values[i]->mutable_data<T>();
    for (size_t i = 0; i < scalars.size(); ++i) u.s[i] = scalars[i]->scalar_value<T>();
    u.grad = grad.data<T>();
    u.flag = flag_;
    Algo::apply(u);
  }

  Spec spec_;
  std::string op_;
  DType dtype_;
  bool ref_;
  bool flag_;
};

template <class Algo>
KernelFactory apply_factory(const Spec& spec, bool ref) {
  return [spec, ref](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    const std::string op = ref ? spec.op : "Resource" + std::string(spec.op);
    TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("T"));
    if (dtype != DType::float32 && dtype != DType::float64 && dtype != DType::half)
      return no_kernel_error(op.c_str(), dtype);
    bool flag = spec.flag_default;
    if (spec.flag_attr != nullptr) {
      TF_ASSIGN_OR_RETURN(flag, init.attr<bool>(spec.flag_attr));
    }
    return std::unique_ptr<Kernel>(new ApplyKernel<Algo>(spec, op, dtype, ref, flag));
  };
}

// TensorFlow's `numbertype`.
std::vector<DType> number_types() {
  return {DType::float32,   DType::float64,    DType::int32,  DType::uint8,   DType::int16,
          DType::int8,      DType::complex64,  DType::int64,  DType::qint8,   DType::quint8,
          DType::qint32,    DType::bfloat16,   DType::qint16, DType::quint16, DType::uint16,
          DType::complex128, DType::half,      DType::uint32, DType::uint64};
}

// Registers `spec` twice: on ref variables (var: Ref(T) ..., out: Ref(T))
// and on resource variables (var: resource ..., no output).
template <class Algo>
void register_update(OpRegistry& r, const Spec& spec) {
  for (bool ref : {true, false}) {
    OpDef d(ref ? spec.op : "Resource" + std::string(spec.op));
    d.shape_fn(ref ? shape_fns::of_input<0> : shape_fns::none);
    for (const Arg& arg : spec.args) {
      const std::string name = arg.name;
      if (arg.role != Role::variable) d.input(name + ": T");
      else d.input(name + (ref ? ": Ref(T)" : ": resource"));
    }
    if (ref) d.output("out: Ref(T)");
    d.type_attr("T", number_types()).attr("use_locking", "bool", false);
    if (spec.flag_attr != nullptr) d.attr(spec.flag_attr, "bool", spec.flag_default);
    register_builtin(r, std::move(d.stateful().kernel(apply_factory<Algo>(spec, ref))));
  }
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  constexpr Role V = Role::variable, S = Role::scalar, G = Role::tensor;
  register_update<GradientDescent>(
      r, {"ApplyGradientDescent", {{"var", V}, {"alpha", S}, {"delta", G}}, nullptr, false});
  register_update<Momentum>(
      r, {"ApplyMomentum", {{"var", V}, {"accum", V}, {"lr", S}, {"grad", G}, {"momentum", S}},
          "use_nesterov", false});
  register_update<Adagrad>(
      r, {"ApplyAdagrad", {{"var", V}, {"accum", V}, {"lr", S}, {"grad", G}}, "update_slots",
          true});
  register_update<RMSProp>(r, {"ApplyRMSProp",
                               {{"var", V}, {"ms", V}, {"mom", V}, {"lr", S}, {"rho", S},
                                {"momentum", S}, {"epsilon", S}, {"grad", G}},
                               nullptr, false});
  register_update<Adam>(r, {"ApplyAdam",
                            {{"var", V}, {"m", V}, {"v", V}, {"beta1_power", S},
                             {"beta2_power", S}, {"lr", S}, {"beta1", S}, {"beta2", S},
                             {"epsilon", S}, {"grad", G}},
                            "use_nesterov", false});
}

}  // namespace tagflow::ops
