// String ops a saver's graph uses (TensorFlow's string_ops.cc):
// StringJoin, which builds a checkpoint's temporary prefix, and
// StaticRegexFullMatch, which TF2 savers use to tell object-store paths
// ("^s3://.*") from local ones.
//
// StaticRegexFullMatch's pattern is RE2 syntax in TensorFlow; tagflow
// compiles it as a std::regex (ECMAScript), which agrees on the patterns
// savers write (anchors, literals, `.`, `*`, `+`, `?`, classes,
// alternation, groups). RE2-only syntax — `(?i)` flags, `\pL` classes,
// `(?P<name>...)` — is refused as an invalid pattern naming it; matching
// is always a full match of the whole string.
#include <fmt/format.h>

#include <regex>

#include "ops/kernel_factory.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

// TensorFlow's StringJoin: scalars are repeated, every non-scalar input
// must have one and the same shape, which the output takes.
Status string_join(KernelContext& ctx, const std::string& separator) {
  const int n = ctx.num_inputs();
  const Shape* shape = nullptr;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::string)
      return Status(Error::invalid_argument,
                    fmt::format("input {} is {}, not string", i, dtype_name(t.dtype())));
    if (t.rank() == 0) continue;
    if (shape == nullptr) {
      shape = &t.shape();
    } else if (*shape != t.shape()) {
      return Status(Error::invalid_argument,
                    fmt::format("input shapes do not match: {} vs. {} (input {})", shape->to_string(),
                                t.shape().to_string(), i));
    }
  }
  Tensor out(DType::string, shape == nullptr ? Shape{} : *shape);
  std::string* o = out.mutable_data<std::string>();
  for (int64_t e = 0; e < out.num_elements(); ++e) {
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      if (i > 0) o[e] += separator;
      o[e] += t.data<std::string>()[t.rank() == 0 ? 0 : e];
    }
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

class StringJoinKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(separator_, init.attr<std::string>("separator"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override { return string_join(ctx, separator_); }

 private:
  std::string separator_;
};

class StaticRegexFullMatchKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(pattern_, init.attr<std::string>("pattern"));
    try {
      regex_ = std::regex(pattern_, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status(Error::invalid_argument,
                    fmt::format("invalid pattern '{}': {} (tagflow reads the pattern as an ECMAScript "
                                "regular expression)",
                                abbreviate(pattern_), e.what()));
    }
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    if (in.dtype() != DType::string)
      return Status(Error::invalid_argument, "input must be string, not " + dtype_name(in.dtype()));
    Tensor out(DType::boolean, in.shape());
    bool* o = out.mutable_data<bool>();
    const std::string* s = in.data<std::string>();
    try {
      for (int64_t i = 0; i < in.num_elements(); ++i) o[i] = std::regex_match(s[i], regex_);
    } catch (const std::regex_error& e) {
      // std::regex backtracks: a long input can exhaust its stack budget.
      return Status(Error::resource_exhausted,
                    fmt::format("pattern '{}': {}", abbreviate(pattern_), e.what()));
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  std::string pattern_;
  std::regex regex_;
};

}  // namespace

void register_string_ops(OpRegistry& r) {
  register_builtin(r, OpDef("StringJoin").shape_fn(shape_fns::string_join)
                          .input("inputs: N * string")
                          .output("output: string")
                          .attr("N", "int", std::nullopt, 0)
                          .attr("separator", "string", std::string())
                          .kernel(make_kernel_factory<StringJoinKernel>()));
  register_builtin(r, OpDef("StaticRegexFullMatch").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: bool")
                          .attr("pattern", "string")
                          .kernel(make_kernel_factory<StaticRegexFullMatchKernel>()));
}

}  // namespace tagflow::ops
