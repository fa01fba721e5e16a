// The tf.Example parsing ops (TensorFlow's core/ops/parsing_ops.cc):
// ParseExample, ParseExampleV2 and ParseSingleExample. Each reads
// serialized tagflow.example.Example protos (ops/proto/example.proto, wire-
// compatible with tensorflow.Example) and turns the features it is
// configured for into tensors:
//
// - a dense feature (key, dtype, fully defined shape, default) becomes one
//   tensor [batch] + shape; a missing feature takes its default, and a
//   missing feature whose default is empty is an error naming it and the
//   example; a feature of another kind or with another number of values is
//   an error naming it;
// - a sparse feature (key, dtype) becomes indices [n, 2] (example, position;
//   [n, 1] for one unbatched example), values [n] and a dense shape [2]
//   (batch, most values in one example; [1] unbatched).
//
// The kinds: float32 is a float_list, int64 an int64_list, string a
// bytes_list; a feature with no kind set has no values. Variable-length
// dense features (a dense shape with unknown dimensions) and ragged
// features are refused with an error naming them. Stateless; kernels are
// immutable after creation.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/proto/example.pb.h"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

namespace ex = tagflow::example;

// One dense feature as the kernel reads it at compute time.
struct DenseFeature {
  std::string key;
  DType dtype = DType::invalid;
  Shape shape;
  Tensor default_value;  // no elements: the feature is required
};

struct SparseFeature {
  std::string key;
  DType dtype = DType::invalid;
};

const char* kind_for(DType t) {
  switch (t) {
    case DType::float32: return "float_list";
    case DType::int64: return "int64_list";
    default: return "bytes_list";
  }
}

const char* kind_name(const ex::Feature& f) {
  switch (f.kind_case()) {
    case ex::Feature::kFloatList: return "float_list";
    case ex::Feature::kInt64List: return "int64_list";
    case ex::Feature::kBytesList: return "bytes_list";
    default: return "empty";
  }
}

// The number of values of `f`, which must be of `dtype`'s kind (or have no
// kind set: no values).
Expected<int64_t> value_count(const ex::Feature& f, DType dtype, const std::string& where) {
  switch (f.kind_case()) {
    case ex::Feature::KIND_NOT_SET: return int64_t{0};
    case ex::Feature::kFloatList:
      if (dtype == DType::float32) return int64_t{f.float_list().value_size()};
      break;
    case ex::Feature::kInt64List:
      if (dtype == DType::int64) return int64_t{f.int64_list().value_size()};
      break;
    case ex::Feature::kBytesList:
      if (dtype == DType::string) return int64_t{f.bytes_list().value_size()};
      break;
  }
  return Status(Error::invalid_argument, fmt::format("{}: the feature is a {}, but a {} ({}) is expected", where,
                                                     kind_name(f), kind_for(dtype), dtype_name(dtype)));
}

// Copies the values of `f` (checked by value_count) to out[0..].
void copy_values(const ex::Feature& f, DType dtype, Tensor& out, int64_t offset) {
  switch (dtype) {
    case DType::float32: {
      float* o = out.mutable_data<float>() + offset;
      for (float v : f.float_list().value()) *o++ = v;
      break;
    }
    case DType::int64: {
      int64_t* o = out.mutable_data<int64_t>() + offset;
      for (int64_t v : f.int64_list().value()) *o++ = v;
      break;
    }
    default: {
      std::string* o = out.mutable_data<std::string>() + offset;
      for (const std::string& v : f.bytes_list().value()) *o++ = v;
      break;
    }
  }
}

// Copies n elements of `from` (of out's dtype) to out at `offset`.
void copy_elements(const Tensor& from, Tensor& out, int64_t offset, int64_t n) {
  if (out.dtype() == DType::string) {
    std::copy(from.data<std::string>(), from.data<std::string>() + n, out.mutable_data<std::string>() + offset);
  } else {
    const size_t size = dtype_size(out.dtype());
    std::memcpy(static_cast<char*>(out.raw_mutable_data()) + offset * size, from.raw_data(), n * size);
  }
}

bool parsable_dtype(DType t) { return t == DType::float32 || t == DType::int64 || t == DType::string; }

Status check_parsable(const std::vector<DType>& types, const char* attr) {
  for (DType t : types)
    if (!parsable_dtype(t))
      return Status(Error::invalid_argument,
                    fmt::format("attr '{}' holds {}: a feature is float32, int64 or string", attr, dtype_name(t)));
  return ok_status();
}

// What every parsing kernel reads from its attrs: the dtypes and shapes of
// its features (their keys come at compute time, as inputs or attrs).
struct ParseAttrs {
  std::vector<DType> sparse_types;
  std::vector<DType> dense_types;
  std::vector<PartialShape> dense_shapes;

  Status init(const KernelInit& init, const std::string& num_sparse_attr) {
    TF_ASSIGN_OR_RETURN(int64_t num_sparse, init.attr<int64_t>(num_sparse_attr));
    TF_ASSIGN_OR_RETURN(AttrList sparse, init.attr<AttrList>("sparse_types"));
    TF_ASSIGN_OR_RETURN(AttrList dense, init.attr<AttrList>("Tdense"));
    TF_ASSIGN_OR_RETURN(AttrList shapes, init.attr<AttrList>("dense_shapes"));
    sparse_types = sparse.type;
    dense_types = dense.type;
    dense_shapes = shapes.shape;
    if (static_cast<int64_t>(sparse_types.size()) != num_sparse)
      return Status(Error::invalid_argument, fmt::format("attr '{}' is {} but 'sparse_types' has {} types",
                                                         num_sparse_attr, num_sparse, sparse_types.size()));
    if (dense_shapes.size() != dense_types.size())
      return Status(Error::invalid_argument, fmt::format("attr 'dense_shapes' has {} shapes for {} 'Tdense' types",
                                                         dense_shapes.size(), dense_types.size()));
    TF_RETURN_IF_ERROR(check_parsable(sparse_types, "sparse_types"));
    return check_parsable(dense_types, "Tdense");
  }
};

// The keys of one kind of feature, from `count` scalar inputs starting at
// `first` (ParseExample) or from one vector input (ParseExampleV2).
Expected<std::vector<std::string>> scalar_keys(const KernelContext& ctx, int first, size_t count, const char* what) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; ++i) {
    const Tensor& t = ctx.input(first + static_cast<int>(i));
    if (t.dtype() != DType::string || t.num_elements() != 1)
      return Status(Error::invalid_argument, fmt::format("{} {} must be a string scalar, got {} {}", what, i,
                                                         dtype_name(t.dtype()), t.shape().to_string()));
    keys.push_back(t.data<std::string>()[0]);
  }
  return keys;
}

Expected<std::vector<std::string>> vector_keys(const Tensor& t, size_t count, const char* what) {
  if (t.dtype() != DType::string || t.rank() != 1 || t.num_elements() != static_cast<int64_t>(count))
    return Status(Error::invalid_argument, fmt::format("{} must be a string vector of {} keys, got {} {}", what,
                                                       count, dtype_name(t.dtype()), t.shape().to_string()));
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + count);
}

// The dense features with their keys and defaults, checked: a fully
// defined shape, a default of the feature's dtype that is empty (required)
// or has the shape's number of elements.
Expected<std::vector<DenseFeature>> dense_features(const ParseAttrs& attrs, std::vector<std::string> keys,
                                                   const KernelContext& ctx, int first_default) {
  std::vector<DenseFeature> dense(keys.size());
  for (size_t d = 0; d < keys.size(); ++d) {
    DenseFeature& f = dense[d];
    f.key = std::move(keys[d]);
    f.dtype = attrs.dense_types[d];
    const PartialShape& shape = attrs.dense_shapes[d];
    const bool defined = !shape.unknown_rank &&
                         std::all_of(shape.dims.begin(), shape.dims.end(), [](int64_t n) { return n >= 0; });
    if (!defined)
      return Status(Error::unimplemented,
                    fmt::format("dense feature '{}' has shape {}: variable-length dense features are not supported "
                                "(give every dimension, or parse it as a sparse feature)",
                                f.key, shape.to_string()));
    auto checked = Shape::make(shape.dims);
    if (!checked.ok()) return checked.status().with_prefix(fmt::format("dense feature '{}': ", f.key));
    f.shape = *checked;
    f.default_value = ctx.input(first_default + static_cast<int>(d));
    if (f.default_value.dtype() != f.dtype)
      return Status(Error::invalid_argument, fmt::format("dense feature '{}': its default is {}, not {}", f.key,
                                                         dtype_name(f.default_value.dtype()), dtype_name(f.dtype)));
    const int64_t n = f.shape.num_elements();
    if (f.default_value.num_elements() != 0 && f.default_value.num_elements() != n)
      return Status(Error::invalid_argument,
                    fmt::format("dense feature '{}': its default has shape {}, not {} elements for shape {}", f.key,
                                f.default_value.shape().to_string(), n, f.shape.to_string()));
  }
  return dense;
}

std::vector<SparseFeature> sparse_features(const ParseAttrs& attrs, const std::vector<std::string>& keys) {
  std::vector<SparseFeature> sparse(keys.size());
  for (size_t s = 0; s < keys.size(); ++s) sparse[s] = {keys[s], attrs.sparse_types[s]};
  return sparse;
}

// "example 3" or "example 3 ('name')" for error messages.
std::string example_label(const Tensor& names, int64_t i) {
  if (names.valid() && names.num_elements() > i && !names.data<std::string>()[i].empty())
    return fmt::format("example {} ('{}')", i, abbreviate(names.data<std::string>()[i]));
  return fmt::format("example {}", i);
}

// Parses every element of `serialized` and sets the outputs: sparse
// indices, values and shapes, then the dense values. `batched`: outputs
// have the batch dimension (ParseExample); else `serialized` holds one
// example (ParseSingleExample, or ParseExampleV2 given a scalar).
Status parse_examples(KernelContext& ctx, const Tensor& serialized, const Tensor& names,
                      const std::vector<SparseFeature>& sparse, const std::vector<DenseFeature>& dense, bool batched) {
  if (serialized.dtype() != DType::string)
    return Status(Error::invalid_argument, "serialized must be string, not " + dtype_name(serialized.dtype()));
  if (batched ? serialized.rank() != 1 : serialized.rank() != 0)
    return Status(Error::invalid_argument, fmt::format("serialized must be a {}, got shape {}",
                                                       batched ? "vector" : "scalar", serialized.shape().to_string()));
  if (names.valid() && names.dtype() != DType::string)
    return Status(Error::invalid_argument, "names must be string, not " + dtype_name(names.dtype()));
  if (names.valid() && names.num_elements() != 0 && names.shape() != serialized.shape())
    return Status(Error::invalid_argument, fmt::format("names has shape {}, serialized {}: they must match (or names "
                                                       "be empty)",
                                                       names.shape().to_string(), serialized.shape().to_string()));
  const int64_t batch = serialized.num_elements();
  std::vector<ex::Example> examples(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i)
    if (!examples[i].ParseFromString(serialized.data<std::string>()[i]))
      return Status(Error::invalid_argument, fmt::format("{}: {} bytes that are not a serialized tf.Example",
                                                         example_label(names, i),
                                                         serialized.data<std::string>()[i].size()));
  auto find = [&](int64_t i, const std::string& key) -> const ex::Feature* {
    const auto& map = examples[i].features().feature();
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  };
  const int num_sparse = static_cast<int>(sparse.size());
  for (int s = 0; s < num_sparse; ++s) {
    const SparseFeature& f = sparse[s];
    std::vector<int64_t> counts(static_cast<size_t>(batch), 0);
    int64_t total = 0, most = 0;
    for (int64_t i = 0; i < batch; ++i) {
      if (const ex::Feature* feature = find(i, f.key)) {
        TF_ASSIGN_OR_RETURN(counts[i], value_count(*feature, f.dtype,
                                                   fmt::format("{}, sparse feature '{}'", example_label(names, i), f.key)));
      }
      total += counts[i];
      most = std::max(most, counts[i]);
    }
    const int64_t index_rank = batched ? 2 : 1;
    Tensor indices(DType::int64, Shape({total, index_rank}));
    Tensor values(f.dtype, Shape({total}));
    int64_t* idx = indices.mutable_data<int64_t>();
    int64_t at = 0;
    for (int64_t i = 0; i < batch; ++i) {
      if (counts[i] == 0) continue;
      copy_values(*find(i, f.key), f.dtype, values, at);
      for (int64_t j = 0; j < counts[i]; ++j, ++at) {
        if (batched) *idx++ = i;
        *idx++ = j;
      }
    }
    ctx.set_output(s, std::move(indices));
    ctx.set_output(num_sparse + s, std::move(values));
    ctx.set_output(2 * num_sparse + s,
                   batched ? Tensor::vector<int64_t>({batch, most}) : Tensor::vector<int64_t>({most}));
  }
  for (size_t d = 0; d < dense.size(); ++d) {
    const DenseFeature& f = dense[d];
    const int64_t n = f.shape.num_elements();
    std::vector<int64_t> dims = f.shape.dims();
    if (batched) dims.insert(dims.begin(), batch);
    auto shape = Shape::make(dims);
    if (!shape.ok()) return shape.status().with_prefix(fmt::format("dense feature '{}': ", f.key));
    Tensor out(f.dtype, *shape);
    for (int64_t i = 0; i < batch; ++i) {
      const ex::Feature* feature = find(i, f.key);
      if (feature == nullptr) {
        if (f.default_value.num_elements() == 0)
          return Status(Error::invalid_argument,
                        fmt::format("{}: dense feature '{}' ({} {}) is missing and has no default",
                                    example_label(names, i), f.key, dtype_name(f.dtype), f.shape.to_string()));
        copy_elements(f.default_value, out, i * n, n);
        continue;
      }
      const std::string where = fmt::format("{}, dense feature '{}'", example_label(names, i), f.key);
      TF_ASSIGN_OR_RETURN(int64_t count, value_count(*feature, f.dtype, where));
      if (count != n)
        return Status(Error::invalid_argument, fmt::format("{}: {} values, but shape {} needs {}", where, count,
                                                           f.shape.to_string(), n));
      copy_values(*feature, f.dtype, out, i * n);
    }
    ctx.set_output(3 * num_sparse + static_cast<int>(d), std::move(out));
  }
  return ok_status();
}

// ParseExample(serialized, names, sparse_keys: Nsparse * string,
// dense_keys: Ndense * string, dense_defaults: Tdense).
class ParseExampleKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_RETURN_IF_ERROR(attrs_.init(init, "Nsparse"));
    TF_ASSIGN_OR_RETURN(int64_t num_dense, init.attr<int64_t>("Ndense"));
    if (num_dense != static_cast<int64_t>(attrs_.dense_types.size()))
      return Status(Error::invalid_argument, fmt::format("attr 'Ndense' is {} but 'Tdense' has {} types", num_dense,
                                                         attrs_.dense_types.size()));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const int num_sparse = static_cast<int>(attrs_.sparse_types.size());
    const int num_dense = static_cast<int>(attrs_.dense_types.size());
    TF_ASSIGN_OR_RETURN(auto sparse_keys, scalar_keys(ctx, 2, num_sparse, "sparse_keys"));
    TF_ASSIGN_OR_RETURN(auto dense_keys, scalar_keys(ctx, 2 + num_sparse, num_dense, "dense_keys"));
    TF_ASSIGN_OR_RETURN(auto dense, dense_features(attrs_, std::move(dense_keys), ctx, 2 + num_sparse + num_dense));
    return parse_examples(ctx, ctx.input(0), ctx.input(1), sparse_features(attrs_, sparse_keys), dense, true);
  }

 private:
  ParseAttrs attrs_;
};

// ParseExampleV2(serialized, names, sparse_keys, dense_keys, ragged_keys:
// string vectors, dense_defaults: Tdense). A scalar `serialized` is one
// example: the outputs have no batch dimension.
class ParseExampleV2Kernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_RETURN_IF_ERROR(attrs_.init(init, "num_sparse"));
    TF_ASSIGN_OR_RETURN(AttrList ragged_values, init.attr<AttrList>("ragged_value_types"));
    TF_ASSIGN_OR_RETURN(AttrList ragged_splits, init.attr<AttrList>("ragged_split_types"));
    if (!ragged_values.type.empty() || !ragged_splits.type.empty())
      return Status(Error::unimplemented,
                    fmt::format("ragged features are not supported ({} in 'ragged_value_types')",
                                ragged_values.type.size()));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(auto sparse_keys, vector_keys(ctx.input(2), attrs_.sparse_types.size(), "sparse_keys"));
    TF_ASSIGN_OR_RETURN(auto dense_keys, vector_keys(ctx.input(3), attrs_.dense_types.size(), "dense_keys"));
    TF_ASSIGN_OR_RETURN(auto ragged_keys, vector_keys(ctx.input(4), 0, "ragged_keys"));
    TF_ASSIGN_OR_RETURN(auto dense, dense_features(attrs_, std::move(dense_keys), ctx, 5));
    const Tensor& serialized = ctx.input(0);
    return parse_examples(ctx, serialized, ctx.input(1), sparse_features(attrs_, sparse_keys), dense,
                          serialized.rank() != 0);
  }

 private:
  ParseAttrs attrs_;
};

// ParseSingleExample(serialized: scalar, dense_defaults: Tdense), keys in
// attrs.
class ParseSingleExampleKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_RETURN_IF_ERROR(attrs_.init(init, "num_sparse"));
    TF_ASSIGN_OR_RETURN(AttrList sparse_keys, init.attr<AttrList>("sparse_keys"));
    TF_ASSIGN_OR_RETURN(AttrList dense_keys, init.attr<AttrList>("dense_keys"));
    if (sparse_keys.s.size() != attrs_.sparse_types.size() || dense_keys.s.size() != attrs_.dense_types.size())
      return Status(Error::invalid_argument,
                    fmt::format("{} sparse_keys for {} sparse_types, {} dense_keys for {} Tdense types",
                                sparse_keys.s.size(), attrs_.sparse_types.size(), dense_keys.s.size(),
                                attrs_.dense_types.size()));
    sparse_keys_ = sparse_keys.s;
    dense_keys_ = dense_keys.s;
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(auto dense, dense_features(attrs_, dense_keys_, ctx, 1));
    return parse_examples(ctx, ctx.input(0), Tensor(), sparse_features(attrs_, sparse_keys_), dense, false);
  }

 private:
  ParseAttrs attrs_;
  std::vector<std::string> sparse_keys_;
  std::vector<std::string> dense_keys_;
};

}  // namespace

void register_parsing_ops(OpRegistry& r) {
  register_builtin(r, OpDef("ParseExample").shape_fn(shape_fns::none)
                          .input("serialized: string")
                          .input("names: string")
                          .input("sparse_keys: Nsparse * string")
                          .input("dense_keys: Ndense * string")
                          .input("dense_defaults: Tdense")
                          .output("sparse_indices: Nsparse * int64")
                          .output("sparse_values: sparse_types")
                          .output("sparse_shapes: Nsparse * int64")
                          .output("dense_values: Tdense")
                          .attr("Nsparse", "int", std::nullopt, 0)
                          .attr("Ndense", "int", std::nullopt, 0)
                          .attr("sparse_types", "list(type)", std::nullopt, 0)
                          .attr("Tdense", "list(type)", std::nullopt, 0)
                          .attr("dense_shapes", "list(shape)", std::nullopt, 0)
                          .kernel(make_kernel_factory<ParseExampleKernel>()));
  register_builtin(r, OpDef("ParseExampleV2").shape_fn(shape_fns::none)
                          .input("serialized: string")
                          .input("names: string")
                          .input("sparse_keys: string")
                          .input("dense_keys: string")
                          .input("ragged_keys: string")
                          .input("dense_defaults: Tdense")
                          .output("sparse_indices: num_sparse * int64")
                          .output("sparse_values: sparse_types")
                          .output("sparse_shapes: num_sparse * int64")
                          .output("dense_values: Tdense")
                          .output("ragged_values: ragged_value_types")
                          .output("ragged_row_splits: ragged_split_types")
                          .attr("Tdense", "list(type)", std::nullopt, 0)
                          .attr("num_sparse", "int", std::nullopt, 0)
                          .attr("sparse_types", "list(type)", std::nullopt, 0)
                          .attr("ragged_value_types", "list(type)", std::nullopt, 0)
                          .attr("ragged_split_types", "list(type)", std::nullopt, 0)
                          .attr("dense_shapes", "list(shape)", std::nullopt, 0)
                          .kernel(make_kernel_factory<ParseExampleV2Kernel>()));
  register_builtin(r, OpDef("ParseSingleExample").shape_fn(shape_fns::none)
                          .input("serialized: string")
                          .input("dense_defaults: Tdense")
                          .output("sparse_indices: num_sparse * int64")
                          .output("sparse_values: sparse_types")
                          .output("sparse_shapes: num_sparse * int64")
                          .output("dense_values: Tdense")
                          .attr("num_sparse", "int", std::nullopt, 0)
                          .attr("sparse_keys", "list(string)", std::nullopt, 0)
                          .attr("dense_keys", "list(string)", std::nullopt, 0)
                          .attr("sparse_types", "list(type)", std::nullopt, 0)
                          .attr("Tdense", "list(type)", std::nullopt, 0)
                          .attr("dense_shapes", "list(shape)", std::nullopt, 0)
                          .kernel(make_kernel_factory<ParseSingleExampleKernel>()));
}

}  // namespace tagflow::ops
