#include "trace/compare.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>
#include <vector>

namespace tagflow::trace {

namespace {

using Where = std::tuple<uint64_t, int32_t, uint64_t, int64_t>;

bool node_event(const Event& e) {
  return e.kind == Kind::node_ran || e.kind == Kind::value_dead || e.kind == Kind::merge_input_ignored;
}

std::string describe_event(const Trace& t, const Event& e) {
  return fmt::format("{} '{}'{}", to_string(e.kind), t.node_name(e), e.port >= 0 ? fmt::format(" port {}", e.port) : "");
}

}  // namespace

std::string first_difference(const Trace& recorded, const Trace& replayed) {
  // The messages every actor took.
  std::map<ActorRef, std::vector<const Event*>> a_taken, b_taken;
  for (const Event& e : recorded.events())
    if (e.kind == Kind::message_taken) a_taken[e.to].push_back(&e);
  for (const Event& e : replayed.events())
    if (e.kind == Kind::message_taken) b_taken[e.to].push_back(&e);
  for (const auto& [actor, a] : a_taken) {
    const auto& b = b_taken[actor];
    for (size_t i = 0; i < a.size(); ++i) {
      if (i >= b.size())
        return fmt::format("{} took {} message(s) in the recording, {} in the replay", describe(actor), a.size(),
                           b.size());
      if (a[i]->from != b[i]->from || a[i]->seq != b[i]->seq || a[i]->message != b[i]->message)
        return fmt::format("message {} that {} took: {} #{} from {} in the recording, {} #{} from {} in the replay", i + 1,
                           describe(actor), to_string(a[i]->message), a[i]->seq, describe(a[i]->from),
                           to_string(b[i]->message), b[i]->seq, describe(b[i]->from));
    }
  }
  // The node events of every iteration.
  std::map<Where, std::vector<const Event*>> a_nodes, b_nodes;
  for (const Event& e : recorded.events())
    if (node_event(e)) a_nodes[{e.step, e.partition, e.instance, e.iteration}].push_back(&e);
  for (const Event& e : replayed.events())
    if (node_event(e)) b_nodes[{e.step, e.partition, e.instance, e.iteration}].push_back(&e);
  if (a_nodes.size() != b_nodes.size())
    return fmt::format("{} iterations ran in the recording, {} in the replay", a_nodes.size(), b_nodes.size());
  for (const auto& [where, a] : a_nodes) {
    const auto& b = b_nodes[where];
    const std::string at = fmt::format("at tag {} on {}", recorded.tag(std::get<2>(where), std::get<3>(where)),
                                       recorded.partition_name(std::get<0>(where), std::get<1>(where)));
    for (size_t i = 0; i < a.size() || i < b.size(); ++i) {
      if (i >= a.size() || i >= b.size())
        return fmt::format("{} event(s) {} in the recording, {} in the replay", a.size(), at, b.size());
      const Event& x = *a[i];
      const Event& y = *b[i];
      if (x.kind != y.kind || x.node != y.node || x.port != y.port || x.src_node != y.src_node ||
          x.src_port != y.src_port || x.dead != y.dead)
        return fmt::format("event {} {}: {} in the recording, {} in the replay", i + 1, at, describe_event(recorded, x),
                           describe_event(replayed, y));
    }
  }
  return "";
}

}  // namespace tagflow::trace
