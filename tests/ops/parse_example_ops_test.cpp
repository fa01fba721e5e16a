// ParseExample, ParseExampleV2 and ParseSingleExample
// (ops/parse_example_ops.cpp) on tf.Examples built here with the proto
// classes of ops/proto/example.proto, and on one encoded by hand from
// TensorFlow's feature.proto, which shows the schema is wire-compatible.
// Expected values are the features the test wrote.
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

#include "op_result.hpp"
#include "ops/proto/example.pb.h"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

namespace ex = tagflow::example;

ex::Feature floats(std::vector<float> v) {
  ex::Feature f;
  for (float x : v) f.mutable_float_list()->add_value(x);
  return f;
}

ex::Feature ints(std::vector<int64_t> v) {
  ex::Feature f;
  for (int64_t x : v) f.mutable_int64_list()->add_value(x);
  return f;
}

ex::Feature bytes(std::vector<std::string> v) {
  ex::Feature f;
  for (const std::string& x : v) f.mutable_bytes_list()->add_value(x);
  return f;
}

std::string serialize(const std::vector<std::pair<std::string, ex::Feature>>& features) {
  ex::Example e;
  auto& map = *e.mutable_features()->mutable_feature();
  for (const auto& kv : features) map[kv.first] = kv.second;
  std::string out;
  BOOST_REQUIRE(e.SerializeToString(&out));
  return out;
}

AttrList types(std::vector<DType> t) {
  AttrList l;
  l.type = std::move(t);
  return l;
}

AttrList shapes(std::vector<PartialShape> s) {
  AttrList l;
  l.shape = std::move(s);
  return l;
}

// A dense feature's configuration: key, default and declared shape.
struct Dense {
  std::string key;
  Tensor default_value;
  PartialShape shape;
};

struct Sparse {
  std::string key;
  DType dtype;
};

// ParseExample v1 on `serialized`; the outputs, or the error.
Expected<std::vector<Tensor>> parse_v1(const std::vector<std::string>& serialized, const std::vector<Sparse>& sparse,
                                       const std::vector<Dense>& dense, std::vector<std::string> names = {}) {
  std::vector<Tensor> inputs = {Tensor::vector<std::string>(serialized), Tensor::vector<std::string>(names)};
  std::vector<DType> sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;
  for (const Sparse& s : sparse) {
    inputs.push_back(Tensor::string_scalar(s.key));
    sparse_types.push_back(s.dtype);
  }
  for (const Dense& d : dense) {
    inputs.push_back(Tensor::string_scalar(d.key));
    dense_types.push_back(d.default_value.dtype());
    dense_shapes.push_back(d.shape);
  }
  for (const Dense& d : dense) inputs.push_back(d.default_value);
  return run_op("ParseExample", inputs,
                {{"Nsparse", static_cast<int64_t>(sparse.size())},
                 {"Ndense", static_cast<int64_t>(dense.size())},
                 {"sparse_types", types(sparse_types)},
                 {"Tdense", types(dense_types)},
                 {"dense_shapes", shapes(dense_shapes)}});
}

// ParseExampleV2: keys as vectors; `serialized` may be a scalar.
Expected<std::vector<Tensor>> parse_v2(const Tensor& serialized, const std::vector<Sparse>& sparse,
                                       const std::vector<Dense>& dense, AttrList ragged_types = {}) {
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<DType> sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;
  for (const Sparse& s : sparse) {
    sparse_keys.push_back(s.key);
    sparse_types.push_back(s.dtype);
  }
  for (const Dense& d : dense) {
    dense_keys.push_back(d.key);
    dense_types.push_back(d.default_value.dtype());
    dense_shapes.push_back(d.shape);
  }
  std::vector<Tensor> inputs = {serialized, Tensor::vector<std::string>({}), Tensor::vector<std::string>(sparse_keys),
                                Tensor::vector<std::string>(dense_keys), Tensor::vector<std::string>({})};
  for (const Dense& d : dense) inputs.push_back(d.default_value);
  return run_op("ParseExampleV2", inputs,
                {{"num_sparse", static_cast<int64_t>(sparse.size())},
                 {"sparse_types", types(sparse_types)},
                 {"Tdense", types(dense_types)},
                 {"ragged_value_types", ragged_types},
                 {"ragged_split_types", ragged_types.type.empty() ? AttrList{} : types({DType::int64})},
                 {"dense_shapes", shapes(dense_shapes)}});
}

std::string error_text(const Expected<std::vector<Tensor>>& r) { return r.ok() ? "ok" : r.status().to_string(); }

const Tensor kNoDefault = Tensor::vector<float>({});

}  // namespace

BOOST_AUTO_TEST_SUITE(parse_example_ops)

BOOST_AUTO_TEST_CASE(a_hand_encoded_example_parses) {
  // Example{features{feature{key: "x" value{float_list{value: 1.5}}}}} as
  // TensorFlow writes it: FloatList 0a 04 <1.5f>, Feature 12 06 ..., the
  // map entry 0a 01 'x' 12 08 ..., Features 0a 0d ..., Example 0a 0f ....
  const std::string wire("\x0a\x0f\x0a\x0d\x0a\x01x\x12\x08\x12\x06\x0a\x04\x00\x00\xc0\x3f", 17);
  BOOST_TEST(serialize({{"x", floats({1.5f})}}) == wire);
  auto out = parse_v1({wire}, {}, {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST((*out)[0].debug_string() == "float32[1,1] [[1.5]]");
}

BOOST_AUTO_TEST_CASE(dense_features_of_each_dtype_over_a_batch) {
  std::vector<std::string> batch;
  for (int i = 0; i < 3; ++i)
    batch.push_back(serialize({{"x", floats({0.5f * i, -1.0f * i})},
                               {"n", ints({int64_t{1} << 40, i})},
                               {"s", bytes({"e" + std::to_string(i)})},
                               {"unused", floats({9})}}));
  auto out = parse_v1(batch, {},
                      {{"x", kNoDefault, PartialShape{false, {2}}},
                       {"n", Tensor::vector<int64_t>({}), PartialShape{false, {1, 2}}},
                       {"s", Tensor::vector<std::string>({}), PartialShape{false, {}}}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST_REQUIRE(out->size() == 3u);
  const Tensor& x = (*out)[0];
  BOOST_TEST(x.shape().to_string() == "[3,2]");
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(x.data<float>()[2 * i] == 0.5f * i);
    BOOST_TEST(x.data<float>()[2 * i + 1] == -1.0f * i);
  }
  const Tensor& n = (*out)[1];
  BOOST_TEST(n.shape().to_string() == "[3,1,2]");
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(n.data<int64_t>()[2 * i] == int64_t{1} << 40);
    BOOST_TEST(n.data<int64_t>()[2 * i + 1] == i);
  }
  BOOST_TEST((*out)[2].debug_string() == "string[3] [\"e0\",\"e1\",\"e2\"]");
}

BOOST_AUTO_TEST_CASE(a_missing_feature_takes_its_default) {
  std::vector<std::string> batch = {serialize({{"x", floats({7})}}), serialize({}), serialize({{"y", floats({1})}})};
  auto out = parse_v1(batch, {},
                      {{"x", Tensor::vector<float>({-2.5f}), PartialShape{false, {1}}},
                       {"k", Tensor::from_vector<int64_t>(Shape({2}), {4, 5}), PartialShape{false, {2}}}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST((*out)[0].debug_string() == "float32[3,1] [[7],[-2.5],[-2.5]]");
  BOOST_TEST((*out)[1].debug_string() == "int64[3,2] [[4,5],[4,5],[4,5]]");
}

BOOST_AUTO_TEST_CASE(a_missing_required_feature_names_the_feature_and_the_example) {
  std::vector<std::string> batch = {serialize({{"x", floats({1})}}), serialize({{"x2", floats({1})}})};
  auto out = parse_v1(batch, {}, {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST(error_text(out) ==
             "invalid_argument: example 1: dense feature 'x' (float32 [1]) is missing and has no default");
  auto named = parse_v1(batch, {}, {{"x", kNoDefault, PartialShape{false, {1}}}}, {"first", "second"});
  BOOST_TEST(contains(error_text(named), "example 1 ('second'): dense feature 'x'"));
}

BOOST_AUTO_TEST_CASE(a_feature_of_the_wrong_kind_or_length_is_an_error) {
  auto wrong_kind = parse_v1({serialize({{"x", ints({1})}})}, {}, {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST(error_text(wrong_kind) ==
             "invalid_argument: example 0, dense feature 'x': the feature is a int64_list, but a float_list "
             "(float32) is expected");
  auto too_many = parse_v1({serialize({{"x", floats({1})}}), serialize({{"x", floats({1, 2})}})}, {},
                           {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST(error_text(too_many) ==
             "invalid_argument: example 1, dense feature 'x': 2 values, but shape [1] needs 1");
  auto empty_feature = parse_v1({serialize({{"x", ex::Feature()}})}, {}, {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST(contains(error_text(empty_feature), "dense feature 'x': 0 values, but shape [1] needs 1"));
  auto sparse_kind = parse_v1({serialize({{"s", bytes({"a"})}})}, {{"s", DType::int64}}, {});
  BOOST_TEST(contains(error_text(sparse_kind), "example 0, sparse feature 's': the feature is a bytes_list"));
}

BOOST_AUTO_TEST_CASE(bad_configurations_and_bytes_are_errors) {
  auto not_an_example = parse_v1({std::string("\xff\xff\xff", 3)}, {}, {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST(error_text(not_an_example) == "invalid_argument: example 0: 3 bytes that are not a serialized tf.Example");
  auto variable = parse_v1({serialize({{"x", floats({1})}})}, {}, {{"x", kNoDefault, PartialShape{false, {-1}}}});
  BOOST_TEST(contains(error_text(variable), "unimplemented: dense feature 'x' has shape [?]: variable-length"));
  auto bad_default = parse_v1({serialize({})}, {}, {{"x", Tensor::vector<float>({1, 2}), PartialShape{false, {1}}}});
  BOOST_TEST(contains(error_text(bad_default), "dense feature 'x': its default has shape [2], not 1 elements"));
  auto bad_dtype = parse_v1({serialize({})}, {}, {{"x", Tensor::vector<int32_t>({1}), PartialShape{false, {1}}}});
  BOOST_TEST(contains(error_text(bad_dtype), "attr 'Tdense' holds int32"));
}

BOOST_AUTO_TEST_CASE(sparse_features_give_indices_values_and_shape) {
  std::vector<std::string> batch = {serialize({{"s", ints({10, 11})}, {"t", bytes({"a"})}}), serialize({}),
                                    serialize({{"s", ints({12, 13, 14})}})};
  auto out = parse_v1(batch, {{"s", DType::int64}, {"t", DType::string}},
                      {{"d", Tensor::vector<float>({0.25f}), PartialShape{false, {}}}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST_REQUIRE(out->size() == 7u);  // 2 indices, 2 values, 2 shapes, 1 dense
  // A naive walk over what the test wrote: (example, position) per value.
  const std::vector<std::vector<int64_t>> s_values = {{10, 11}, {}, {12, 13, 14}};
  std::vector<int64_t> indices, values;
  size_t most = 0;
  for (size_t i = 0; i < s_values.size(); ++i) {
    for (size_t j = 0; j < s_values[i].size(); ++j) {
      indices.push_back(static_cast<int64_t>(i));
      indices.push_back(static_cast<int64_t>(j));
      values.push_back(s_values[i][j]);
    }
    most = std::max(most, s_values[i].size());
  }
  const Tensor& s_indices = (*out)[0];
  BOOST_TEST(s_indices.shape().to_string() == "[5,2]");
  BOOST_TEST(std::vector<int64_t>(s_indices.data<int64_t>(), s_indices.data<int64_t>() + 10) == indices);
  BOOST_TEST(std::vector<int64_t>((*out)[2].data<int64_t>(), (*out)[2].data<int64_t>() + 5) == values);
  BOOST_TEST((*out)[4].debug_string() == "int64[2] [3," + std::to_string(most) + "]");
  BOOST_TEST((*out)[1].debug_string() == "int64[1,2] [[0,0]]");
  BOOST_TEST((*out)[3].debug_string() == "string[1] [\"a\"]");
  BOOST_TEST((*out)[5].debug_string() == "int64[2] [3,1]");
  BOOST_TEST((*out)[6].debug_string() == "float32[3] [0.25,0.25,0.25]");
}

BOOST_AUTO_TEST_CASE(v2_takes_key_vectors_and_a_scalar_is_one_example) {
  std::vector<std::string> batch = {serialize({{"x", floats({1})}, {"s", floats({2, 3})}}),
                                    serialize({{"x", floats({4})}})};
  auto out = parse_v2(Tensor::vector<std::string>(batch), {{"s", DType::float32}},
                      {{"x", kNoDefault, PartialShape{false, {1}}}, {"x2", Tensor::vector<float>({0}), PartialShape{false, {1}}}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST_REQUIRE(out->size() == 5u);
  BOOST_TEST((*out)[0].debug_string() == "int64[2,2] [[0,0],[0,1]]");
  BOOST_TEST((*out)[1].debug_string() == "float32[2] [2,3]");
  BOOST_TEST((*out)[2].debug_string() == "int64[2] [2,2]");
  BOOST_TEST((*out)[3].debug_string() == "float32[2,1] [[1],[4]]");
  BOOST_TEST((*out)[4].debug_string() == "float32[2,1] [[0],[0]]");
  auto single = parse_v2(Tensor::string_scalar(batch[0]), {{"s", DType::float32}},
                         {{"x", kNoDefault, PartialShape{false, {1}}}});
  BOOST_TEST_REQUIRE(single.ok(), error_text(single));
  BOOST_TEST((*single)[0].debug_string() == "int64[2,1] [[0],[1]]");
  BOOST_TEST((*single)[2].debug_string() == "int64[1] [2]");
  BOOST_TEST((*single)[3].debug_string() == "float32[1] [1]");
  auto missing = parse_v2(Tensor::vector<std::string>(batch), {}, {{"s", kNoDefault, PartialShape{false, {2}}}});
  BOOST_TEST(error_text(missing) ==
             "invalid_argument: example 1: dense feature 's' (float32 [2]) is missing and has no default");
  auto ragged = parse_v2(Tensor::vector<std::string>(batch), {}, {}, types({DType::float32}));
  BOOST_TEST(contains(error_text(ragged), "unimplemented: ragged features are not supported"));
}

BOOST_AUTO_TEST_CASE(parse_single_example_reads_keys_from_attrs) {
  AttrList dense_keys, sparse_keys;
  dense_keys.s = {"x"};
  sparse_keys.s = {"s"};
  auto out = run_op("ParseSingleExample",
                    {Tensor::string_scalar(serialize({{"x", floats({1.5f, 2.5f})}, {"s", bytes({"p", "q"})}})),
                     Tensor::vector<float>({})},
                    {{"num_sparse", int64_t{1}},
                     {"sparse_keys", sparse_keys},
                     {"dense_keys", dense_keys},
                     {"sparse_types", types({DType::string})},
                     {"Tdense", types({DType::float32})},
                     {"dense_shapes", shapes({PartialShape{false, {2}}})}});
  BOOST_TEST_REQUIRE(out.ok(), error_text(out));
  BOOST_TEST((*out)[0].debug_string() == "int64[2,1] [[0],[1]]");
  BOOST_TEST((*out)[1].debug_string() == "string[2] [\"p\",\"q\"]");
  BOOST_TEST((*out)[2].debug_string() == "int64[1] [2]");
  BOOST_TEST((*out)[3].debug_string() == "float32[2] [1.5,2.5]");
}

BOOST_AUTO_TEST_SUITE_END()
