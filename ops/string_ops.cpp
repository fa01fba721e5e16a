// The elementwise string ops of TensorFlow's string_ops.cc, and the
// registration of the whole string family: StringJoin (which builds a
// checkpoint's temporary prefix); RegexReplace, StaticRegexReplace,
// RegexFullMatch, StaticRegexFullMatch (which TF2 savers use to tell
// object-store paths from local ones); StringLower, StringUpper,
// StringStrip, StringLength. The rest of the family is registered from
// here too: string_split_ops.cpp (StringSplit, StringSplitV2, ReduceJoin,
// Substr) and string_convert_ops.cpp (AsString, StringToNumber).
//
// Patterns are RE2, the engine TensorFlow uses, so a pattern means here
// what it means in TensorFlow; RE2 matches in time linear in the input.
// The case ops map ASCII only by default; with encoding "utf-8" each code
// point takes its simple (one to one) Unicode case mapping from the C.UTF-8
// locale, where TensorFlow's ICU applies full mappings: "ß" stays "ß" in
// upper case here (ICU: "SS"), "İ" lowers to "i" (ICU: "i̇") and a final
// capital sigma lowers to "σ" (ICU: "ς"). Ill-formed UTF-8 becomes U+FFFD,
// as ICU converts it.
#include <fmt/format.h>
#include <locale.h>
#include <re2/re2.h>
#include <wctype.h>

#include <memory>
#include <mutex>

#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/number_text.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"
#include "ops/utf8.hpp"

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


// --- regular expressions ------------------------------------------------------

using RegexPtr = std::shared_ptr<const RE2>;

// Compiles a pattern without RE2's logging to stderr; an invalid one is
// an error naming it and what RE2 found wrong.
Expected<RegexPtr> compile_pattern(const std::string& pattern) {
  auto regex = std::make_shared<const RE2>(pattern, RE2::Options(RE2::Quiet));
  if (!regex->ok())
    return Status(Error::invalid_argument,
                  fmt::format("invalid pattern '{}': {}", abbreviate(pattern), regex->error()));
  return RegexPtr(std::move(regex));
}

// The pattern of the ops that take it as an input: a scalar, compiled
// once for as long as it stays the same (TensorFlow caches the last one
// the same way), so that a constant pattern is not recompiled per step.
class PatternInput {
 public:
  Expected<RegexPtr> regex(const Tensor& pattern) const {
    if (pattern.rank() != 0)
      return Status(Error::invalid_argument,
                    "pattern must be a scalar, got shape " + pattern.shape().to_string());
    const std::string& text = pattern.scalar_value<std::string>();
    std::lock_guard<std::mutex> lock(mu_);
    if (last_ == nullptr || last_->pattern() != text) {
      TF_ASSIGN_OR_RETURN(last_, compile_pattern(text));
    }
    return last_;
  }

 private:
  mutable std::mutex mu_;
  mutable RegexPtr last_;
};

// RE2 leaves a string unchanged when the rewrite names a group the
// pattern lacks or has a bad escape; an error says so instead.
Status check_rewrite(const RE2& regex, const std::string& rewrite) {
  std::string why;
  if (!regex.CheckRewriteString(rewrite, &why))
    return Status(Error::invalid_argument,
                  fmt::format("invalid rewrite '{}' for pattern '{}': {}", abbreviate(rewrite),
                              abbreviate(regex.pattern()), why));
  return ok_status();
}

// Replaces the first match, or every non-overlapping match, of `regex` in
// each string; `\0`..`\9` in the rewrite are the groups.
Status regex_replace(KernelContext& ctx, const RE2& regex, const std::string& rewrite, bool global) {
  TF_RETURN_IF_ERROR(check_rewrite(regex, rewrite));
  const Tensor& in = ctx.input(0);
  Tensor out(DType::string, in.shape());
  std::string* o = out.mutable_data<std::string>();
  const std::string* s = in.data<std::string>();
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    o[i] = s[i];
    if (global) RE2::GlobalReplace(&o[i], regex, rewrite);
    else RE2::Replace(&o[i], regex, rewrite);
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status regex_full_match(KernelContext& ctx, const RE2& regex) {
  const Tensor& in = ctx.input(0);
  Tensor out(DType::boolean, in.shape());
  bool* o = out.mutable_data<bool>();
  const std::string* s = in.data<std::string>();
  for (int64_t i = 0; i < in.num_elements(); ++i) o[i] = RE2::FullMatch(s[i], regex);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

class RegexReplaceKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(global_, init.attr<bool>("replace_global"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(RegexPtr regex, pattern_.regex(ctx.input(1)));
    const Tensor& rewrite = ctx.input(2);
    if (rewrite.rank() != 0)
      return Status(Error::invalid_argument,
                    "rewrite must be a scalar, got shape " + rewrite.shape().to_string());
    return regex_replace(ctx, *regex, rewrite.scalar_value<std::string>(), global_);
  }

 private:
  PatternInput pattern_;
  bool global_ = true;
};

class StaticRegexReplaceKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(std::string pattern, init.attr<std::string>("pattern"));
    TF_ASSIGN_OR_RETURN(regex_, compile_pattern(pattern));
    TF_ASSIGN_OR_RETURN(rewrite_, init.attr<std::string>("rewrite"));
    TF_ASSIGN_OR_RETURN(global_, init.attr<bool>("replace_global"));
    return check_rewrite(*regex_, rewrite_);
  }
  Status compute(KernelContext& ctx) const override {
    return regex_replace(ctx, *regex_, rewrite_, global_);
  }

 private:
  RegexPtr regex_;
  std::string rewrite_;
  bool global_ = true;
};

class RegexFullMatchKernel final : public Kernel {
 public:
  Status init(const KernelInit&) { return ok_status(); }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(RegexPtr regex, pattern_.regex(ctx.input(1)));
    return regex_full_match(ctx, *regex);
  }

 private:
  PatternInput pattern_;
};

class StaticRegexFullMatchKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(std::string pattern, init.attr<std::string>("pattern"));
    TF_ASSIGN_OR_RETURN(regex_, compile_pattern(pattern));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override { return regex_full_match(ctx, *regex_); }

 private:
  RegexPtr regex_;
};

// The scalar pattern and rewrite inputs of RegexReplace, RegexFullMatch.
Status regex_input_shapes(InferenceContext& c) {
  for (int i = 1; i < c.num_inputs(); ++i) {
    const PartialShape& s = c.input_shape(i);
    if (shape::known_rank(s) && shape::rank(s) != 0)
      return c.error(fmt::format("input {} must be a scalar, got {}", i, s.to_string()));
  }
  c.set_output(0, c.input_shape(0));
  return ok_status();
}

// --- elementwise: case, whitespace, length --------------------------------------

// Applies f to every string of input 0, into a string tensor of its shape.
template <class F>
Status map_strings(KernelContext& ctx, F&& f) {
  const Tensor& in = ctx.input(0);
  Tensor out(DType::string, in.shape());
  std::string* o = out.mutable_data<std::string>();
  const std::string* s = in.data<std::string>();
  for (int64_t i = 0; i < in.num_elements(); ++i) o[i] = f(s[i]);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

// The C.UTF-8 locale, whose towlower/towupper know all of Unicode's
// simple case mappings; made once, never freed (locales are immutable).
locale_t utf8_ctype() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  return locale;
}

enum class Case { lower, upper };

std::string ascii_case(const std::string& s, Case to) {
  std::string out = s;
  for (char& c : out) {
    if (to == Case::lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (to == Case::upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string unicode_case(const std::string& s, Case to, locale_t locale) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    const auto wc = static_cast<wint_t>(d.code_point);
    const wint_t mapped = to == Case::lower ? towlower_l(wc, locale) : towupper_l(wc, locale);
    utf8::append(out, static_cast<char32_t>(mapped));
    i += d.size;
  }
  return out;
}

// StringLower, StringUpper: `encoding` "" (ASCII letters only, other bytes
// as they are) or "utf-8".
template <Case kTo>
class CaseKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(std::string encoding, init.attr<std::string>("encoding"));
    if (!encoding.empty() && encoding != "utf-8")
      return Status(Error::invalid_argument,
                    "only utf-8 or '' (no encoding) is supported, received '" + abbreviate(encoding) + "'");
    utf8_ = !encoding.empty();
    if (utf8_ && utf8_ctype() == locale_t{})
      return Status(Error::unimplemented, "encoding utf-8 needs the C.UTF-8 locale, which this system lacks");
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    if (!utf8_) return map_strings(ctx, [](const std::string& s) { return ascii_case(s, kTo); });
    const locale_t locale = utf8_ctype();
    return map_strings(ctx, [locale](const std::string& s) { return unicode_case(s, kTo, locale); });
  }

 private:
  bool utf8_ = false;
};

Status string_strip(KernelContext& ctx) {
  return map_strings(ctx, [](const std::string& s) { return std::string(number_text::trim_space(s)); });
}

class StringLengthKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(unit_, utf8::char_unit(init));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    Tensor out(DType::int32, in.shape());
    int32_t* o = out.mutable_data<int32_t>();
    const std::string* s = in.data<std::string>();
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      const int64_t n = unit_ == utf8::CharUnit::byte ? static_cast<int64_t>(s[i].size()) : utf8::length(s[i]);
      o[i] = static_cast<int32_t>(n);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  utf8::CharUnit unit_ = utf8::CharUnit::byte;
};

}  // namespace

void register_string_ops(OpRegistry& r) {
  register_builtin(r, OpDef("StringJoin").shape_fn(shape_fns::string_join)
                          .input("inputs: N * string")
                          .output("output: string")
                          .attr("N", "int", std::nullopt, 0)
                          .attr("separator", "string", std::string())
                          .kernel(make_kernel_factory<StringJoinKernel>()));
  register_builtin(r, OpDef("RegexReplace").shape_fn(regex_input_shapes)
                          .input("input: string")
                          .input("pattern: string")
                          .input("rewrite: string")
                          .output("output: string")
                          .attr("replace_global", "bool", true)
                          .kernel(make_kernel_factory<RegexReplaceKernel>()));
  register_builtin(r, OpDef("StaticRegexReplace").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: string")
                          .attr("pattern", "string")
                          .attr("rewrite", "string")
                          .attr("replace_global", "bool", true)
                          .kernel(make_kernel_factory<StaticRegexReplaceKernel>()));
  register_builtin(r, OpDef("RegexFullMatch").shape_fn(regex_input_shapes)
                          .input("input: string")
                          .input("pattern: string")
                          .output("output: bool")
                          .kernel(make_kernel_factory<RegexFullMatchKernel>()));
  register_builtin(r, OpDef("StaticRegexFullMatch").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: bool")
                          .attr("pattern", "string")
                          .kernel(make_kernel_factory<StaticRegexFullMatchKernel>()));
  register_builtin(r, OpDef("StringLower").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: string")
                          .attr("encoding", "string", std::string())
                          .kernel(make_kernel_factory<CaseKernel<Case::lower>>()));
  register_builtin(r, OpDef("StringUpper").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: string")
                          .attr("encoding", "string", std::string())
                          .kernel(make_kernel_factory<CaseKernel<Case::upper>>()));
  register_builtin(r, OpDef("StringStrip").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: string")
                          .kernel_fn(string_strip));
  register_builtin(r, OpDef("StringLength").shape_fn(shape_fns::unary)
                          .input("input: string")
                          .output("output: int32")
                          .attr("unit", "string", std::string("BYTE"))
                          .kernel(make_kernel_factory<StringLengthKernel>()));
  register_string_split_ops(r);
  register_string_convert_ops(r);
}

}  // namespace tagflow::ops
