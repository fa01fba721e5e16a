// Kernels that fail on purpose: Assert (when its condition is false) and
// Abort. Their errors are ordinary Status values that the executor turns
// into a failed step naming the node and the tag.
#include <algorithm>
#include <sstream>
#include <type_traits>

#include "ops/state_kernels.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops::state_kernels {

namespace {

// The first `max` elements of t, flat and space-separated, "..." after them
// if there are more (max < 0: all); strings unquoted. TensorFlow's
// SummarizeValue, which Assert messages use.
std::string summarize(const Tensor& t, int64_t max) {
  if (!t.valid()) return "<no tensor>";
  const int64_t n = t.num_elements();
  const int64_t shown = max < 0 ? n : std::min(n, max);
  std::ostringstream os;
  os.precision(9);
  auto print_all = [&](auto print_one) {
    for (int64_t i = 0; i < shown; ++i) {
      if (i > 0) os << ' ';
      print_one(i);
    }
  };
  if (base_dtype(t.dtype()) == DType::variant) {
    const VariantPtr* v = t.data<VariantPtr>();
    print_all([&](int64_t i) { os << variant_debug_string(v[i]); });
  } else if (dtype_is_object(t.dtype())) {
    const std::string* s = t.data<std::string>();
    print_all([&](int64_t i) { os << s[i]; });
  } else if (!dispatch_pod(base_dtype(t.dtype()), [&](auto tag) {
               using T = decltype(tag);
               const T* v = t.data<T>();
               print_all([&](int64_t i) {
                 if constexpr (std::is_same_v<T, bool>) os << (v[i] ? "true" : "false");
                 else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>)
                   os << static_cast<int>(v[i]);
                 else if constexpr (std::is_same_v<T, Eigen::half> ||
                                    std::is_same_v<T, Eigen::bfloat16>)
                   os << static_cast<float>(v[i]);
                 else os << v[i];
               });
             })) {
    return "<" + dtype_name(t.dtype()) + t.shape().to_string() + ">";
  }
  if (shown < n) os << (shown > 0 ? " ..." : "...");
  return os.str();
}

class AssertKernel final : public Kernel {
 public:
  explicit AssertKernel(int64_t summarize) : summarize_(summarize) {}

  Status compute(KernelContext& ctx) const override {
    TF_RETURN_IF_ERROR(check_arity(ctx, std::max(ctx.num_inputs(), 1), 0));
    const Tensor& condition = ctx.input(0);
    if (!condition.valid() || condition.dtype() != DType::boolean ||
        condition.num_elements() != 1)
      return Status(Error::invalid_argument,
                    "Assert's condition must be a bool scalar, got " +
                        (condition.valid() ? condition.debug_string(4) : "no tensor"));
    if (condition.scalar_value<bool>()) return ok_status();
    std::string message = "assertion failed:";
    for (int i = 1; i < ctx.num_inputs(); ++i)
      message += " [" + summarize(ctx.input(i), summarize_) + "]";
    return Status(Error::invalid_argument, message);
  }

 private:
  int64_t summarize_;
};

class AbortKernel final : public Kernel {
 public:
  explicit AbortKernel(std::string message) : message_(std::move(message)) {}
  Status compute(KernelContext&) const override {
    return Status(Error::aborted, message_);
  }

 private:
  std::string message_;
};

}  // namespace

Made assert_op(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(int64_t summarize, init.attr<int64_t>("summarize"));
  return std::unique_ptr<Kernel>(new AssertKernel(summarize));
}

// TensorFlow's Abort with exit_without_error ends the process with status
// 0; a library must not, so tagflow fails the step either way and says so.
Made abort_op(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(std::string error_msg, init.attr<std::string>("error_msg"));
  TF_ASSIGN_OR_RETURN(bool exit_without_error, init.attr<bool>("exit_without_error"));
  std::string message = "Abort op ran" + (error_msg.empty() ? "" : ": " + error_msg);
  if (exit_without_error) message += " (exit_without_error: the step stops here)";
  return std::unique_ptr<Kernel>(new AbortKernel(std::move(message)));
}

}  // namespace tagflow::ops::state_kernels
