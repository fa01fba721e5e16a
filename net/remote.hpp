// The messages between a client and a worker (docs/protocol.md, "Many
// processes"): a handshake that only uses CAF's own types, so that a
// worker of another tagflow version answers it and is refused by name, and
// the request that ships a partition's GraphDef. Internal to net/
// (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <string>
#include <vector>

namespace tagflow::net {

using hello_atom = caf::atom_constant<caf::atom("hello")>;
using create_atom = caf::atom_constant<caf::atom("create")>;

// What a client and a worker must agree on: tagflow's version and the
// version of its wire messages.
std::string protocol_version();

// A partition for a worker to make and run.
struct PartitionSpec {
  std::string graph_def;  // binary GraphDef of the partition, _Send/_Recv included
  std::string name;       // its label in messages
  std::vector<std::string> devices;  // the full device names of the step's partitions
  int32_t index = 0;                 // this one's position among them
  std::vector<std::string> fetch_names;
  caf::actor client;  // the session's coordinator: the partition lives as long as it does
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PartitionSpec& x) {
  return f(caf::meta::type_name("tagflow.partition_spec"), x.graph_def, x.name, x.devices, x.index,
           x.fetch_names, x.client);
}

// tagflow's and net's message types (actors::add_message_types too).
void add_net_message_types(caf::actor_system_config& cfg);

}  // namespace tagflow::net
