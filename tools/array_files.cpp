// Tensors from and to files for `tagflow run`: --feed NAME=@FILE and
// --input KEY=@FILE read NumPy arrays (FILE.npy, FILE.npz:KEY) or a file's
// raw bytes (a string input: the WAV or JPEG a decoding graph takes);
// --output-dir DIR writes each fetched tensor as DIR/NAME.npy.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "ops/npy.hpp"
#include "ops/op_def.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

using ops::Status;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// FILE.npz:KEY, or FILE.npz alone when the archive holds one array.
ops::Expected<ops::Tensor> npz_argument(const std::string& spec) {
  std::string path = spec, key;
  if (!ends_with(spec, ".npz")) {
    const size_t at = spec.rfind(".npz:");
    path = spec.substr(0, at + 4);
    key = spec.substr(at + 5);
  }
  if (key.empty()) {
    TF_ASSIGN_OR_RETURN(std::vector<std::string> keys, ops::npz_keys(path));
    if (keys.size() != 1) {
      std::string names;
      for (const auto& k : keys) names += (names.empty() ? "" : ", ") + k;
      return Status(ops::Error::invalid_argument,
                    fmt::format("'{}' holds {} arrays ({}): name one as {}:KEY", path, keys.size(),
                                names.empty() ? "none" : names, path));
    }
    key = keys[0];
  }
  return ops::read_npz_array(path, key);
}

ops::Expected<std::string> raw_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf()))
    return Status(ops::Error::not_found, fmt::format("cannot read the file '{}'", path));
  return bytes.str();
}

// The array converted to `dtype` as TensorFlow's Python client converts a
// fed NumPy array (np.asarray(value, dtype)): by the Cast kernel, between
// numeric dtypes only.
ops::Expected<ops::Tensor> converted(const ops::Tensor& t, ops::DType dtype) {
  if (t.dtype() == dtype) return t;
  if (t.dtype() == ops::DType::string || dtype == ops::DType::string || !ops::dtype_is_numeric(dtype))
    return Status(ops::Error::invalid_argument,
                  fmt::format("the file holds {}, and {} is wanted", ops::dtype_name(t.dtype()),
                              ops::dtype_name(dtype)));
  const ops::OpDef* cast = ops::OpRegistry::global().find("Cast");
  ops::AttrMap attrs{{"SrcT", t.dtype()}, {"DstT", dtype}};
  TF_RETURN_IF_ERROR(cast->check_and_complete_attrs(attrs));
  ops::KernelInit init{"--feed cast", attrs, {t.dtype()}, {dtype}};
  TF_ASSIGN_OR_RETURN(std::unique_ptr<ops::Kernel> kernel, cast->make_kernel(init));
  ops::Tensor in = t, out;
  ops::KernelContext ctx(&in, 1, &out, 1);
  TF_RETURN_IF_ERROR(kernel->compute(ctx));
  return out;
}

// DIR/NAME.npy for a fetch: the port dropped when 0, '/' and ':' spelled '_'.
std::string file_name_of(const std::string& fetch) {
  std::string name = ends_with(fetch, ":0") ? fetch.substr(0, fetch.size() - 2) : fetch;
  for (char& c : name)
    if (c == '/' || c == ':') c = '_';
  return name + ".npy";
}

Status make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return Status(ops::Error::not_found,
                    fmt::format("--output-dir {}: cannot make '{}': {}", dir, prefix, std::strerror(errno)));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status(ops::Error::invalid_argument, fmt::format("--output-dir {}: not a directory", dir));
  return ops::ok_status();
}

}  // namespace

ops::Expected<ops::Tensor> tensor_from_file(const std::string& path, ops::DType dtype,
                                            const ops::PartialShape& shape) {
  ops::Expected<ops::Tensor> array = Status(ops::Error::internal, "unread");
  if (ends_with(path, ".npy")) {
    array = ops::read_npy_file(path);
  } else if (ends_with(path, ".npz") || path.rfind(".npz:") != std::string::npos) {
    array = npz_argument(path);
  } else {
    if (dtype != ops::DType::string)
      return Status(ops::Error::invalid_argument,
                    fmt::format("@{}: {} is wanted, and a file that is not .npy or .npz gives its bytes as a "
                                "string",
                                path, ops::dtype_name(dtype)));
    TF_ASSIGN_OR_RETURN(std::string bytes, raw_bytes(path));
    // One file is one string: a vector of one only where a vector is declared.
    const bool vector = !shape.unknown_rank && shape.dims.size() == 1;
    return vector ? ops::Tensor::vector<std::string>({std::move(bytes)}) : ops::Tensor::string_scalar(std::move(bytes));
  }
  if (!array.ok()) return array.status();
  auto value = converted(*array, dtype);
  if (!value.ok()) return value.status().with_prefix(fmt::format("@{}: ", path));
  return value;
}

Status write_fetches(const std::string& dir, const std::vector<std::string>& names,
                     const std::vector<ops::Tensor>& tensors) {
  TF_RETURN_IF_ERROR(make_dirs(dir));
  std::set<std::string> files;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string file = file_name_of(names[i]);
    if (!files.insert(file).second)
      return Status(ops::Error::invalid_argument,
                    fmt::format("--output-dir {}: two fetches would both be written to {}", dir, file));
    if (tensors[i].dtype() == ops::DType::bfloat16)
      std::fprintf(stderr, "tagflow: %s is bfloat16, which NumPy has no dtype for: written as float32\n",
                   names[i].c_str());
    Status s = ops::write_npy_file(dir + "/" + file, tensors[i]);
    if (!s.ok()) return s.with_prefix(fmt::format("--output-dir {}: {}: ", dir, names[i]));
  }
  return ops::ok_status();
}

}  // namespace tagflow::tools
