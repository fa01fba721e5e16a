// Helpers of the checkpoint tests: the real checkpoints in
// tests/data/savedmodels, a temporary directory that removes itself, and
// whole-file reads and writes for corrupting copies.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace tagflow::ops::testing {

// The prefix of a SavedModel's checkpoint: <model dir>/variables/variables.
inline std::string savedmodel_prefix(const std::string& model_dir) {
  return std::string(TAGFLOW_TEST_DATA) + "/savedmodels/" + model_dir + "/variables/variables";
}
inline const std::string kHalfPlusTwo = "saved_model_half_plus_two_cpu/00000123";
inline const std::string kCounter = "saved_model_counter/00000123";
inline const std::string kHalfPlusTwoTf2 = "saved_model_half_plus_two_tf2_cpu/00000123";
inline const std::string kKerasLstm = "keras_lstm_from_sequential";
inline const std::string kKerasSimple = "keras_simple_model_from_auto_compile";
inline const std::vector<std::string> kAllModels = {kHalfPlusTwo, kCounter, kHalfPlusTwoTf2, kKerasLstm,
                                                    kKerasSimple};

// A fresh directory under the system's temporary directory, removed with
// everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tagflow_ckpt_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// Copies a checkpoint's index and single data shard to `to_prefix`.
inline void copy_checkpoint(const std::string& from_prefix, const std::string& to_prefix) {
  for (const char* suffix : {".index", ".data-00000-of-00001"})
    write_file(to_prefix + suffix, read_file(from_prefix + suffix));
}

}  // namespace tagflow::ops::testing
