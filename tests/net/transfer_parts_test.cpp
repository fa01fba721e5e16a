// A large transfer through CAF's binary serialiser (actors/messages.hpp,
// TransferValue): each part carries only its own bytes and the whole
// tensor's head; read back, the parts are fragments that put together give
// the tensor byte for byte. Parts that do not fit their head, or claim more
// bytes than their message holds, fail deserialisation with a message and
// allocate nothing.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>

#include <caf/all.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "actors/messages.hpp"
#include "caf_bytes.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using actors::TransferBatch;
using actors::TransferValue;
using ops::DType;
using ops::Shape;
using ops::Tensor;

namespace {

// Part `part` of `t` as the sender makes it: the whole tensor by reference.
TransferBatch part_of(const Tensor& t, uint32_t part) {
  TransferBatch b;
  b.step_id = 3;
  b.iteration = 2;
  TransferValue& v = b.values.emplace_back();
  v.key = 42;
  v.value = t;
  v.part = part;
  v.parts = actors::transfer_parts(t.byte_size());
  return b;
}

// A float32 tensor whose bytes all differ from their neighbours'.
Tensor ramp(int64_t n) {
  Tensor t = Tensor::uninitialized(DType::float32, Shape{n});
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i) * 0.25f;
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transfer_parts)

BOOST_AUTO_TEST_CASE(a_value_up_to_one_part_is_whole_and_larger_ones_are_split) {
  BOOST_TEST(actors::transfer_parts(0) == 1u);
  BOOST_TEST(actors::transfer_parts(actors::kTransferPartBytes) == 1u);
  BOOST_TEST(actors::transfer_parts(actors::kTransferPartBytes + 1) == 2u);
  BOOST_TEST(actors::transfer_part_size(actors::kTransferPartBytes + 1, 1) == 1u);
  BOOST_TEST(actors::transfer_part_size(actors::kTransferPartBytes + 1, 2) == 0u);
}

BOOST_AUTO_TEST_CASE(each_part_carries_its_own_bytes_and_the_parts_make_the_tensor) {
  System s;
  const Tensor t = ramp(200001);  // 800,004 bytes: 4 parts, the last one short
  const uint32_t parts = actors::transfer_parts(t.byte_size());
  BOOST_REQUIRE(parts == 4u);
  std::vector<char> whole(t.byte_size());
  for (uint32_t part = 0; part < parts; ++part) {
    const std::vector<char> buf = save(s.system, part_of(t, part));
    const uint64_t n = actors::transfer_part_size(t.byte_size(), part);
    BOOST_TEST(buf.size() < n + 128, "part " << part << " took " << buf.size() << " bytes");
    TransferBatch back;
    caf::error e = load(s.system, buf, &back);
    BOOST_REQUIRE_MESSAGE(!e, s.system.render(e));
    BOOST_REQUIRE(back.values.size() == 1u);
    const TransferValue& v = back.values.front();
    BOOST_TEST(back.step_id == 3u);
    BOOST_TEST(back.iteration == 2);
    BOOST_TEST(v.key == 42u);
    BOOST_TEST(v.fragment);
    BOOST_TEST(v.part == part);
    BOOST_TEST(v.parts == parts);
    BOOST_TEST((v.whole_dtype == DType::float32));
    BOOST_TEST((v.whole_shape == t.shape()));
    BOOST_REQUIRE(v.value.byte_size() == n);
    std::memcpy(whole.data() + uint64_t{part} * actors::kTransferPartBytes, v.value.raw_data(), n);
  }
  BOOST_TEST(std::memcmp(whole.data(), t.raw_data(), t.byte_size()) == 0);
}

BOOST_AUTO_TEST_CASE(small_dead_and_string_values_cross_whole) {
  System s;
  Tensor strings(DType::string, Shape{2});
  strings.mutable_data<std::string>()[1] = std::string(300000, 'x');
  for (const Tensor& t : {ramp(10), strings, Tensor()}) {
    TransferBatch b;
    TransferValue& v = b.values.emplace_back();
    v.value = t;
    v.dead = !t.valid();
    TransferBatch back;
    BOOST_REQUIRE(!load(s.system, save(s.system, b), &back));
    BOOST_TEST(!back.values.front().fragment);
    BOOST_TEST(back.values.front().dead == !t.valid());
    if (t.valid()) BOOST_TEST(back.values.front().value.equals(t));
  }
}

BOOST_AUTO_TEST_CASE(a_part_that_does_not_fit_its_head_is_refused_by_the_sender_and_the_receiver) {
  System s;
  const Tensor t = ramp(200001);
  // The sender refuses to write a part the tensor does not have.
  TransferBatch bad = part_of(t, 4);
  std::vector<char> buf;
  caf::binary_serializer sink{s.system, buf};
  BOOST_TEST(static_cast<bool>(sink(bad)));
  // The receiver checks the part's number and count against the head: a
  // value's key (42), dead, part and parts come first (CAF writes integers
  // in network byte order).
  const std::vector<char> good = save(s.system, part_of(t, 1));
  const char key[8] = {0, 0, 0, 0, 0, 0, 0, 42};
  const auto key_at = std::search(good.begin(), good.end(), key, key + 8);
  BOOST_REQUIRE(key_at != good.end());
  const size_t part_at = static_cast<size_t>(key_at - good.begin()) + 8 + 1;
  uint32_t part_read = 0;
  std::memcpy(&part_read, good.data() + part_at, 4);
  BOOST_REQUIRE(ntohl(part_read) == 1u);
  for (auto [at, value, says] : std::vector<std::tuple<size_t, uint32_t, const char*>>{
           {part_at, 7, "part 7 of 4"}, {part_at + 4, 9, "9 parts for 800004 bytes"},
           {part_at + 4, 1u << 30, "parts for 800004 bytes"}}) {
    std::vector<char> corrupt = good;
    const uint32_t wire = htonl(value);
    std::memcpy(corrupt.data() + at, &wire, sizeof wire);
    TransferBatch back;
    caf::error e = load(s.system, corrupt, &back);
    BOOST_REQUIRE(static_cast<bool>(e));
    BOOST_TEST(s.system.render(e).find(says) != std::string::npos, s.system.render(e));
  }
  // A part cut short: it claims more bytes than its message holds.
  std::vector<char> cut(good.begin(), good.end() - 1000);
  TransferBatch back;
  caf::error e = load(s.system, cut, &back);
  BOOST_REQUIRE(static_cast<bool>(e));
  BOOST_TEST(s.system.render(e).find("left in the message") != std::string::npos, s.system.render(e));
}

BOOST_AUTO_TEST_SUITE_END()
