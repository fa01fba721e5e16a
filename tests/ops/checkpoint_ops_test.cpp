// The saver's kernels (ops/checkpoint_ops.cpp, ops/string_ops.cpp) run as
// the executor runs them: SaveV2, RestoreV2 and MergeV2Checkpoints on real
// and fresh checkpoints, and the string ops a saver's graph builds its file
// names with, against TensorFlow's documented values.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "checkpoint_test_util.hpp"
#include "op_test_util.hpp"
#include "ops/tensor_bundle.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Tensor strings(std::vector<std::string> v) { return Tensor::vector<std::string>(v); }
Tensor str(std::string s) { return Tensor::string_scalar(std::move(s)); }

AttrValue types(std::vector<DType> t) {
  AttrList l;
  l.type = std::move(t);
  return AttrValue(l);
}

Expected<std::vector<Tensor>> restore(const std::string& prefix, std::vector<std::string> names,
                                      std::vector<DType> dtypes, std::vector<std::string> slices = {}) {
  if (slices.empty()) slices.assign(names.size(), "");
  return run_op("RestoreV2", {str(prefix), strings(names), strings(slices)}, {{"dtypes", types(dtypes)}});
}

Status save(const std::string& prefix, std::vector<std::string> names, std::vector<Tensor> tensors) {
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  std::vector<Tensor> inputs = {str(prefix), strings(names), strings(std::vector<std::string>(names.size()))};
  inputs.insert(inputs.end(), tensors.begin(), tensors.end());
  return run_op("SaveV2", inputs, {{"dtypes", types(dtypes)}}).status();
}

Status merge(std::vector<std::string> sources, const std::string& destination, AttrMap attrs = {}) {
  return run_op("MergeV2Checkpoints", {strings(sources), str(destination)}, attrs).status();
}

std::string error_of(const Status& s) { return s.ok() ? "ok" : s.to_string(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_ops)

BOOST_AUTO_TEST_CASE(ops_are_stateful) {
  for (const char* op : {"SaveV2", "RestoreV2", "MergeV2Checkpoints"})
    BOOST_TEST(OpRegistry::global().find(op)->is_stateful(), op);
}

BOOST_AUTO_TEST_CASE(restore_half_plus_two) {
  auto out = restore(savedmodel_prefix(kHalfPlusTwo), {"c", "a", "b"},
                     {DType::float32, DType::float32, DType::float32});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[0].scalar_value<float>() == 3.0f);
  BOOST_TEST((*out)[1].scalar_value<float>() == 0.5f);
  BOOST_TEST((*out)[2].scalar_value<float>() == 2.0f);
}

BOOST_AUTO_TEST_CASE(restore_tf2_object_graph_string) {
  auto out = restore(savedmodel_prefix(kHalfPlusTwoTf2), {"_CHECKPOINTABLE_OBJECT_GRAPH", "a/.ATTRIBUTES/VARIABLE_VALUE"},
                     {DType::string, DType::float32});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(!(*out)[0].scalar_value<std::string>().empty());
  BOOST_TEST((*out)[1].scalar_value<float>() == 0.5f);
}

BOOST_AUTO_TEST_CASE(restore_with_the_wrong_dtype) {
  auto out = restore(savedmodel_prefix(kHalfPlusTwo), {"a", "b"}, {DType::float32, DType::int32});
  BOOST_TEST_REQUIRE(!out.ok());
  BOOST_TEST(out.status().code() == Error::invalid_argument);
  BOOST_TEST(contains(out.status().message(), "tensor 'b' is float32 [] in the checkpoint but RestoreV2's dtypes[1] is int32"),
             out.status().message());
}

BOOST_AUTO_TEST_CASE(restore_missing_tensor_and_missing_checkpoint) {
  auto out = restore(savedmodel_prefix(kHalfPlusTwo), {"nope"}, {DType::float32});
  BOOST_TEST(out.status().code() == Error::not_found);
  BOOST_TEST(contains(out.status().message(), "no tensor named 'nope'"), out.status().message());
  out = restore("/nonexistent/variables", {"a"}, {DType::float32});
  BOOST_TEST(out.status().code() == Error::not_found);
  BOOST_TEST(contains(out.status().message(), "/nonexistent/variables.index"), out.status().message());
}

BOOST_AUTO_TEST_CASE(restore_bad_inputs) {
  const std::string prefix = savedmodel_prefix(kHalfPlusTwo);
  auto sliced = restore(prefix, {"a"}, {DType::float32}, {"2 0,1"});
  BOOST_TEST(sliced.status().code() == Error::unimplemented);
  BOOST_TEST(contains(sliced.status().message(), "shape_and_slices '2 0,1'"), sliced.status().message());
  auto counts = run_op("RestoreV2", {str(prefix), strings({"a", "b"}), strings({""})},
                       {{"dtypes", types({DType::float32, DType::float32})}});
  BOOST_TEST(counts.status().code() == Error::invalid_argument);
  auto names_vs_dtypes = restore(prefix, {"a", "b"}, {DType::float32});
  BOOST_TEST(names_vs_dtypes.status().code() == Error::invalid_argument);
  auto vector_prefix = run_op("RestoreV2", {strings({prefix}), strings({"a"}), strings({""})},
                              {{"dtypes", types({DType::float32})}});
  BOOST_TEST(vector_prefix.status().code() == Error::invalid_argument);
}

BOOST_AUTO_TEST_CASE(save_then_restore) {
  TempDir dir;
  const std::string prefix = dir / "model/variables";
  Tensor w = Tensor::from_vector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor step = Tensor::scalar<int64_t>(42);
  Tensor words = Tensor::vector<std::string>({"alpha", "", "gamma"});
  Tensor flags = Tensor::vector<bool>({false, true});
  Status saved = save(prefix, {"w", "global_step", "vocab", "flags"}, {w, step, words, flags});
  BOOST_TEST_REQUIRE(saved.ok(), saved.to_string());
  auto out = restore(prefix, {"vocab", "w", "flags", "global_step"},
                     {DType::string, DType::float32, DType::boolean, DType::int64});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(((*out)[0] == words), (*out)[0].debug_string());
  BOOST_TEST(((*out)[1] == w), (*out)[1].debug_string());
  BOOST_TEST(((*out)[2] == flags), (*out)[2].debug_string());
  BOOST_TEST(((*out)[3] == step), (*out)[3].debug_string());
}

BOOST_AUTO_TEST_CASE(save_bad_inputs) {
  TempDir dir;
  // Two names, one tensor.
  auto out = run_op("SaveV2", {str(dir / "p"), strings({"a", "b"}), strings({"", ""}), Tensor::scalar<float>(1)},
                    {{"dtypes", types({DType::float32})}});
  BOOST_TEST(out.status().code() == Error::invalid_argument, error_of(out.status()));
  BOOST_TEST(save(dir / "p", {"a", "a"}, {Tensor::scalar<float>(1), Tensor::scalar<float>(2)}).code() ==
             Error::invalid_argument);
  BOOST_TEST(!std::filesystem::exists(dir / "p.index"));
}

// TensorFlow 1's sharded saver: each device's SaveV2 writes
// <prefix>_temp/part-0000N-of-0000M, then MergeV2Checkpoints merges them
// into <prefix> and removes the temporary directory.
BOOST_AUTO_TEST_CASE(merge_two_bundles) {
  TempDir dir;
  const std::string temp = dir / "model_temp";
  const std::string part0 = temp + "/part-00000-of-00002";
  const std::string part1 = temp + "/part-00001-of-00002";
  BOOST_TEST_REQUIRE(save(part0, {"w", "s"}, {Tensor::vector<float>({1, 2}), Tensor::string_scalar("zero")}).ok());
  BOOST_TEST_REQUIRE(save(part1, {"b", "t"}, {Tensor::scalar<double>(0.25), Tensor::scalar<int32_t>(7)}).ok());
  const std::string merged = dir / "model";
  Status s = merge({part0, part1}, merged);
  BOOST_TEST_REQUIRE(s.ok(), s.to_string());
  BOOST_TEST(!std::filesystem::exists(temp));  // delete_old_dirs
  BOOST_TEST(std::filesystem::exists(merged + ".data-00000-of-00002"));
  BOOST_TEST(std::filesystem::exists(merged + ".data-00001-of-00002"));
  auto out = restore(merged, {"b", "s", "t", "w"}, {DType::float64, DType::string, DType::int32, DType::float32});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[0].scalar_value<double>() == 0.25);
  BOOST_TEST((*out)[1].scalar_value<std::string>() == "zero");
  BOOST_TEST((*out)[2].scalar_value<int32_t>() == 7);
  BOOST_TEST(((*out)[3] == Tensor::vector<float>({1, 2})), (*out)[3].debug_string());
  auto reader = BundleReader::open(merged);
  BOOST_TEST_REQUIRE(reader.ok());
  BOOST_TEST(reader->num_shards() == 2);
  BOOST_TEST(reader->find("t")->shard_id == 1);
}

BOOST_AUTO_TEST_CASE(merge_one_bundle_renames_it) {
  TempDir dir;
  const std::string temp = dir / "tmp/part-00000-of-00001";
  BOOST_TEST_REQUIRE(save(temp, {"x"}, {Tensor::scalar<float>(9)}).ok());
  // delete_old_dirs false: the temporary directory stays, emptied.
  Status s = merge({temp}, dir / "final", {{"delete_old_dirs", false}});
  BOOST_TEST_REQUIRE(s.ok(), s.to_string());
  BOOST_TEST(std::filesystem::is_empty(dir / "tmp"));
  BOOST_TEST(std::filesystem::exists(dir / "final.data-00000-of-00001"));
  auto out = restore(dir / "final", {"x"}, {DType::float32});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[0].scalar_value<float>() == 9.0f);
}

BOOST_AUTO_TEST_CASE(merge_errors_and_missing_files) {
  TempDir dir;
  BOOST_TEST_REQUIRE(save(dir / "p0", {"x"}, {Tensor::scalar<float>(1)}).ok());
  BOOST_TEST_REQUIRE(save(dir / "p1", {"x"}, {Tensor::scalar<float>(2)}).ok());
  Status twice = merge({dir / "p0", dir / "p1"}, dir / "m");
  BOOST_TEST(twice.code() == Error::invalid_argument);
  BOOST_TEST(contains(twice.message(), "tensor 'x' is in two of the bundles"), twice.message());
  Status missing = merge({dir / "p0", dir / "absent"}, dir / "m");
  BOOST_TEST(missing.code() == Error::not_found, error_of(missing));
  Status allowed = merge({dir / "absent", dir / "p0"}, dir / "m", {{"allow_missing_files", true}});
  BOOST_TEST_REQUIRE(allowed.ok(), allowed.to_string());
  auto out = restore(dir / "m", {"x"}, {DType::float32});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[0].scalar_value<float>() == 1.0f);
  Status none = merge({dir / "absent"}, dir / "m2", {{"allow_missing_files", true}});
  BOOST_TEST(none.code() == Error::not_found, error_of(none));
}

// --- the file-name ops ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(sharded_filename) {
  auto out = run_op1("ShardedFilename", {str("/tmp/model"), Tensor::scalar<int32_t>(3), Tensor::scalar<int32_t>(12)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->scalar_value<std::string>() == "/tmp/model-00003-of-00012");
  out = run_op1("ShardedFilespec", {str("/tmp/model"), Tensor::scalar<int32_t>(12)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->scalar_value<std::string>() == "/tmp/model-?????" "-of-00012");
  out = run_op1("ShardedFilename", {str("m"), Tensor::vector<int32_t>({1}), Tensor::scalar<int32_t>(2)});
  BOOST_TEST(out.status().code() == Error::invalid_argument);
}

BOOST_AUTO_TEST_CASE(string_join) {
  // TF 1's saver: StringJoin([prefix, "_temp_<uuid>/part"]).
  auto out = run_op1("StringJoin", {str("/ckpt/model"), str("_temp_abc/part")}, {{"N", 2}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->scalar_value<std::string>() == "/ckpt/model_temp_abc/part");
  // Scalars repeat against vectors of one shape.
  out = run_op1("StringJoin", {strings({"a", "b"}), str("x"), strings({"1", "2"})},
                {{"N", 3}, {"separator", "-"}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out == strings({"a-x-1", "b-x-2"})), out->debug_string());
  out = run_op1("StringJoin", {strings({"a", "b"}), strings({"1", "2", "3"})}, {{"N", 2}});
  BOOST_TEST(out.status().code() == Error::invalid_argument);
  BOOST_TEST(contains(out.status().message(), "input shapes do not match"), out.status().message());
}

BOOST_AUTO_TEST_CASE(static_regex_full_match) {
  // TF 2's saver: is the prefix on an object store?
  auto out = run_op1("StaticRegexFullMatch", {strings({"s3://bucket/ckpt", "/tmp/s3://x", ""})},
                     {{"pattern", "^s3://.*"}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out == Tensor::vector<bool>({true, false, false})), out->debug_string());
  // A full match, not a search.
  out = run_op1("StaticRegexFullMatch", {str("abc")}, {{"pattern", "ab"}});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST(out->scalar_value<bool>() == false);
  out = run_op1("StaticRegexFullMatch", {str("abc")}, {{"pattern", "a[b-c]+"}});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST(out->scalar_value<bool>() == true);
  out = run_op1("StaticRegexFullMatch", {str("abc")}, {{"pattern", "(unclosed"}});
  BOOST_TEST(out.status().code() == Error::invalid_argument);
  BOOST_TEST(contains(out.status().message(), "invalid pattern '(unclosed'"), out.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
