// The saver's ops: SaveV2, RestoreV2 and MergeV2Checkpoints over tensor
// bundles (ops/tensor_bundle.hpp), and the file names a sharded saver
// builds, ShardedFilename and ShardedFilespec. Signatures and semantics
// follow TensorFlow's io_ops.cc and save_restore_v2_ops.cc. The first
// three touch files, so they are stateful: never pruned, merged or
// reordered as if they were pure. Only whole tensors are saved and
// restored: a non-empty shape_and_slices entry (a partitioned variable's
// slice) is unimplemented.
#include <fmt/format.h>

#include <filesystem>

#include "ops/kernel_factory.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_bundle.hpp"

namespace tagflow::ops {

namespace {

Status check_string_input(const Tensor& t, const char* name, int rank) {
  if (t.dtype() != DType::string || t.rank() != rank)
    return Status(Error::invalid_argument,
                  fmt::format("input {} must be a string {}, got {} {}", name,
                              rank == 0 ? "scalar" : "vector", dtype_name(t.dtype()),
                              t.shape().to_string()));
  return ok_status();
}

// The checks SaveV2 and RestoreV2 share: a scalar prefix and as many names
// as shape_and_slices entries, all of them "" (whole tensors).
Status check_save_restore_inputs(const KernelContext& ctx, size_t num_tensors) {
  TF_RETURN_IF_ERROR(check_string_input(ctx.input(0), "prefix", 0));
  TF_RETURN_IF_ERROR(check_string_input(ctx.input(1), "tensor_names", 1));
  TF_RETURN_IF_ERROR(check_string_input(ctx.input(2), "shape_and_slices", 1));
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  if (names.num_elements() != slices.num_elements())
    return Status(Error::invalid_argument,
                  fmt::format("tensor_names and shape_and_slices have different numbers of elements: "
                              "{} vs. {}",
                              names.num_elements(), slices.num_elements()));
  if (static_cast<size_t>(names.num_elements()) != num_tensors)
    return Status(Error::invalid_argument,
                  fmt::format("got {} tensor names but dtypes lists {} tensors", names.num_elements(),
                              num_tensors));
  for (int64_t i = 0; i < slices.num_elements(); ++i) {
    const std::string& spec = slices.data<std::string>()[i];
    if (!spec.empty())
      return Status(Error::unimplemented,
                    fmt::format("tensor '{}': shape_and_slices '{}': tagflow saves and restores "
                                "whole tensors only (shape_and_slices \"\")",
                                names.data<std::string>()[i], abbreviate(spec)));
  }
  return ok_status();
}

class SaveV2Kernel final : public Kernel {
 public:
  Status init(const KernelInit&) { return ok_status(); }
  Status compute(KernelContext& ctx) const override {
    const size_t n = static_cast<size_t>(ctx.num_inputs() - 3);
    TF_RETURN_IF_ERROR(check_save_restore_inputs(ctx, n));
    const std::string& prefix = ctx.input(0).scalar_value<std::string>();
    const std::string* names = ctx.input(1).data<std::string>();
    BundleWriter writer(prefix);
    for (size_t i = 0; i < n; ++i) TF_RETURN_IF_ERROR(writer.add(names[i], ctx.input(3 + static_cast<int>(i))));
    return writer.finish();
  }
};

class RestoreV2Kernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    dtypes_.assign(init.output_types.begin(), init.output_types.end());
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_RETURN_IF_ERROR(check_save_restore_inputs(ctx, dtypes_.size()));
    const std::string& prefix = ctx.input(0).scalar_value<std::string>();
    const std::string* names = ctx.input(1).data<std::string>();
    TF_ASSIGN_OR_RETURN(BundleReader reader, BundleReader::open(prefix));
    for (size_t i = 0; i < dtypes_.size(); ++i) {
      const BundleEntry* entry = reader.find(names[i]);
      if (entry != nullptr && entry->dtype != dtypes_[i])
        return Status(Error::invalid_argument,
                      fmt::format("{}: tensor '{}' is {} {} in the checkpoint but RestoreV2's dtypes[{}] "
                                  "is {}",
                                  bundle_index_filename(prefix), names[i], dtype_name(entry->dtype),
                                  entry->shape.to_string(), i, dtype_name(dtypes_[i])));
      TF_ASSIGN_OR_RETURN(Tensor t, reader.read(names[i]));
      ctx.set_output(static_cast<int>(i), std::move(t));
    }
    return ok_status();
  }

 private:
  std::vector<DType> dtypes_;
};

class MergeV2CheckpointsKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(delete_old_dirs_, init.attr<bool>("delete_old_dirs"));
    TF_ASSIGN_OR_RETURN(allow_missing_files_, init.attr<bool>("allow_missing_files"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_RETURN_IF_ERROR(check_string_input(ctx.input(0), "checkpoint_prefixes", 1));
    TF_RETURN_IF_ERROR(check_string_input(ctx.input(1), "destination_prefix", 0));
    const Tensor& sources = ctx.input(0);
    std::vector<std::string> prefixes(sources.data<std::string>(),
                                      sources.data<std::string>() + sources.num_elements());
    const std::string& destination = ctx.input(1).scalar_value<std::string>();
    TF_RETURN_IF_ERROR(merge_bundles(prefixes, destination, allow_missing_files_));
    if (delete_old_dirs_) {
      // As TensorFlow: each source's directory is removed if it is not the
      // destination's and is empty now (a sharded save's temporary one).
      namespace fs = std::filesystem;
      const fs::path merged_dir = fs::path(destination).parent_path();
      for (const std::string& prefix : prefixes) {
        const fs::path dir = fs::path(prefix).parent_path();
        std::error_code ec;
        if (dir.empty() || dir == merged_dir || fs::equivalent(dir, merged_dir, ec)) continue;
        fs::remove(dir, ec);  // fails, harmlessly, unless empty
      }
    }
    return ok_status();
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

Status scalar_int32(const Tensor& t, const char* name, int32_t* out) {
  if (t.dtype() != DType::int32 || t.rank() != 0)
    return Status(Error::invalid_argument, fmt::format("input {} must be an int32 scalar, got {} {}", name,
                                                       dtype_name(t.dtype()), t.shape().to_string()));
  *out = t.scalar_value<int32_t>();
  return ok_status();
}

Status sharded_filename_kernel(KernelContext& ctx) {
  TF_RETURN_IF_ERROR(check_string_input(ctx.input(0), "basename", 0));
  int32_t shard = 0, num_shards = 0;
  TF_RETURN_IF_ERROR(scalar_int32(ctx.input(1), "shard", &shard));
  TF_RETURN_IF_ERROR(scalar_int32(ctx.input(2), "num_shards", &num_shards));
  ctx.set_output(0, Tensor::string_scalar(
                        sharded_filename(ctx.input(0).scalar_value<std::string>(), shard, num_shards)));
  return ok_status();
}

Status sharded_filespec_kernel(KernelContext& ctx) {
  TF_RETURN_IF_ERROR(check_string_input(ctx.input(0), "basename", 0));
  int32_t num_shards = 0;
  TF_RETURN_IF_ERROR(scalar_int32(ctx.input(1), "num_shards", &num_shards));
  ctx.set_output(0, Tensor::string_scalar(
                        fmt::format("{}-?????" "-of-{:05d}", ctx.input(0).scalar_value<std::string>(), num_shards)));
  return ok_status();
}

}  // namespace

void register_checkpoint_ops(OpRegistry& r) {
  register_builtin(r, OpDef("SaveV2").shape_fn(shape_fns::none)
                          .input("prefix: string")
                          .input("tensor_names: string")
                          .input("shape_and_slices: string")
                          .input("tensors: dtypes")
                          .attr("dtypes", "list(type)")
                          .stateful()
                          .kernel(make_kernel_factory<SaveV2Kernel>()));
  register_builtin(r, OpDef("RestoreV2").shape_fn(shape_fns::none)
                          .input("prefix: string")
                          .input("tensor_names: string")
                          .input("shape_and_slices: string")
                          .output("tensors: dtypes")
                          .attr("dtypes", "list(type)")
                          .stateful()
                          .kernel(make_kernel_factory<RestoreV2Kernel>()));
  register_builtin(r, OpDef("MergeV2Checkpoints").shape_fn(shape_fns::none)
                          .input("checkpoint_prefixes: string")
                          .input("destination_prefix: string")
                          .attr("delete_old_dirs", "bool", true)
                          .attr("allow_missing_files", "bool", false)
                          .stateful()
                          .kernel(make_kernel_factory<MergeV2CheckpointsKernel>()));
  register_builtin(r, OpDef("ShardedFilename").shape_fn(shape_fns::scalars)
                          .input("basename: string")
                          .input("shard: int32")
                          .input("num_shards: int32")
                          .output("filename: string")
                          .kernel_fn(sharded_filename_kernel));
  register_builtin(r, OpDef("ShardedFilespec").shape_fn(shape_fns::scalars)
                          .input("basename: string")
                          .input("num_shards: int32")
                          .output("filename: string")
                          .kernel_fn(sharded_filespec_kernel));
}

}  // namespace tagflow::ops
