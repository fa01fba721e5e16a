// Shape functions of the array ops: constants and feeds, Shape/Size/Rank
// (with their values when the shape is fully known), Reshape, Fill and the
// other ops that take a shape argument, dimension changes (ExpandDims,
// Squeeze, Transpose), joining and splitting (ConcatV2, Pack, Unpack,
// Split), slicing, Tile, Pad, gathers and scatters.
#include <algorithm>

#include "ops/shape_fns.hpp"

namespace tagflow::ops::shape_fns {


Status identity(InferenceContext& c) {
  c.pass_through(0);
  return ok_status();
}

Status identity_n(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs() && i < c.num_inputs(); ++i) {
    c.set_output(i, c.input_shape(i));
    if (c.input_value(i) != nullptr) c.set_value(i, *c.input_value(i));
  }
  return ok_status();
}

Status constant(InferenceContext& c) {
  if (const Tensor* v = c.attr<Tensor>("value")) c.set_value(0, *v);
  return ok_status();
}

Status placeholder(InferenceContext& c) {
  // What a feed must match (step_graph's check_feed); a PlaceholderWithDefault
  // that is not fed gives its input, which has that shape too.
  const auto* s = c.attr<PartialShape>("shape");
  if (s == nullptr) return ok_status();
  // TensorFlow reads an empty shape as unknown in graphs before version 22.
  const bool legacy_unknown = c.producer() <= 21 && !s->unknown_rank && s->dims.empty();
  if (!legacy_unknown) c.set_output(0, *s);
  return ok_status();
}

Status shape_of(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs() && i < c.num_inputs(); ++i) {
    const PartialShape& s = c.input_shape(i);
    if (shape::fully_known(s)) {
      c.set_value(i, shape::int_tensor(c.output(i).dtype, s.dims, Shape{static_cast<int64_t>(s.dims.size())}));
    } else {
      c.set_output(i, shape::vector(s.unknown_rank ? -1 : shape::rank(s)));
    }
  }
  return ok_status();
}

Status size(InferenceContext& c) {
  const int64_t n = shape::num_elements(c.input_shape(0));
  if (n >= 0) c.set_value(0, shape::int_tensor(c.output(0).dtype, {n}, Shape{}));
  else c.set_output(0, shape::scalar());
  return ok_status();
}

Status rank(InferenceContext& c) {
  if (!c.input_shape(0).unknown_rank)
    c.set_value(0, shape::int_tensor(DType::int32, {shape::rank(c.input_shape(0))}, Shape{}));
  else
    c.set_output(0, shape::scalar());
  return ok_status();
}

Status reshape(InferenceContext& c) {
  PartialShape out = c.input_as_shape(1);
  const PartialShape& in = c.input_shape(0);
  if (out.unknown_rank) return ok_status();
  const std::vector<int64_t>* given = nullptr;
  auto values = c.input_ints(1);
  if (values) given = &*values;
  const int64_t total = shape::num_elements(in);
  if (given != nullptr) {
    int wildcard = -1;
    int64_t product = 1;
    for (size_t i = 0; i < given->size(); ++i) {
      if ((*given)[i] == -1) {
        if (wildcard >= 0) return c.error("only one dimension may be -1, not " + out.to_string());
        wildcard = static_cast<int>(i);
      } else if ((*given)[i] < 0) {
        return c.error("a dimension of the new shape is negative: " + out.to_string());
      } else {
        product *= (*given)[i];
      }
    }
    if (total >= 0) {
      if (wildcard >= 0 && product == 0) {
        out.dims[static_cast<size_t>(wildcard)] = -1;  // an empty tensor: -1 is not determined
      } else if (wildcard >= 0) {
        if (total % product != 0)
          return c.error("cannot reshape " + in.to_string() + " (" + std::to_string(total) + " elements) into " +
                         out.to_string());
        out.dims[static_cast<size_t>(wildcard)] = total / product;
      } else if (product != total) {
        return c.error("cannot reshape " + in.to_string() + " (" + std::to_string(total) + " elements) into " +
                       out.to_string() + " (" + std::to_string(product) + " elements)");
      }
    }
  }
  c.set_output(0, out);
  if (c.input_value(0) != nullptr && shape::fully_known(out))
    if (auto s = Shape::make(out.dims); s.ok())
      if (auto r = c.input_value(0)->reshaped(*s); r.ok()) c.set_value(0, *r);
  return ok_status();
}

Status expand_dims(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto axis = c.input_ints(1);
  if (in.unknown_rank) return ok_status();
  const int r = shape::rank(in);
  if (!axis || axis->size() != 1 || (*axis)[0] < -r - 1 || (*axis)[0] > r) {
    c.set_output(0, shape::of_rank(r + 1));
    return ok_status();
  }
  const int64_t a = (*axis)[0] < 0 ? (*axis)[0] + r + 1 : (*axis)[0];
  PartialShape out = in;
  out.dims.insert(out.dims.begin() + a, 1);
  c.set_output(0, out);
  if (c.input_value(0) != nullptr)
    if (auto s = Shape::make(out.dims); s.ok())
      if (auto v = c.input_value(0)->reshaped(*s); v.ok()) c.set_value(0, *v);
  return ok_status();
}

Status squeeze(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  if (in.unknown_rank) return ok_status();
  const int r = shape::rank(in);
  const auto* list = c.attr<AttrList>("squeeze_dims");
  std::vector<bool> drop(static_cast<size_t>(r), false);
  if (list != nullptr && !list->i.empty()) {
    for (int64_t a : list->i) {
      if (a < -r || a >= r) return c.error("squeeze dimension " + std::to_string(a) + " is out of range for " + in.to_string());
      const size_t k = static_cast<size_t>(a < 0 ? a + r : a);
      if (in.dims[k] >= 0 && in.dims[k] != 1)
        return c.error("cannot squeeze dimension " + std::to_string(a) + " of " + in.to_string() + ": it is not 1");
      drop[k] = true;
    }
  } else {
    for (int k = 0; k < r; ++k) {
      if (in.dims[static_cast<size_t>(k)] < 0) return ok_status();  // might be 1
      drop[static_cast<size_t>(k)] = in.dims[static_cast<size_t>(k)] == 1;
    }
  }
  PartialShape out = shape::scalar();
  for (int k = 0; k < r; ++k)
    if (!drop[static_cast<size_t>(k)]) out.dims.push_back(in.dims[static_cast<size_t>(k)]);
  c.set_output(0, out);
  return ok_status();
}

Status transpose(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto perm = c.input_ints(1);
  if (!perm) {
    if (!in.unknown_rank) c.set_output(0, shape::of_rank(shape::rank(in)));
    else c.set_output(0, shape::of_rank(shape::dim(c.input_shape(1), 0)));
    return ok_status();
  }
  const int r = static_cast<int>(perm->size());
  if (!in.unknown_rank && shape::rank(in) != r)
    return c.error("perm " + c.input_value(1)->values_string() + " does not fit input of shape " + in.to_string());
  PartialShape out = shape::of_rank(r);
  if (out.unknown_rank) return ok_status();
  for (int k = 0; k < r; ++k) {
    const int64_t p = (*perm)[static_cast<size_t>(k)];
    if (p < 0 || p >= r) return ok_status();
    out.dims[static_cast<size_t>(k)] = shape::dim(in, static_cast<int>(p));
  }
  c.set_output(0, out);
  return ok_status();
}

// ConcatV2: the inputs agree but along the axis, whose sizes add up.
Status concat_v2(InferenceContext& c) {
  const int n = c.num_inputs() - 1;
  auto axis = c.input_ints(n);
  PartialShape common = shape::unknown();
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c.input_shape(i);
    if (s.unknown_rank) continue;
    if (!common.unknown_rank && common.dims.size() != s.dims.size())
      return c.error("inputs have different ranks: " + common.to_string() + " and " + s.to_string());
    if (common.unknown_rank) common = shape::of_rank(shape::rank(s));
    if (common.unknown_rank) return ok_status();  // past any rank a tensor has
  }
  if (common.unknown_rank) return ok_status();
  const int r = shape::rank(common);
  if (!axis || axis->size() != 1 || (*axis)[0] < -r || (*axis)[0] >= r) {
    c.set_output(0, common);
    return ok_status();
  }
  const size_t a = static_cast<size_t>((*axis)[0] < 0 ? (*axis)[0] + r : (*axis)[0]);
  PartialShape out = common;
  out.dims[a] = 0;
  bool first = true;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c.input_shape(i);
    if (s.unknown_rank) {
      out.dims[a] = -1;
      continue;
    }
    for (size_t k = 0; k < s.dims.size(); ++k) {
      if (k == a) continue;
      if (!first && !shape::dims_compatible(out.dims[k], s.dims[k]))
        return c.error("input " + std::to_string(i) + " of shape " + s.to_string() +
                       " does not match the others outside axis " + std::to_string(a) + ": " + out.to_string());
      out.dims[k] = first ? s.dims[k] : shape::merge_dim(out.dims[k], s.dims[k]);
    }
    first = false;
    out.dims[a] = shape::add_dims(out.dims[a], s.dims[a]);
  }
  c.set_output(0, out);
  // Known int vectors concatenated: a shape built from parts.
  if (r == 1) {
    std::vector<int64_t> all;
    for (int i = 0; i < n; ++i) {
      auto v = c.input_ints(i);
      if (!v) return ok_status();
      all.insert(all.end(), v->begin(), v->end());
    }
    c.set_value(0, shape::int_tensor(c.output(0).dtype, all, Shape{static_cast<int64_t>(all.size())}));
  }
  return ok_status();
}

Status concat_offset(InferenceContext& c) {
  for (int i = 1; i < c.num_inputs() && i - 1 < c.num_outputs(); ++i) c.set_output(i - 1, c.input_shape(i));
  return ok_status();
}

// Pack: N inputs of one shape stacked along a new axis.
Status pack(InferenceContext& c) {
  PartialShape s;
  TF_RETURN_IF_ERROR(c.merged_inputs(&s));
  if (s.unknown_rank) return ok_status();
  const int r = shape::rank(s) + 1;
  int64_t axis = c.int_attr("axis", 0);
  if (axis < -r || axis >= r) return c.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  s.dims.insert(s.dims.begin() + axis, c.num_inputs());
  c.set_output(0, s);
  if (r == 1) {  // scalars packed into a vector: a shape built from parts
    std::vector<int64_t> all;
    for (int i = 0; i < c.num_inputs(); ++i) {
      auto v = c.input_ints(i);
      if (!v || v->size() != 1) return ok_status();
      all.push_back((*v)[0]);
    }
    c.set_value(0, shape::int_tensor(c.output(0).dtype, all, Shape{static_cast<int64_t>(all.size())}));
  }
  return ok_status();
}

Status unpack(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  if (in.unknown_rank) return ok_status();
  const int r = shape::rank(in);
  int64_t axis = c.int_attr("axis", 0);
  if (axis < -r || axis >= r) return c.error("axis " + std::to_string(axis) + " is out of range for " + in.to_string());
  if (axis < 0) axis += r;
  const int64_t d = in.dims[static_cast<size_t>(axis)];
  if (d >= 0 && d != c.num_outputs())
    return c.error("dimension " + std::to_string(axis) + " of " + in.to_string() + " is not num = " +
                   std::to_string(c.num_outputs()));
  PartialShape out = in;
  out.dims.erase(out.dims.begin() + axis);
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, out);
  return ok_status();
}

Status slice(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto begin = c.input_ints(1);
  auto size = c.input_ints(2);
  PartialShape out = c.input_as_shape(2);
  if (out.unknown_rank) {
    if (!in.unknown_rank) c.set_output(0, shape::of_rank(shape::rank(in)));
    return ok_status();
  }
  if (size)
    for (size_t k = 0; k < out.dims.size(); ++k) {
      if ((*size)[k] != -1) continue;
      const int64_t d = shape::dim(in, static_cast<int>(k));
      out.dims[k] = (begin && k < begin->size() && d >= 0) ? d - (*begin)[k] : -1;
    }
  c.set_output(0, out);
  return ok_status();
}

// StridedSlice: the exact shape when begin, end and strides are known and
// there is no ellipsis; else the rank, when the input's is known.
Status strided_slice(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  const int64_t begin_mask = c.int_attr("begin_mask", 0), end_mask = c.int_attr("end_mask", 0);
  const int64_t ellipsis = c.int_attr("ellipsis_mask", 0), new_axis = c.int_attr("new_axis_mask", 0);
  const int64_t shrink = c.int_attr("shrink_axis_mask", 0);
  auto begin = c.input_ints(1), end = c.input_ints(2), strides = c.input_ints(3);
  const PartialShape& spec_shape = c.input_shape(1);
  if (ellipsis != 0 || in.unknown_rank || spec_shape.unknown_rank || spec_shape.dims.size() != 1 ||
      spec_shape.dims[0] < 0)
    return ok_status();
  const int n = static_cast<int>(spec_shape.dims[0]);
  const bool values = begin && end && strides && begin->size() == static_cast<size_t>(n) &&
                      end->size() == static_cast<size_t>(n) && strides->size() == static_cast<size_t>(n);
  PartialShape out = shape::scalar();
  int in_dim = 0;
  std::vector<int64_t> sliced;  // for a known vector input: the values taken
  const bool vector_value = c.input_value(0) != nullptr && shape::rank(in) == 1 && values && n == 1 &&
                            new_axis == 0;
  for (int k = 0; k < n; ++k) {
    if (new_axis & (int64_t{1} << k)) {
      out.dims.push_back(1);
      continue;
    }
    if (in_dim >= shape::rank(in)) return ok_status();  // the kernel reports it
    const int64_t d = in.dims[static_cast<size_t>(in_dim++)];
    const bool shrinks = shrink & (int64_t{1} << k);
    if (!values || d < 0) {
      if (!shrinks) out.dims.push_back(-1);
      continue;
    }
    const int64_t s = (*strides)[static_cast<size_t>(k)];
    if (s == 0) return ok_status();
    auto clamp = [&](int64_t v, bool masked, bool is_begin) -> int64_t {
      if (masked) return (s > 0) == is_begin ? (s > 0 ? 0 : d - 1) : (s > 0 ? d : -1);
      if (v < 0) v += d;
      return s > 0 ? std::clamp<int64_t>(v, 0, d) : std::clamp<int64_t>(v, -1, d - 1);
    };
    if (shrinks) {
      int64_t b = (*begin)[static_cast<size_t>(k)];
      if (b < 0) b += d;
      if (b < 0 || b >= d) return ok_status();
      if (vector_value) sliced.push_back(b);
      continue;
    }
    const int64_t b = clamp((*begin)[static_cast<size_t>(k)], begin_mask & (int64_t{1} << k), true);
    const int64_t e = clamp((*end)[static_cast<size_t>(k)], end_mask & (int64_t{1} << k), false);
    const int64_t len = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e - s - 1) / -s : 0);
    out.dims.push_back(len);
    if (vector_value)
      for (int64_t j = 0; j < len; ++j) sliced.push_back(b + j * s);
  }
  for (int k = in_dim; k < shape::rank(in); ++k) out.dims.push_back(in.dims[static_cast<size_t>(k)]);
  c.set_output(0, out);
  if (vector_value && shape::fully_known(out)) {
    auto v = *c.input_ints(0);
    std::vector<int64_t> taken;
    for (int64_t j : sliced) taken.push_back(v[static_cast<size_t>(j)]);
    if (static_cast<int64_t>(taken.size()) == shape::num_elements(out))
      c.set_value(0, shape::int_tensor(c.output(0).dtype, taken, *Shape::make(out.dims)));
  }
  return ok_status();
}

Status tile(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto m = c.input_ints(1);
  if (in.unknown_rank) {
    c.set_output(0, c.input_as_shape(1).unknown_rank ? shape::unknown() : shape::of_rank(shape::rank(c.input_as_shape(1))));
    return ok_status();
  }
  PartialShape out = shape::of_rank(shape::rank(in));
  if (m && m->size() == in.dims.size() && !out.unknown_rank)
    for (size_t k = 0; k < in.dims.size(); ++k) out.dims[k] = shape::mul_dims(in.dims[k], (*m)[k]);
  c.set_output(0, out);
  return ok_status();
}

Status pad(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  auto p = c.input_ints(1);
  const PartialShape& ps = c.input_shape(1);
  int r = in.unknown_rank ? -1 : shape::rank(in);
  if (r < 0 && !ps.unknown_rank && !ps.dims.empty() && ps.dims[0] >= 0) r = static_cast<int>(ps.dims[0]);
  if (r < 0) return ok_status();
  PartialShape out = shape::of_rank(r);
  if (p && p->size() == static_cast<size_t>(2 * r) && !out.unknown_rank)
    for (int k = 0; k < r; ++k)
      out.dims[static_cast<size_t>(k)] = shape::add_dims(shape::dim(in, k), (*p)[2 * k] + (*p)[2 * k + 1]);
  c.set_output(0, out);
  return ok_status();
}

// Gather: indices.shape + params.shape[1:]; GatherV2 with axis and
// batch_dims: params[:axis] + indices[batch_dims:] + params[axis+1:].
Status gather(InferenceContext& c) {
  const PartialShape& params = c.input_shape(0);
  const PartialShape& indices = c.input_shape(1);
  int64_t axis = 0;
  const int64_t batch = c.int_attr("batch_dims", 0);
  if (c.op() == "GatherV2") {
    auto a = c.input_ints(2);
    if (!a || a->size() != 1) return ok_status();
    axis = (*a)[0];
  }
  if (params.unknown_rank || indices.unknown_rank) return ok_status();
  const int r = shape::rank(params);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r || batch < 0 || batch > shape::rank(indices)) return ok_status();
  PartialShape out = shape::sub(params, 0, static_cast<int>(axis));
  out = shape::concat(out, shape::sub(indices, static_cast<int>(batch), shape::rank(indices)));
  out = shape::concat(out, shape::sub(params, static_cast<int>(axis) + 1, r));
  c.set_output(0, out);
  return ok_status();
}

Status gather_nd(InferenceContext& c) {
  const PartialShape& params = c.input_shape(0);
  const PartialShape& indices = c.input_shape(1);
  if (params.unknown_rank || indices.unknown_rank || indices.dims.empty()) return ok_status();
  const int64_t k = indices.dims.back();
  if (k < 0 || k > shape::rank(params)) return ok_status();
  c.set_output(0, shape::concat(shape::sub(indices, 0, shape::rank(indices) - 1),
                                shape::sub(params, static_cast<int>(k), shape::rank(params))));
  return ok_status();
}

Status split(InferenceContext& c) {
  const bool v = c.op() == "SplitV";
  const int value_input = v ? 0 : 1;
  const PartialShape& in = c.input_shape(value_input);
  auto axis = c.input_ints(v ? 2 : 0);
  if (in.unknown_rank) return ok_status();
  const int r = shape::rank(in);
  if (!axis || axis->size() != 1 || (*axis)[0] < -r || (*axis)[0] >= r) {
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, shape::of_rank(r));
    return ok_status();
  }
  const size_t a = static_cast<size_t>((*axis)[0] < 0 ? (*axis)[0] + r : (*axis)[0]);
  auto sizes = v ? c.input_ints(1) : std::nullopt;
  for (int i = 0; i < c.num_outputs(); ++i) {
    PartialShape out = in;
    if (v) {
      out.dims[a] = sizes && sizes->size() == static_cast<size_t>(c.num_outputs()) &&
                            (*sizes)[static_cast<size_t>(i)] >= 0
                        ? (*sizes)[static_cast<size_t>(i)] : -1;
    } else {
      out.dims[a] = in.dims[a] >= 0 && in.dims[a] % c.num_outputs() == 0 ? in.dims[a] / c.num_outputs() : -1;
    }
    c.set_output(i, out);
  }
  return ok_status();
}

Status one_hot(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  if (in.unknown_rank) return ok_status();
  auto depth = c.input_ints(1);
  const int r = shape::rank(in) + 1;
  int64_t axis = c.int_attr("axis", -1);
  if (axis < -1 || axis >= r) return ok_status();
  if (axis == -1) axis = r - 1;
  PartialShape out = in;
  out.dims.insert(out.dims.begin() + axis, depth && depth->size() == 1 ? (*depth)[0] : -1);
  c.set_output(0, out);
  return ok_status();
}

Status unique(InferenceContext& c) {
  c.set_output(0, shape::vector(-1));
  c.set_output(1, c.input_shape(0));
  return ok_status();
}

Status top_k(InferenceContext& c) {
  const PartialShape& in = c.input_shape(0);
  if (in.unknown_rank || in.dims.empty()) return ok_status();
  auto k = c.input_ints(1);
  PartialShape out = in;
  out.dims.back() = k && k->size() == 1 ? (*k)[0] : -1;
  c.set_output(0, out);
  c.set_output(1, out);
  return ok_status();
}

// DynamicStitch: [max index + 1] + data[0].shape[indices[0].rank:].
Status dynamic_stitch(InferenceContext& c) {
  const int n = c.num_inputs() / 2;
  if (n == 0) return ok_status();
  const PartialShape& idx = c.input_shape(0);
  const PartialShape& data = c.input_shape(n);
  if (idx.unknown_rank || data.unknown_rank) return ok_status();
  c.set_output(0, shape::concat(shape::vector(-1), shape::sub(data, shape::rank(idx), shape::rank(data))));
  return ok_status();
}

// UnsortedSegmentSum: [num_segments] + data.shape[segment_ids.rank:].
Status unsorted_segment_sum(InferenceContext& c) {
  const PartialShape& data = c.input_shape(0);
  const PartialShape& ids = c.input_shape(1);
  if (data.unknown_rank || ids.unknown_rank) return ok_status();
  auto n = c.input_ints(2);
  c.set_output(0, shape::concat(shape::vector(n && n->size() == 1 ? (*n)[0] : -1),
                                shape::sub(data, shape::rank(ids), shape::rank(data))));
  return ok_status();
}

Status broadcast_gradient_args(InferenceContext& c) {
  c.set_output(0, shape::vector(-1));
  c.set_output(1, shape::vector(-1));
  return ok_status();
}

// StringJoin: its inputs broadcast (scalars or one shape).
Status string_join(InferenceContext& c) {
  PartialShape s = shape::scalar();
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto b = shape::broadcast(s, c.input_shape(i));
    if (!b) return ok_status();
    s = *b;
  }
  c.set_output(0, s);
  return ok_status();
}

}  // namespace tagflow::ops::shape_fns
