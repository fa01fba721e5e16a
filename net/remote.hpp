// The messages between a client and a worker (docs/protocol.md, "Many
// processes"): a handshake that only uses CAF's own types, so that a
// worker of another tagflow version answers it and is refused by name, and
// the request that ships a partition's GraphDef. Internal to net/
// (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "actors/actor_base.hpp"

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

namespace detail {

// Sends one request and hands the reply to `on_reply`, or the error to the
// promise, then quits. An ActorBase, so that the reply's hand-off from the
// middleman's thread is annotated for ThreadSanitizer like every message
// to tagflow's actors (a scoped_actor's is not).
template <class F>
class Requester : public actors::ActorBase {
 public:
  Requester(caf::actor_config& cfg, caf::actor dest, caf::timespan timeout, caf::message msg,
            std::shared_ptr<std::promise<caf::error>> done, F on_reply)
      : ActorBase(cfg), dest_(std::move(dest)), timeout_(timeout), msg_(std::move(msg)),
        done_(std::move(done)), on_reply_(std::move(on_reply)) {}
  const char* name() const override { return "tagflow.requester"; }
  caf::behavior make_behavior() override {
    auto done = done_;
    request(dest_, timeout_, std::move(msg_))
        .then(on_reply(typename caf::detail::get_callable_trait<F>::arg_types{}), [this, done](caf::error& e) {
          done->set_value(std::move(e));
          quit();
        });
    return {};
  }

 private:
  // A handler with the reply's types, as `F` takes them.
  template <class... Ts>
  auto on_reply(caf::detail::type_list<Ts...>) {
    return [this, done = done_, f = on_reply_](Ts... xs) mutable {
      f(xs...);
      done->set_value(caf::error{});
      quit();
    };
  }

  caf::actor dest_;
  caf::timespan timeout_;
  caf::message msg_;
  std::shared_ptr<std::promise<caf::error>> done_;
  F on_reply_;
};

}  // namespace detail

// Sends `msg` to `dest` and waits for the reply (at most `timeout`, and a
// second more for the request's own timeout to fire), which `on_reply`
// takes — a function of the reply's types, run on an actor's thread before
// this returns. Returns the request's error, if any.
template <class F>
caf::error request_and_wait(caf::actor_system& system, const caf::actor& dest, caf::timespan timeout,
                            caf::message msg, F on_reply) {
  auto done = std::make_shared<std::promise<caf::error>>();
  auto result = done->get_future();
  system.spawn<detail::Requester<F>>(dest, timeout, std::move(msg), done, std::move(on_reply));
  if (result.wait_for(timeout + std::chrono::seconds(1)) != std::future_status::ready)
    return caf::make_error(caf::sec::request_timeout);
  return result.get();
}

// tagflow's and net's message types (actors::add_message_types too).
void add_net_message_types(caf::actor_system_config& cfg);

}  // namespace tagflow::net
