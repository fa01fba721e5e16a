// The wire form of tensors (ops/tensor_wire.hpp): every dtype tagflow
// stores at ranks 0-8 and with empty shapes round-trips byte for byte;
// strings keep empty elements, NULs and large elements; several tensors
// read back in order; and whatever a peer sends — truncated, corrupted,
// lying about its shape or size, larger than the limit — is an error that
// says what is wrong and where, never a crash or a huge allocation.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>

#include "ops/tensor_wire.hpp"
#include "ops/variant.hpp"

using namespace tagflow;
using namespace tagflow::ops;

namespace {

constexpr int64_t kNoLimit = int64_t{1} << 40;

// The dtypes a Tensor can hold: TensorFlow's numbers tagflow has storage for.
std::vector<DType> stored_dtypes() {
  std::vector<DType> out;
  for (int n = 1; n <= 32; ++n) {
    const DType t = static_cast<DType>(n);
    if (is_known_dtype_number(n) && (dtype_is_object(t) || dtype_size(t) > 0)) out.push_back(t);
  }
  return out;
}

// A tensor of `dtype` and `shape` whose bytes (or strings) are random;
// variant elements are null, lists of random float vectors (some unset)
// and optionals, at random.
Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  if (dtype == DType::variant) {
    Tensor t(dtype, shape);
    VariantPtr* v = t.mutable_data<VariantPtr>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      switch (rng() % 3) {
        case 0: break;
        case 1: {
          auto l = std::make_shared<TensorList>(DType::float32, PartialShape{false, {-1}});
          for (uint64_t k = rng() % 4; k > 0; --k)
            l->elements.push_back(rng() % 3 == 0 ? Tensor() : random_tensor(DType::float32, Shape{int64_t(rng() % 3)}, rng));
          v[i] = std::move(l);
          break;
        }
        default:
          v[i] = rng() % 2 == 0 ? std::make_shared<OptionalValue>()
                                : std::make_shared<OptionalValue>(std::vector<Tensor>{random_tensor(DType::int64, Shape{2}, rng)});
      }
    }
    return t;
  }
  if (dtype_is_object(dtype)) {
    Tensor t(dtype, shape);
    std::string* s = t.mutable_data<std::string>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      s[i].resize(rng() % 12);  // some empty
      for (char& c : s[i]) c = static_cast<char>(rng());  // NULs and bytes >= 0x80 too
    }
    return t;
  }
  Tensor t = Tensor::uninitialized(dtype, shape);
  auto* bytes = static_cast<unsigned char*>(t.raw_mutable_data());
  for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = static_cast<unsigned char>(rng());
  return t;
}

// Same dtype, shape and bytes (Tensor::equals would call NaN payloads equal).
bool identical(const Tensor& a, const Tensor& b) {
  if (a.valid() != b.valid()) return false;
  if (!a.valid()) return true;
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  if (a.dtype() == DType::variant) return a.equals(b);  // float elements: random bits, no NaN compared as bits
  if (!dtype_is_object(a.dtype()))
    return a.byte_size() == b.byte_size() &&
           (a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
  for (int64_t i = 0; i < a.num_elements(); ++i)
    if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
  return true;
}

std::string error_of(std::string_view bytes, int64_t max_bytes = kNoLimit) {
  auto t = decode_tensor_wire(bytes, max_bytes);
  return t.ok() ? std::string("<ok>") : t.status().to_string();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class T>
void overwrite(std::string* bytes, size_t at, T v) {
  std::memcpy(bytes->data() + at, &v, sizeof v);
}

// Offsets in the wire form: version, dtype, rank, dims.
constexpr size_t kDtypeAt = 1, kRankAt = 5, kDimsAt = 6;

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_wire)

BOOST_AUTO_TEST_CASE(every_stored_dtype_round_trips_at_ranks_0_to_8_and_with_empty_shapes) {
  std::mt19937_64 rng(7);
  int cases = 0;
  for (DType dtype : stored_dtypes()) {
    for (int rank = 0; rank <= Shape::kMaxRank; ++rank) {
      for (int empty_dim = -1; empty_dim < rank; ++empty_dim) {
        std::vector<int64_t> dims;
        for (int i = 0; i < rank; ++i) dims.push_back(i == empty_dim ? 0 : 1 + (i % 3 == 0));
        const Shape shape = *Shape::make(dims);
        const Tensor t = random_tensor(dtype, shape, rng);
        const std::string wire = encode_tensor_wire(t);
        BOOST_TEST(wire.size() == tensor_wire_size(t));
        auto back = decode_tensor_wire(wire, kNoLimit);
        BOOST_REQUIRE_MESSAGE(back.ok(), dtype_name(dtype) << " " << shape.to_string() << ": "
                                                          << back.status().to_string());
        BOOST_TEST(identical(t, *back), dtype_name(dtype) << " " << shape.to_string());
        ++cases;
      }
    }
  }
  BOOST_TEST(stored_dtypes().size() >= 20u);
  BOOST_TEST(cases > 900);
}

BOOST_AUTO_TEST_CASE(references_dead_values_and_large_strings_round_trip) {
  std::mt19937_64 rng(11);
  const Tensor ref = random_tensor(DType::float32, Shape{3}, rng).with_dtype(make_ref(DType::float32));
  auto back = decode_tensor_wire(encode_tensor_wire(ref), kNoLimit);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((back->dtype() == make_ref(DType::float32)));
  BOOST_TEST(identical(ref, *back));

  auto dead = decode_tensor_wire(encode_tensor_wire(Tensor()), kNoLimit);
  BOOST_REQUIRE(dead.ok());
  BOOST_TEST(!dead->valid());
  BOOST_TEST(encode_tensor_wire(Tensor()).size() == 5u);

  Tensor strings(DType::string, Shape{3});
  strings.mutable_data<std::string>()[0] = std::string(1 << 20, 'x');
  strings.mutable_data<std::string>()[1] = std::string("a\0b", 3);
  auto s = decode_tensor_wire(encode_tensor_wire(strings), kNoLimit);
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(identical(strings, *s));
  BOOST_TEST(s->data<std::string>()[1].size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_large_tensor_is_its_bytes_and_a_small_header) {
  std::mt19937_64 rng(3);
  const Tensor big = random_tensor(DType::float32, Shape{1024, 4096}, rng);  // 16 MiB
  const std::string wire = encode_tensor_wire(big);
  BOOST_TEST(wire.size() == big.byte_size() + 1 + 4 + 1 + 2 * 8 + 8);
  BOOST_TEST(std::memcmp(wire.data() + wire.size() - big.byte_size(), big.raw_data(), big.byte_size()) == 0);
  auto back = decode_tensor_wire(wire, kNoLimit);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(identical(big, *back));
}

BOOST_AUTO_TEST_CASE(tensors_appended_one_after_another_read_back_in_order) {
  std::mt19937_64 rng(5);
  std::vector<Tensor> tensors = {random_tensor(DType::int64, Shape{2, 2}, rng), Tensor(),
                                 random_tensor(DType::string, Shape{4}, rng),
                                 random_tensor(DType::boolean, Shape{0, 3}, rng),
                                 random_tensor(DType::complex128, Shape{}, rng)};
  std::string wire;
  for (const Tensor& t : tensors) append_tensor_wire(t, &wire);
  std::string_view rest = wire;
  for (const Tensor& t : tensors) {
    auto got = read_tensor_wire(&rest, kNoLimit);
    BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    BOOST_TEST(identical(t, *got));
  }
  BOOST_TEST(rest.empty());
}

BOOST_AUTO_TEST_CASE(every_truncation_is_an_error_naming_the_byte) {
  std::mt19937_64 rng(9);
  for (const Tensor& t : {random_tensor(DType::float64, Shape{2, 3}, rng),
                          random_tensor(DType::string, Shape{3}, rng), Tensor()}) {
    const std::string wire = encode_tensor_wire(t);
    for (size_t n = 0; n < wire.size(); ++n) {
      const std::string e = error_of(std::string_view(wire).substr(0, n));
      BOOST_TEST(contains(e, "parse_error: malformed tensor on the wire at byte "), n << ": " << e);
    }
  }
  BOOST_TEST(error_of("") == "parse_error: malformed tensor on the wire at byte 0: it ends inside its "
                             "format version (0 of 1 bytes left)");
}

BOOST_AUTO_TEST_CASE(a_peer_lying_about_version_dtype_or_shape_is_refused) {
  std::mt19937_64 rng(13);
  const std::string good = encode_tensor_wire(random_tensor(DType::int32, Shape{2, 2}, rng));
  std::string bad = good;
  bad[0] = 9;
  BOOST_TEST(error_of(bad) == "parse_error: malformed tensor on the wire at byte 1: format version 9, this "
                              "tagflow reads version 1");
  for (uint32_t number : {33u, 99u, 0xffffffffu}) {
    bad = good;
    overwrite(&bad, kDtypeAt, number);
    BOOST_TEST(contains(error_of(bad), "dtype number " + std::to_string(number) + " is not one tagflow knows"),
               error_of(bad));
  }
  bad = good;
  bad[kRankAt] = 9;
  BOOST_TEST(contains(error_of(bad), "rank 9 is over the largest, 8"));
  bad = good;
  overwrite<int64_t>(&bad, kDimsAt, -2);
  BOOST_TEST(contains(error_of(bad), "at byte 22: "), error_of(bad));
  bad = good;
  overwrite<int64_t>(&bad, kDimsAt, int64_t{1} << 40);
  overwrite<int64_t>(&bad, kDimsAt + 8, int64_t{1} << 40);
  BOOST_TEST(contains(error_of(bad), "at byte 22: "), error_of(bad));
  // A shape that disagrees with the payload.
  bad = good;
  overwrite<int64_t>(&bad, kDimsAt, 3);
  BOOST_TEST(contains(error_of(bad), "int32 [3,2] needs 24 bytes, its payload has 16"), error_of(bad));
  // A payload longer than the message.
  bad = good;
  overwrite<uint64_t>(&bad, kDimsAt + 16, uint64_t{1} << 62);
  BOOST_TEST(contains(error_of(bad), "payload of 4611686018427387904 bytes is longer than the 16 bytes left"),
             error_of(bad));
  BOOST_TEST(error_of(good + "x") == "parse_error: malformed tensor on the wire at byte 46: 1 bytes follow it");
}

BOOST_AUTO_TEST_CASE(a_string_element_cannot_run_past_its_payload) {
  Tensor t(DType::string, Shape{2});
  t.mutable_data<std::string>()[0] = "ab";
  t.mutable_data<std::string>()[1] = "cde";
  const std::string good = encode_tensor_wire(t);
  const size_t payload_at = kDimsAt + 8, first_length_at = payload_at + 8;
  std::string bad = good;
  overwrite<uint64_t>(&bad, first_length_at, 100);
  BOOST_TEST(contains(error_of(bad), "string element 0 of 100 bytes runs past its payload"), error_of(bad));
  // Two strings of 0 bytes declared in a payload of 21: 5 bytes left over.
  bad = good;
  overwrite<uint64_t>(&bad, first_length_at, 0);
  overwrite<uint64_t>(&bad, first_length_at + 8, 0);
  BOOST_TEST(contains(error_of(bad), "bytes of the payload follow its last string element"), error_of(bad));
  // A billion empty strings need at least 8 bytes each on the wire.
  bad = good;
  overwrite<int64_t>(&bad, kDimsAt, 1000000000);
  BOOST_TEST(contains(error_of(bad), "string [1000000000] needs at least 8000000000 bytes, its payload has 21"),
             error_of(bad));
}

BOOST_AUTO_TEST_CASE(a_tensor_over_the_limit_is_refused_before_it_is_allocated) {
  std::mt19937_64 rng(17);
  const std::string wire = encode_tensor_wire(random_tensor(DType::float32, Shape{256}, rng));
  BOOST_TEST(error_of(wire, 1023) == "resource_exhausted: a tensor on the wire (float32 [256], 1024 bytes) is "
                                     "larger than the limit of 1023 bytes");
  BOOST_TEST(error_of(wire, 1024) == "<ok>");
}

// Any corruption of a valid message decodes to an error or to a tensor
// whose own encoding is that message: nothing is read that is not there.
BOOST_AUTO_TEST_CASE(corrupted_messages_decode_to_an_error_or_to_exactly_what_they_encode) {
  std::mt19937_64 rng(23);
  const std::vector<DType> dtypes = stored_dtypes();
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    const DType dtype = dtypes[rng() % dtypes.size()];
    std::vector<int64_t> dims(rng() % 4);
    for (int64_t& d : dims) d = static_cast<int64_t>(rng() % 3);
    std::string wire = encode_tensor_wire(random_tensor(dtype, *Shape::make(dims), rng));
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips)
      wire[rng() % wire.size()] = static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 4);
    auto t = decode_tensor_wire(wire, 1 << 20);
    if (!t.ok()) continue;
    ++decoded;
    BOOST_REQUIRE(encode_tensor_wire(*t) == wire);
  }
  BOOST_TEST(decoded > 0);
}

BOOST_AUTO_TEST_SUITE_END()

// Variant tensors (docs/protocol.md, "Variant tensors"): lists and
// optionals, nested, round-trip; every field is checked.
namespace {

// Offsets in the wire form of a scalar variant tensor holding a list of
// scalars: the kind byte, then the list's fields.
constexpr size_t kKindAt = 14, kListDtypeAt = 15, kListRankAt = 19, kListBoundAt = 20, kListCountAt = 28,
                 kFirstPresentAt = 36;

Tensor scalar_list(std::vector<Tensor> elements, int64_t bound = -1) {
  auto l = std::make_shared<TensorList>(DType::float32, PartialShape{false, {}}, bound);
  l->elements = std::move(elements);
  return variant_scalar(std::move(l));
}

// A list whose one element is a list ... `depth` lists deep.
Tensor nested_lists(int depth) {
  Tensor t = scalar_list({Tensor::scalar<float>(1)});
  for (int i = 1; i < depth; ++i) {
    auto l = std::make_shared<TensorList>(DType::variant, PartialShape{true, {}});
    l->elements.push_back(t);
    t = variant_scalar(std::move(l));
  }
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_wire_variant)

BOOST_AUTO_TEST_CASE(lists_and_optionals_round_trip_nested_with_unset_elements) {
  auto inner = std::make_shared<TensorList>(DType::int32, PartialShape{false, {-1, 2}}, 7);
  inner->elements = {Tensor::from_vector<int32_t>(Shape{1, 2}, {1, 2}), Tensor(),
                     Tensor::from_vector<int32_t>(Shape{3, 2}, {1, 2, 3, 4, 5, 6})};
  auto outer = std::make_shared<TensorList>(DType::variant, PartialShape{true, {}});
  outer->elements = {variant_scalar(inner), Tensor(),
                     variant_scalar(std::make_shared<OptionalValue>(std::vector<Tensor>{
                         Tensor::string_scalar("abc"), variant_scalar(inner)}))};
  Tensor t(DType::variant, Shape{2, 2});
  t.mutable_data<VariantPtr>()[0] = outer;
  t.mutable_data<VariantPtr>()[1] = std::make_shared<OptionalValue>();
  t.mutable_data<VariantPtr>()[3] = inner;  // [2] stays null
  const std::string wire = encode_tensor_wire(t);
  BOOST_TEST(wire.size() == tensor_wire_size(t));
  auto back = decode_tensor_wire(wire, kNoLimit);
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == t));
  BOOST_TEST(back->debug_string() ==
             "variant[2,2] [[TensorList<variant>[3 elements],Optional<none>],[<empty variant>,TensorList<int32>[3 elements]]]");
  const auto& l = static_cast<const TensorList&>(*back->data<VariantPtr>()[3]);
  BOOST_TEST(l.element_shape.to_string() == "[?,2]");
  BOOST_TEST(l.max_num_elements == 7);
  BOOST_TEST(!l.elements[1].valid());
  BOOST_TEST(l.elements[2].debug_string() == "int32[3,2] [[1,2],[3,4],[5,6]]");
  // Every truncation is an error.
  for (size_t n = 0; n < wire.size(); ++n)
    BOOST_TEST(error_of(std::string_view(wire).substr(0, n)) != "<ok>", "truncated to " << n);
}

BOOST_AUTO_TEST_CASE(nesting_deeper_than_the_limit_is_refused) {
  BOOST_TEST(decode_tensor_wire(encode_tensor_wire(nested_lists(kMaxVariantWireDepth)), kNoLimit).ok());
  const std::string deep = encode_tensor_wire(nested_lists(kMaxVariantWireDepth + 2));
  BOOST_TEST(contains(error_of(deep), "variant values nest deeper than 16"), error_of(deep));
}

BOOST_AUTO_TEST_CASE(every_field_of_a_list_is_checked) {
  const std::string good = encode_tensor_wire(scalar_list({Tensor::scalar<float>(2), Tensor()}, 5));
  BOOST_REQUIRE(error_of(good) == "<ok>");
  std::string bad = good;
  overwrite<uint8_t>(&bad, kKindAt, 3);
  BOOST_TEST(contains(error_of(bad), "variant kind 3 is not one tagflow knows"), error_of(bad));
  bad = good;
  overwrite<uint32_t>(&bad, kListDtypeAt, 101);
  BOOST_TEST(contains(error_of(bad), "list element dtype number 101 is not one a tensor can have"), error_of(bad));
  bad = good;
  overwrite<uint32_t>(&bad, kListDtypeAt, static_cast<uint32_t>(DType::int32));
  BOOST_TEST(contains(error_of(bad), "list element 0 is float32[], in a list of int32 []"), error_of(bad));
  bad = good;
  overwrite<uint8_t>(&bad, kListRankAt, 9);
  BOOST_TEST(contains(error_of(bad), "list element rank 9 is over the largest, 8"), error_of(bad));
  bad = good;
  overwrite<int64_t>(&bad, kListBoundAt, -2);
  BOOST_TEST(contains(error_of(bad), "list bound -2 is below -1"), error_of(bad));
  bad = good;
  overwrite<uint64_t>(&bad, kListCountAt, uint64_t{1} << 60);
  BOOST_TEST(contains(error_of(bad), "a list of 1152921504606846976 elements in"), error_of(bad));
  bad = good;
  overwrite<uint8_t>(&bad, kFirstPresentAt, 2);
  BOOST_TEST(contains(error_of(bad), "list element 0 has present flag 2"), error_of(bad));
}

BOOST_AUTO_TEST_CASE(every_field_of_an_optional_is_checked) {
  const std::string none = encode_tensor_wire(variant_scalar(std::make_shared<OptionalValue>()));
  BOOST_REQUIRE(error_of(none) == "<ok>");
  std::string bad = none;
  overwrite<uint8_t>(&bad, kKindAt + 1, 1);  // has a value, but no components
  BOOST_TEST(contains(error_of(bad), "an optional with has-value flag 1 and 0 components"), error_of(bad));
  const std::string some =
      encode_tensor_wire(variant_scalar(std::make_shared<OptionalValue>(std::vector<Tensor>{Tensor::scalar<float>(1)})));
  bad = some;
  overwrite<uint64_t>(&bad, kKindAt + 2, 1000);
  BOOST_TEST(contains(error_of(bad), "an optional of 1000 components in"), error_of(bad));
  bad = some;
  overwrite<uint32_t>(&bad, kKindAt + 11, 0);  // the component: the invalid tensor
  BOOST_TEST(error_of(bad) != "<ok>");
}

BOOST_AUTO_TEST_SUITE_END()
