// Tensors through CAF's own binary serialiser and deserialiser
// (actors/tensor_inspect.hpp): every dtype kind, empty shapes and dead values
// come back as they went; a corrupted tensor fails deserialisation with
// tagflow's message instead of crashing.
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include <cstring>
#include <vector>

#include "actors/tensor_inspect.hpp"

using namespace tagflow;
using ops::DType;
using ops::Shape;
using ops::Tensor;

namespace {

struct System {
  caf::actor_system_config config;
  caf::actor_system system{config};
};

std::vector<char> save(caf::actor_system& sys, Tensor t) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (auto e = sink(t)) throw std::runtime_error(sys.render(e));
  return buf;
}

caf::error load(caf::actor_system& sys, const std::vector<char>& buf, Tensor* t) {
  caf::binary_deserializer source{sys, buf};
  return source(*t);
}

}  // namespace

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

BOOST_AUTO_TEST_SUITE_END()
