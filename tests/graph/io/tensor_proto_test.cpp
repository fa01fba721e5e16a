#include <boost/test/unit_test.hpp>

#include <google/protobuf/text_format.h>

#include "graph/graph_test_util.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"
#include "ops/variant.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;
using ops::DType;
using ops::Tensor;

namespace {

tensorflow::TensorProto proto(const std::string& text) {
  tensorflow::TensorProto p;
  if (!google::protobuf::TextFormat::ParseFromString(text, &p))
    throw std::runtime_error("bad TensorProto text in test: " + text);
  return p;
}

Tensor from_text(const std::string& text) {
  auto t = tensor_from_proto(proto(text));
  if (!t.ok()) throw std::runtime_error(t.status().to_string());
  return std::move(t).value();
}

std::string error_of(const std::string& text) {
  auto t = tensor_from_proto(proto(text));
  return t.ok() ? std::string("<no error>") : t.status().to_string();
}

const char* kShape22 = "tensor_shape { dim { size: 2 } dim { size: 2 } } ";

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_proto)

BOOST_AUTO_TEST_CASE(a_single_value_is_repeated_over_the_shape) {
  Tensor t = from_text(std::string("dtype: DT_FLOAT ") + kShape22 + "float_val: 1.0");
  BOOST_TEST(t.debug_string() == "float32[2,2] [[1,1],[1,1]]");
}

BOOST_AUTO_TEST_CASE(the_last_of_several_values_is_repeated) {
  Tensor t = from_text("dtype: DT_INT32 tensor_shape { dim { size: 5 } } int_val: 7 int_val: -3");
  BOOST_TEST(t.values_string() == "[7,-3,-3,-3,-3]");
}

BOOST_AUTO_TEST_CASE(no_values_mean_zeros) {
  BOOST_TEST(from_text(std::string("dtype: DT_DOUBLE ") + kShape22).values_string() ==
             "[[0,0],[0,0]]");
  BOOST_TEST(from_text("dtype: DT_BOOL tensor_shape { dim { size: 2 } }").values_string() ==
             "[false,false]");
  BOOST_TEST(from_text("dtype: DT_STRING tensor_shape { dim { size: 2 } }").values_string() ==
             "[\"\",\"\"]");
}

BOOST_AUTO_TEST_CASE(extra_values_are_truncated) {
  Tensor t = from_text("dtype: DT_INT64 tensor_shape { dim { size: 2 } } "
                       "int64_val: 1 int64_val: 2 int64_val: 3");
  BOOST_TEST(t.values_string() == "[1,2]");
}

BOOST_AUTO_TEST_CASE(a_scalar_has_no_dims) {
  Tensor t = from_text("dtype: DT_FLOAT tensor_shape {} float_val: 3.1415");
  BOOST_TEST(t.shape().is_scalar());
  BOOST_TEST(t.scalar_value<float>() == 3.1415f);
}

BOOST_AUTO_TEST_CASE(tensor_content_wins_over_typed_values) {
  // [2] int32 {128, 1} little-endian, plus an int_val that must be ignored.
  Tensor t = from_text(
      "dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
      "tensor_content: \"\\200\\000\\000\\000\\001\\000\\000\\000\" int_val: 9");
  BOOST_TEST(t.values_string() == "[128,1]");
}

BOOST_AUTO_TEST_CASE(tensor_content_of_the_wrong_size_is_an_error) {
  std::string e = error_of("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
                           "tensor_content: \"\\000\\000\\200?\"");
  BOOST_TEST(contains(e, "tensor_content has 4 bytes"), e);
  BOOST_TEST(contains(e, "needs 8"), e);
}

BOOST_AUTO_TEST_CASE(unknown_dims_and_rank_are_errors) {
  BOOST_TEST(contains(error_of("dtype: DT_FLOAT tensor_shape { dim { size: -1 } }"),
                      "unknown dimension"));
  BOOST_TEST(contains(error_of("dtype: DT_FLOAT tensor_shape { unknown_rank: true }"),
                      "unknown rank"));
}

BOOST_AUTO_TEST_CASE(bad_dtypes_and_huge_shapes_are_errors) {
  BOOST_TEST(contains(error_of("dtype: DT_INVALID"), "DT_INVALID"));
  BOOST_TEST(contains(error_of("dtype: DT_FLOAT_REF"), "DT_FLOAT_REF"));
  std::string e = error_of(
      "dtype: DT_FLOAT tensor_shape { dim { size: 1000000 } dim { size: 1000000 } } float_val: 1");
  BOOST_TEST(contains(e, "too large"), e);
}

BOOST_AUTO_TEST_CASE(narrow_integer_and_half_types_use_int_and_half_val) {
  BOOST_TEST(from_text("dtype: DT_UINT8 tensor_shape { dim { size: 2 } } int_val: 255 int_val: 7")
                 .values_string() == "[255,7]");
  BOOST_TEST(from_text("dtype: DT_INT8 tensor_shape { dim { size: 1 } } int_val: -5")
                 .values_string() == "[-5]");
  BOOST_TEST(from_text("dtype: DT_UINT16 tensor_shape { dim { size: 1 } } int_val: 65535")
                 .values_string() == "[65535]");
  // 0x3c00 is 1.0 in IEEE half; 0x3f80 is 1.0 in bfloat16.
  BOOST_TEST(from_text("dtype: DT_HALF tensor_shape { dim { size: 2 } } half_val: 15360")
                 .values_string() == "[1,1]");
  BOOST_TEST(from_text("dtype: DT_BFLOAT16 tensor_shape {} half_val: 16256").values_string() ==
             "1");
  BOOST_TEST(from_text("dtype: DT_UINT32 tensor_shape {} uint32_val: 4000000000").values_string() ==
             "4000000000");
  BOOST_TEST(from_text("dtype: DT_UINT64 tensor_shape {} uint64_val: 18000000000000000000")
                 .values_string() == "18000000000000000000");
}

BOOST_AUTO_TEST_CASE(complex_values_come_in_pairs) {
  Tensor t = from_text(
      "dtype: DT_COMPLEX64 tensor_shape { dim { size: 3 } } scomplex_val: 1 scomplex_val: 2");
  BOOST_TEST(t.values_string() == "[(1,2),(1,2),(1,2)]");
  Tensor d = from_text("dtype: DT_COMPLEX128 tensor_shape {} dcomplex_val: -1 dcomplex_val: 0.5");
  BOOST_TEST(d.values_string() == "(-1,0.5)");
}

BOOST_AUTO_TEST_CASE(strings_use_string_val_and_repeat_too) {
  Tensor t = from_text(
      "dtype: DT_STRING tensor_shape { dim { size: 3 } } string_val: \"a\\000b\" string_val: \"c\"");
  BOOST_TEST(t.data<std::string>()[0] == std::string("a\0b", 3));
  BOOST_TEST(t.data<std::string>()[2] == "c");
}

BOOST_AUTO_TEST_CASE(bool_content_bytes_are_normalised) {
  Tensor t = from_text("dtype: DT_BOOL tensor_shape { dim { size: 3 } } "
                       "tensor_content: \"\\000\\001\\007\"");
  BOOST_TEST(t.values_string() == "[false,true,true]");
}

BOOST_AUTO_TEST_CASE(export_writes_tensor_content_and_round_trips) {
  Tensor ones = from_text(std::string("dtype: DT_FLOAT ") + kShape22 + "float_val: 1.0");
  tensorflow::TensorProto p;
  tensor_to_proto(ones, &p);
  BOOST_TEST(p.tensor_content().size() == 16u);
  BOOST_TEST(p.float_val_size() == 0);
  auto back = tensor_from_proto(p);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->equals(ones));

  Tensor s = Tensor::vector<std::string>({"x", "yz"});
  tensor_to_proto(s, &p);
  BOOST_TEST(p.string_val_size() == 2);
  BOOST_TEST(p.tensor_content().empty());
  auto sback = tensor_from_proto(p);
  BOOST_REQUIRE(sback.ok());
  BOOST_TEST(sback->equals(s));
}

BOOST_AUTO_TEST_CASE(every_storable_dtype_round_trips) {
  for (int n : {1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 22, 23}) {
    tensorflow::TensorProto p;
    p.set_dtype(static_cast<tensorflow::DataType>(n));
    p.mutable_tensor_shape()->add_dim()->set_size(3);
    std::string bytes(static_cast<size_t>(3 * ops::dtype_size(static_cast<DType>(n))), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 2);  // valid bools
    p.set_tensor_content(bytes);
    auto t = tensor_from_proto(p);
    BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
    tensorflow::TensorProto out;
    tensor_to_proto(*t, &out);
    BOOST_TEST(out.tensor_content() == bytes, "dtype " << n);
  }
}

BOOST_AUTO_TEST_CASE(string_tensor_content_uses_tensorflows_encoding) {
  // Two elements: lengths 1 and 2, then "a" "bc".
  Tensor t = from_text("dtype: DT_STRING tensor_shape { dim { size: 2 } } "
                       "tensor_content: \"\\001\\002abc\"");
  BOOST_TEST(t.values_string() == "[\"a\",\"bc\"]");
  BOOST_TEST(contains(error_of("dtype: DT_STRING tensor_shape { dim { size: 2 } } "
                               "tensor_content: \"\\001\\005abc\""),
                      "truncated"));
}

BOOST_AUTO_TEST_CASE(attr_values_of_every_kind_round_trip) {
  const char* texts[] = {
      "s: \"abc\"",
      "i: -7",
      "f: 0.5",
      "b: true",
      "type: DT_INT64",
      "shape { dim { size: -1 } dim { size: 3 } }",
      "shape { unknown_rank: true }",
      "tensor { dtype: DT_INT32 tensor_shape {} int_val: 4 }",
      "placeholder: \"T\"",
      "func { name: \"f\" attr { key: \"T\" value { type: DT_FLOAT } } }",
      "list { }",
      "list { s: \"a\" s: \"b\" }",
      "list { i: 1 i: 2 }",
      "list { f: 1.5 }",
      "list { b: false b: true }",
      "list { type: DT_FLOAT type: DT_INT32 }",
      "list { shape { dim { size: 2 } } shape { } }",
      "list { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } }",
      "list { func { name: \"g\" } func { name: \"h\" attr { key: \"n\" value { i: 3 } } } }",
      "",
  };
  for (const char* text : texts) {
    tensorflow::AttrValue p;
    BOOST_REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &p));
    auto v = attr_from_proto(p);
    BOOST_REQUIRE_MESSAGE(v.ok(), text << ": " << v.status().to_string());
    tensorflow::AttrValue out;
    attr_to_proto(*v, &out);
    auto again = attr_from_proto(out);
    BOOST_REQUIRE(again.ok());
    BOOST_TEST((*again == *v), text);
    BOOST_TEST(out.value_case() == p.value_case(), text);
  }
}

BOOST_AUTO_TEST_CASE(attr_kinds_map_to_plain_values) {
  tensorflow::AttrValue p;
  BOOST_REQUIRE(google::protobuf::TextFormat::ParseFromString(
      "func { name: \"f\" attr { key: \"T\" value { type: DT_FLOAT } } }", &p));
  auto v = attr_from_proto(p);
  BOOST_REQUIRE(v.ok());
  const auto* f = v->get_if<ops::NameAttrList>();
  BOOST_REQUIRE(f != nullptr);
  BOOST_TEST(f->name == "f");
  BOOST_TEST((f->attr.at("T").get<DType>() == DType::float32));

  p.Clear();
  p.set_type(static_cast<tensorflow::DataType>(77));
  auto bad = attr_from_proto(p);
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.status().message(), "77"));
}

// DT_VARIANT constants: TensorLists and Optionals as TensorFlow's
// VariantTensorDataProtos, here written by hand in TensorFlow's layout.
BOOST_AUTO_TEST_CASE(variant_tensor_lists_and_optionals_read_and_write) {
  // A list of float32 (1) elements of shape [2], no bound (-1 as a 10-byte
  // varint), element 1 unset: metadata = 1 unset, index 1, dtype 1, bound,
  // then TensorShapeProto { dim { size: 2 } } = 0x12 0x02 0x08 0x02.
  std::string metadata = std::string("\x01\x01\x01", 3) + std::string(9, '\xff') + std::string("\x01", 1) +
                         std::string("\x12\x02\x08\x02", 4);
  tensorflow::TensorProto p;
  p.set_dtype(tensorflow::DT_VARIANT);
  auto* v = p.add_variant_val();
  v->set_type_name("tensorflow::TensorList");
  v->set_metadata(metadata);
  *v->add_tensors() = proto("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2");
  *v->add_tensors() = proto("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 float_val: 4");
  auto t = tensor_from_proto(p);
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  BOOST_TEST(t->debug_string() == "variant[] TensorList<float32>[3 elements]");
  const auto& l = static_cast<const ops::TensorList&>(*t->data<ops::VariantPtr>()[0]);
  BOOST_TEST(l.element_shape.to_string() == "[2]");
  BOOST_TEST(l.max_num_elements == -1);
  BOOST_TEST(l.elements[0].debug_string() == "float32[2] [1,2]");
  BOOST_TEST(!l.elements[1].valid());
  BOOST_TEST(l.elements[2].debug_string() == "float32[2] [3,4]");
  // Written back: the same proto.
  tensorflow::TensorProto back;
  tensor_to_proto(*t, &back);
  BOOST_TEST(back.variant_val(0).metadata() == metadata);
  BOOST_TEST(back.variant_val(0).tensors_size() == 2);
  auto again = tensor_from_proto(back);
  BOOST_REQUIRE(again.ok());
  BOOST_TEST((*again == *t));
  // An optional, and a type tagflow does not know.
  auto o = tensor_from_proto(proto("dtype: DT_VARIANT tensor_shape {} variant_val { type_name: "
                                   "'tensorflow::data::Optional' metadata: '\\001' tensors { dtype: DT_INT32 "
                                   "tensor_shape {} int_val: 5 } }"));
  BOOST_REQUIRE_MESSAGE(o.ok(), o.status().to_string());
  BOOST_TEST(o->debug_string() == "variant[] Optional[1 component]");
  BOOST_TEST(contains(error_of("dtype: DT_VARIANT tensor_shape {} variant_val { type_name: 'foo::Bar' }"),
                      "variant constants holding 'foo::Bar' are not supported"));
  // Corrupt metadata: an unset index past the end.
  v->set_metadata(std::string("\x01\x07", 2));
  BOOST_TEST(!tensor_from_proto(p).ok());
}

BOOST_AUTO_TEST_SUITE_END()
