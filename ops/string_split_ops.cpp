// The string ops of TensorFlow's string_ops.cc that cut strings apart or
// join them along dimensions: StringSplit and StringSplitV2 (a vector of
// strings to the indices, values and dense shape of a SparseTensor of
// tokens), ReduceJoin and Substr. Registered by register_string_ops.
//
// Substr broadcasts its strings against pos and len (which have one shape)
// by NumPy's rules at any rank, where TensorFlow's kernel stops at rank 2.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "ops/array_ops.hpp"
#include "ops/broadcast.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/number_text.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"
#include "ops/utf8.hpp"

namespace tagflow::ops {

namespace {

// --- StringSplit, StringSplitV2 ------------------------------------------------

using Tokens = std::vector<std::string>;

// StringSplit: a token ends at any byte of `delimiters`; no delimiters
// make every byte a token. An empty string has no tokens, with or without
// skip_empty (TensorFlow's str_util::Split).
void split_at_any(std::string_view s, std::string_view delimiters, bool skip_empty, Tokens& out) {
  if (s.empty()) return;
  if (delimiters.empty()) {
    for (char c : s) out.emplace_back(1, c);
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && delimiters.find(s[i]) == std::string_view::npos) continue;
    if (!skip_empty || i > start) out.emplace_back(s.substr(start, i - start));
    start = i + 1;
  }
}

using number_text::is_ascii_space;

std::string_view skip_leading_space(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_ascii_space(s[i])) ++i;
  return s.substr(i);
}

// StringSplitV2 without a separator, as Python's str.split(None, maxsplit):
// runs of whitespace separate tokens. Once maxsplit tokens are cut, the
// rest (leading whitespace skipped, possibly empty) is the last token.
void split_at_whitespace(std::string_view s, int64_t maxsplit, Tokens& out) {
  s = skip_leading_space(s);
  int64_t splits = 0;
  while (!s.empty()) {
    size_t end = 0;
    while (end < s.size() && !is_ascii_space(s[end])) ++end;
    out.emplace_back(s.substr(0, end));
    s = skip_leading_space(s.substr(end));
    if (maxsplit > 0 && ++splits == maxsplit) {
      out.emplace_back(s);
      return;
    }
  }
}

// StringSplitV2 with a separator, as Python's str.split(sep, maxsplit):
// every occurrence separates, empty tokens included ("" is [""]).
void split_at_separator(std::string_view s, std::string_view sep, int64_t maxsplit, Tokens& out) {
  int64_t splits = 0;
  for (size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep)) {
    out.emplace_back(s.substr(0, at));
    s = s.substr(at + sep.size());
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  out.emplace_back(s);
}

// The tokens of each string of a vector, as a SparseTensor: indices
// [M, 2] (row, position), values [M], dense shape [N, longest row].
template <class SplitOne>
Status split_strings(KernelContext& ctx, const char* separator_name, SplitOne&& split_one) {
  const Tensor& in = ctx.input(0);
  const Tensor& sep = ctx.input(1);
  if (in.rank() != 1)
    return Status(Error::invalid_argument, "input must be a vector, got shape: " + in.shape().to_string());
  if (sep.rank() != 0)
    return Status(Error::invalid_argument,
                  fmt::format("{} must be a scalar, got shape: {}", separator_name, sep.shape().to_string()));
  const std::string& separator = sep.scalar_value<std::string>();
  Tokens tokens;
  std::vector<int64_t> row_ends;
  int64_t longest = 0;
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    const size_t before = tokens.size();
    split_one(in.data<std::string>()[i], separator, tokens);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(tokens.size() - before));
    row_ends.push_back(static_cast<int64_t>(tokens.size()));
  }
  const auto m = static_cast<int64_t>(tokens.size());
  Tensor indices(DType::int64, Shape{m, 2});
  Tensor values(DType::string, Shape{m});
  int64_t* index = indices.mutable_data<int64_t>();
  std::string* value = values.mutable_data<std::string>();
  int64_t k = 0;
  for (int64_t row = 0; row < in.num_elements(); ++row) {
    for (int64_t col = 0; k < row_ends[static_cast<size_t>(row)]; ++col, ++k) {
      index[2 * k] = row;
      index[2 * k + 1] = col;
      value[k] = std::move(tokens[static_cast<size_t>(k)]);
    }
  }
  ctx.set_output(0, std::move(indices));
  ctx.set_output(1, std::move(values));
  ctx.set_output(2, Tensor::vector<int64_t>({in.num_elements(), longest}));
  return ok_status();
}

class StringSplitKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(skip_empty_, init.attr<bool>("skip_empty"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    return split_strings(ctx, "delimiter", [this](const std::string& s, const std::string& d, Tokens& out) {
      split_at_any(s, d, skip_empty_, out);
    });
  }

 private:
  bool skip_empty_ = true;
};

class StringSplitV2Kernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(maxsplit_, init.attr<int64_t>("maxsplit"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    return split_strings(ctx, "sep", [this](const std::string& s, const std::string& sep, Tokens& out) {
      if (maxsplit_ == 0) out.push_back(s);
      else if (sep.empty()) split_at_whitespace(s, maxsplit_, out);
      else split_at_separator(s, sep, maxsplit_, out);
    });
  }

 private:
  int64_t maxsplit_ = -1;
};

// A vector of strings and a scalar separator, to [?, 2], [?] and [2].
Status split_shapes(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  const PartialShape& sep = c.input_shape(1);
  if (shape::known_rank(in) && shape::rank(in) != 1)
    return c.error("input must be a vector, got " + in.to_string());
  if (shape::known_rank(sep) && shape::rank(sep) != 0)
    return c.error("the separator must be a scalar, got " + sep.to_string());
  c.set_output(0, shape::known({-1, 2}));
  c.set_output(1, shape::vector(-1));
  c.set_output(2, shape::vector(2));
  return ok_status();
}

// --- ReduceJoin ------------------------------------------------------------------

// Element offsets of each dimension of a row-major shape.
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> strides(static_cast<size_t>(s.rank()));
  int64_t step = 1;
  for (int d = s.rank() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = step;
    step *= s.dim(d);
  }
  return strides;
}

// The offset of the index'th element of the sub-space spanned by `dims`,
// the last of them varying fastest.
int64_t offset_in(int64_t index, const std::vector<int>& dims, const Shape& shape,
                  const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    offset += index % shape.dim(*d) * strides[static_cast<size_t>(*d)];
    index /= shape.dim(*d);
  }
  return offset;
}

// Joins the strings along the dimensions of reduction_indices (scalar or
// vector, negative counting from the end; none: each string as it is).
// The first dimension listed varies fastest in each joined string, as in
// TensorFlow: for [["a","b"],["c","d"]], [1,0] gives "abcd", [0,1] "acbd".
class ReduceJoinKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(keep_dims_, init.attr<bool>("keep_dims"));
    TF_ASSIGN_OR_RETURN(separator_, init.attr<std::string>("separator"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    const Tensor& axes = ctx.input(1);
    const int rank = in.rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    std::vector<int> join_order;  // the dims listed, first last: it varies fastest
    for (int64_t i = 0; i < axes.num_elements(); ++i) {
      const int32_t axis = axes.data<int32_t>()[i];
      if (axis < -rank || axis >= rank)
        return Status(Error::out_of_range, fmt::format("Invalid reduction dimension {} for input with {} "
                                                       "dimension(s)", axis, rank));
      const int d = axis < 0 ? axis + rank : axis;
      if (reduced[static_cast<size_t>(d)])
        return Status(Error::invalid_argument, fmt::format("Duplicate reduction dimension {}", axis));
      reduced[static_cast<size_t>(d)] = true;
      join_order.insert(join_order.begin(), d);
    }
    std::vector<int> kept;
    Shape out_shape;
    int64_t joined = 1;  // strings per output element
    for (int d = 0; d < rank; ++d) {
      if (!reduced[static_cast<size_t>(d)]) kept.push_back(d);
      if (!reduced[static_cast<size_t>(d)] || keep_dims_) out_shape.add_dim(reduced[static_cast<size_t>(d)] ? 1 : in.dim(d));
      if (reduced[static_cast<size_t>(d)]) joined *= in.dim(d);
    }
    const std::vector<int64_t> strides = strides_of(in.shape());
    Tensor out(DType::string, out_shape);
    std::string* o = out.mutable_data<std::string>();
    const std::string* s = in.data<std::string>();
    for (int64_t e = 0; e < out.num_elements(); ++e) {
      const int64_t base = offset_in(e, kept, in.shape(), strides);
      for (int64_t k = 0; k < joined; ++k) {
        if (k > 0) o[e] += separator_;
        o[e] += s[base + offset_in(k, join_order, in.shape(), strides)];
      }
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

// --- Substr ------------------------------------------------------------------------

// Moves *at over n characters forward (back); false if the string ends
// (begins) first or n < 0.
bool forward_chars(std::string_view s, int64_t n, size_t* at) {
  int64_t moved = 0;
  for (; moved < n && *at < s.size(); ++moved) {
    do ++*at;
    while (*at < s.size() && utf8::is_continuation(s[*at]));
  }
  return moved == n;
}

bool back_chars(std::string_view s, int64_t n, size_t* at) {
  int64_t moved = 0;
  for (; moved < n && *at > 0; ++moved) {
    do --*at;
    while (*at > 0 && utf8::is_continuation(s[*at]));
  }
  return moved == n;
}

// The bytes [*begin, *end) of the len characters from character pos
// (negative: from the end); false if pos is outside the string. A
// negative pos needs len >= 0, and len is cut at the string's end.
bool utf8_span(std::string_view s, int64_t pos, int64_t len, size_t* begin, size_t* end) {
  if (pos >= 0) {
    *begin = 0;
    if (!forward_chars(s, pos, begin)) return false;
    *end = *begin;
    forward_chars(s, len, end);
    return true;
  }
  if (pos < -static_cast<int64_t>(s.size())) return false;  // more characters than bytes
  int64_t from_end = 0;                                      // characters after the span
  if (__builtin_sub_overflow(-pos, len, &from_end)) from_end = INT64_MAX;
  from_end = std::max<int64_t>(from_end, 0);
  *end = s.size();
  if (!back_chars(s, from_end, end)) return false;
  *begin = *end;
  return back_chars(s, -pos - from_end, begin);
}

// The substring of s as Substr takes it, or an error naming the element.
Expected<std::string> substring(const std::string& s, int64_t pos, int64_t len, utf8::CharUnit unit,
                                int64_t index) {
  if (unit == utf8::CharUnit::utf8_char) {
    size_t begin = 0, end = 0;
    if (!utf8_span(s, pos, len, &begin, &end))
      return Status(Error::invalid_argument, fmt::format("pos {} out of range for string at index {}", pos, index));
    return s.substr(begin, end - begin);
  }
  const auto size = static_cast<int64_t>(s.size());
  const int64_t begin = pos < 0 ? pos + size : pos;
  if (begin < 0 || begin > size)
    return Status(Error::invalid_argument,
                  fmt::format("pos {} out of range for string b'{}' at index {}", pos, abbreviate(s), index));
  const int64_t count = len < 0 || len > size - begin ? size - begin : len;
  return s.substr(static_cast<size_t>(begin), static_cast<size_t>(count));
}

class SubstrKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(unit_, utf8::char_unit(init));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    const Tensor& pos_t = ctx.input(1);
    const Tensor& len_t = ctx.input(2);
    if (pos_t.shape() != len_t.shape())
      return Status(Error::invalid_argument, "pos and len should have the same shape, got: " +
                                                 pos_t.shape().to_string() + " vs. " + len_t.shape().to_string());
    TF_ASSIGN_OR_RETURN(Broadcast bc, Broadcast::make(in.shape(), pos_t.shape()));
    TF_ASSIGN_OR_RETURN(const std::vector<int64_t> pos, read_int_values(pos_t, "pos"));
    TF_ASSIGN_OR_RETURN(const std::vector<int64_t> len, read_int_values(len_t, "len"));
    const std::string* s = in.data<std::string>();
    Tensor out(DType::string, bc.output_shape());
    std::string* o = out.mutable_data<std::string>();
    const int64_t row = bc.dim(bc.rank() - 1);
    const int64_t s_step = bc.stride(0, bc.rank() - 1), p_step = bc.stride(1, bc.rank() - 1);
    Status status;
    bc.for_each_row([&](int64_t out_at, const int64_t* in_at) {
      for (int64_t j = 0; j < row && status.ok(); ++j) {
        const size_t p = static_cast<size_t>(in_at[1] + j * p_step);
        Expected<std::string> sub = substring(s[in_at[0] + j * s_step], pos[p], len[p], unit_, out_at + j);
        if (sub.ok()) o[out_at + j] = std::move(*sub);
        else status = sub.status();
      }
    });
    TF_RETURN_IF_ERROR(status);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  utf8::CharUnit unit_ = utf8::CharUnit::byte;
};

// The strings broadcast against pos and len, which must match.
Status substr_shape(InferenceContext& c) {
  const PartialShape& pos = c.input_shape(1);
  const PartialShape& len = c.input_shape(2);
  const std::optional<PartialShape> positions = shape::merge(pos, len);
  if (!positions)
    return c.error("pos and len shapes must match: " + pos.to_string() + " vs. " + len.to_string());
  const std::optional<PartialShape> out = shape::broadcast(c.input_shape(0), *positions);
  if (!out)
    return c.error("input and pos cannot broadcast: " + c.input_shape(0).to_string() + " vs. " +
                   positions->to_string());
  c.set_output(0, *out);
  return ok_status();
}

}  // namespace

void register_string_split_ops(OpRegistry& r) {
  register_builtin(r, OpDef("StringSplit").shape_fn(split_shapes)
                          .input("input: string")
                          .input("delimiter: string")
                          .output("indices: int64")
                          .output("values: string")
                          .output("shape: int64")
                          .attr("skip_empty", "bool", true)
                          .kernel(make_kernel_factory<StringSplitKernel>()));
  register_builtin(r, OpDef("StringSplitV2").shape_fn(split_shapes)
                          .input("input: string")
                          .input("sep: string")
                          .output("indices: int64")
                          .output("values: string")
                          .output("shape: int64")
                          .attr("maxsplit", "int", int64_t{-1})
                          .kernel(make_kernel_factory<StringSplitV2Kernel>()));
  register_builtin(r, OpDef("ReduceJoin").shape_fn(shape_fns::reduction)
                          .input("inputs: string")
                          .input("reduction_indices: int32")
                          .output("output: string")
                          .attr("keep_dims", "bool", false)
                          .attr("separator", "string", std::string())
                          .kernel(make_kernel_factory<ReduceJoinKernel>()));
  register_builtin(r, OpDef("Substr").shape_fn(substr_shape)
                          .input("input: string")
                          .input("pos: T")
                          .input("len: T")
                          .output("output: string")
                          .type_attr("T", index_dtypes())
                          .attr("unit", "string", std::string("BYTE"))
                          .kernel(make_kernel_factory<SubstrKernel>()));
}

}  // namespace tagflow::ops
