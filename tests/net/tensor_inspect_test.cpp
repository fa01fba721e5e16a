// Tensors through CAF's own binary serialiser and deserialiser
// (actors/tensor_inspect.hpp): every dtype at ranks 0-8, empty shapes and dead values
// come back as they went; a corrupted tensor fails deserialisation with
// tagflow's message instead of crashing.
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include <cstring>
#include <vector>

#include "actors/tensor_inspect.hpp"
#include "caf_bytes.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::DType;
using ops::Shape;
using ops::Tensor;

BOOST_AUTO_TEST_SUITE(tensor_inspect)

BOOST_AUTO_TEST_CASE(tensors_cross_cafs_serialiser_unchanged) {
  System s;
  Tensor strings(DType::string, Shape{2});
  strings.mutable_data<std::string>()[0] = std::string("a\0b", 3);
  for (const Tensor& t : {Tensor::from_vector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}),
                          Tensor::scalar<int64_t>(-7), Tensor(DType::int32, Shape{0, 4}),
                          Tensor::scalar<bool>(true), strings, Tensor()}) {
    Tensor back;
    caf::error e = load(s.system, save(s.system, t), &back);
    BOOST_REQUIRE_MESSAGE(!e, s.system.render(e));
    BOOST_TEST(back.valid() == t.valid());
    if (t.valid()) BOOST_TEST(back.equals(t), t.debug_string() << " vs " << back.debug_string());
  }
}

BOOST_AUTO_TEST_CASE(a_large_tensor_is_one_block_in_the_message) {
  System s;
  Tensor big = Tensor::uninitialized(DType::float32, Shape{1 << 20});
  std::memset(big.raw_mutable_data(), 0x41, big.byte_size());
  const std::vector<char> buf = save(s.system, big);
  BOOST_TEST(buf.size() < big.byte_size() + 64);
  Tensor back;
  BOOST_REQUIRE(!load(s.system, buf, &back));
  BOOST_TEST(back.equals(big));
}

BOOST_AUTO_TEST_CASE(a_corrupted_tensor_fails_deserialisation_with_tagflows_message) {
  System s;
  std::vector<char> buf = save(s.system, Tensor::from_vector<int32_t>(Shape{2}, {1, 2}));
  // The rank byte: after CAF's length of the string, the version and the dtype.
  const size_t rank_at = buf.size() - (1 + 4 + 1 + 8 + 8 + 8) + 5;
  buf[rank_at] = 12;
  Tensor back;
  caf::error e = load(s.system, buf, &back);
  BOOST_REQUIRE(static_cast<bool>(e));
  BOOST_TEST(s.system.render(e).find("rank 12 is over the largest, 8") != std::string::npos, s.system.render(e));
  BOOST_TEST(!back.valid());
}

BOOST_AUTO_TEST_CASE(every_dtype_at_ranks_0_to_8_and_empty_shapes_crosses_as_head_and_bytes) {
  System s;
  int cases = 0;
  for (int n = 1; n <= 32; ++n) {
    const DType dtype = static_cast<DType>(n);
    if (!ops::is_known_dtype_number(n) || (!ops::dtype_is_object(dtype) && ops::dtype_size(dtype) == 0)) continue;
    if (dtype == DType::variant) continue;  // tests/ops/tensor_wire_test.cpp: variant elements
    for (int rank = 0; rank <= Shape::kMaxRank; ++rank) {
      for (int empty_dim = -1; empty_dim < rank; ++empty_dim) {
        std::vector<int64_t> dims;
        for (int i = 0; i < rank; ++i) dims.push_back(i == empty_dim ? 0 : 1 + (i % 2));
        Tensor t(dtype, *Shape::make(dims));
        if (ops::dtype_is_object(dtype)) {
          for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<std::string>()[i] = std::string(i % 5, 'x');
        } else {
          auto* bytes = static_cast<unsigned char*>(t.raw_mutable_data());
          for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + n);
        }
        const std::vector<char> buf = save(s.system, t);
        Tensor back;
        caf::error e = load(s.system, buf, &back);
        BOOST_REQUIRE_MESSAGE(!e, ops::dtype_name(dtype) << " rank " << rank << ": " << s.system.render(e));
        BOOST_TEST((back.dtype() == t.dtype()));
        BOOST_TEST((back.shape() == t.shape()));
        if (ops::dtype_is_object(dtype)) {
          for (int64_t i = 0; i < t.num_elements(); ++i)
            BOOST_TEST(back.data<std::string>()[i] == t.data<std::string>()[i]);
        } else {
          BOOST_TEST(back.byte_size() == t.byte_size());
          BOOST_TEST((t.byte_size() == 0 || std::memcmp(back.raw_data(), t.raw_data(), t.byte_size()) == 0));
        }
        ++cases;
      }
    }
  }
  BOOST_TEST(cases > 800);
}

BOOST_AUTO_TEST_CASE(a_payload_longer_than_the_message_is_refused_before_anything_is_allocated) {
  System s;
  std::vector<char> buf = save(s.system, Tensor::from_vector<float>(Shape{4}, {1, 2, 3, 4}));
  buf.resize(buf.size() - 3);  // the message ends inside the payload
  Tensor back;
  caf::error e = load(s.system, buf, &back);
  BOOST_REQUIRE(static_cast<bool>(e));
  BOOST_TEST(s.system.render(e).find("its payload of 16 bytes is longer than the 13 bytes left") != std::string::npos,
             s.system.render(e));
  // A head that claims 2^40 elements of a few bytes' message.
  std::vector<char> huge = save(s.system, Tensor::from_vector<float>(Shape{1}, {1}));
  const size_t dim_at = 1 + 1 + 4 + 1;  // CAF's string length, version, dtype, rank
  const int64_t big = int64_t{1} << 40;
  std::memcpy(huge.data() + dim_at, &big, sizeof big);
  const uint64_t payload = uint64_t{4} << 40;
  std::memcpy(huge.data() + dim_at + 8, &payload, sizeof payload);
  e = load(s.system, huge, &back);
  BOOST_REQUIRE(static_cast<bool>(e));
  BOOST_TEST(s.system.render(e).find("longer than the 4 bytes left") != std::string::npos, s.system.render(e));
}

BOOST_AUTO_TEST_SUITE_END()
