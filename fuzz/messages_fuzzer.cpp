// libFuzzer harness: the bytes a peer process could send, read as each
// message type that crosses the partition boundary (StepStart, StepResult,
// TransferBatch, TransferBatches, PartitionSpec, Tensor, Tag) by CAF's binary deserialiser
// in an actor system with the middleman, as a worker reads them. Reading
// may fail; it must never crash, hang or allocate more than the bytes
// allow. The first byte picks the type. Seeds: fuzz/corpus/messages,
// written by this harness itself with TAGFLOW_WRITE_SEEDS=DIR (valid
// messages of each type).
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "net/cluster_hosts.hpp"
#include "net/remote.hpp"

using namespace tagflow;

namespace {

struct Config : caf::actor_system_config {
  Config() {
    actors::add_message_types(*this);
    net::configure_middleman(*this);
  }
};

// Never destroyed: CAF's statics may be gone by the time an exit handler
// would destroy it (a crash in ~actor_system at exit); still reachable, so
// not a leak.
caf::actor_system& system_of_fuzzer() {
  static Config* cfg = new Config;
  static caf::actor_system* sys = new caf::actor_system{*cfg};
  return *sys;
}

template <class T>
void read_as(caf::actor_system& sys, const char* data, size_t size) {
  T value;
  caf::binary_deserializer source{sys, data, size};
  (void)source(value);
}

template <class T>
void write_seed(caf::actor_system& sys, const std::string& path, uint8_t kind, T value) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (sink(value)) std::abort();
  std::ofstream out(path, std::ios::binary);
  out.put(static_cast<char>(kind));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void write_seeds(caf::actor_system& sys, const std::string& dir) {
  using ops::Tensor;
  actors::TransferBatch batch;
  batch.step_id = 3;
  batch.instance = 0x1234;
  batch.iteration = 7;
  batch.values = {{0xabcdef, Tensor::from_vector<float>(ops::Shape{2, 2}, {1, 2, 3, 4}), false},
                  {0x1, Tensor(), true}};
  write_seed(sys, dir + "/transfer", 0, batch);
  actors::StepStart start;
  start.step_id = 9;
  Tensor text(ops::DType::string, ops::Shape{2});
  text.mutable_data<std::string>()[1] = "abc";
  start.feeds = {Tensor::scalar<int32_t>(5), text};
  start.timeout = caf::timespan{1000};
  start.memory_limit = 1 << 20;
  write_seed(sys, dir + "/step_start", 1, start);
  actors::StepResult result;
  result.step_id = 9;
  result.fetches = {Tensor::scalar<double>(2.5)};
  write_seed(sys, dir + "/step_result", 2, result);
  net::PartitionSpec spec;
  spec.graph_def = std::string("\x0a\x05\x0a\x01x\x12\x00", 7);
  spec.name = "CPU:0";
  spec.devices = {"/job:worker/replica:0/task:0/device:CPU:0"};
  write_seed(sys, dir + "/partition_spec", 3, spec);
  write_seed(sys, dir + "/tensor", 4, Tensor::from_vector<int64_t>(ops::Shape{3}, {1, -2, 3}));
  write_seed(sys, dir + "/tag", 5, actors::Tag().child("while", 2).child("inner", 0));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TAGFLOW_WRITE_SEEDS")) {
    write_seeds(system_of_fuzzer(), dir);
    std::_Exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  caf::actor_system& sys = system_of_fuzzer();
  const char* bytes = reinterpret_cast<const char*>(data) + 1;
  const size_t n = size - 1;
  switch (data[0] % 7) {
    case 0: read_as<actors::TransferBatch>(sys, bytes, n); break;
    case 1: read_as<actors::StepStart>(sys, bytes, n); break;
    case 2: read_as<actors::StepResult>(sys, bytes, n); break;
    case 3: read_as<net::PartitionSpec>(sys, bytes, n); break;
    case 4: read_as<ops::Tensor>(sys, bytes, n); break;
    case 5: read_as<actors::TransferBatches>(sys, bytes, n); break;
    default: read_as<actors::Tag>(sys, bytes, n); break;
  }
  return 0;
}
