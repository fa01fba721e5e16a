#include "actors/network.hpp"

#include "actors/actor_base.hpp"

#include <algorithm>

namespace tagflow::actors {

namespace {
thread_local Network* current = nullptr;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t ref_hash(const trace::ActorRef& a) {
  return mix(mix(mix(mix(1, static_cast<uint64_t>(a.role)), static_cast<uint64_t>(a.partition)), a.instance),
             static_cast<uint64_t>(a.index));
}
}  // namespace

Network::Installed::Installed(Network* n) : previous_(current) { current = n; }
Network::Installed::~Installed() { current = previous_; }
Network* Network::installed() { return current; }

Network::~Network() = default;

void Network::hold(ActorBase* receiver, caf::mailbox_element_ptr msg) {
  trace::ActorRef from{trace::Role::caller, -1, 0, 0};
  if (msg->sender) {
    auto* sender = dynamic_cast<ActorBase*>(caf::actor_cast<caf::abstract_actor*>(msg->sender));
    if (sender != nullptr) from = sender->trace_ref();
  }
  Channel& c = channels_[{receiver->trace_ref(), from}];
  const trace::MessageKind kind = message_kind(msg->content());
  caf::strong_actor_ptr self{receiver->ctrl()};
  const uint64_t seq = ++next_seq_[{receiver->id(), from}];
  c.queue.push_back(Held{std::move(msg), std::move(self), kind, seq, arrivals_++});
  ++held_;
}

// Oldest first: the first is what a plain FIFO network would deliver.
std::vector<PendingMessage> Network::pending() const {
  std::vector<std::pair<uint64_t, PendingMessage>> heads;
  for (const auto& [key, c] : channels_)
    if (!c.queue.empty())
      heads.push_back({c.queue.front().arrival, {key.second, key.first, c.queue.front().kind, c.queue.front().seq}});
  std::sort(heads.begin(), heads.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PendingMessage> out;
  out.reserve(heads.size());
  for (auto& [arrival, m] : heads) out.push_back(m);
  return out;
}

uint64_t Network::entry_hash(const PendingMessage& m) {
  return mix(mix(ref_hash(m.from), static_cast<uint64_t>(m.kind)), m.seq);
}

uint64_t Network::state_after(const PendingMessage& m) const {
  auto it = history_.find(m.to);
  const uint64_t before = it == history_.end() ? 0 : it->second;
  const uint64_t after = mix(mix(before, ref_hash(m.to)), entry_hash(m));
  return state_ - before + after;  // the sum over receivers: independent of their order
}

void Network::deliver(std::map<ChannelKey, Channel>::iterator channel) {
  Held h = std::move(channel->second.queue.front());
  channel->second.queue.pop_front();
  --held_;
  ++deliveries_;
  const PendingMessage m{channel->first.second, channel->first.first, h.kind, h.seq};
  uint64_t& history = history_[m.to];
  const uint64_t next = mix(mix(history, ref_hash(m.to)), entry_hash(m));
  state_ = state_ - history + next;
  history = next;
  auto* receiver = dynamic_cast<ActorBase*>(caf::actor_cast<caf::abstract_actor*>(h.receiver));
  if (receiver != nullptr) receiver->enqueue_now(std::move(h.msg), nullptr);
}

bool Network::deliver_next() {
  const std::vector<PendingMessage> choices = pending();
  if (choices.empty()) return false;
  const int pick = chooser_ ? chooser_(choices) : 0;
  if (pick < 0 || static_cast<size_t>(pick) >= choices.size()) return false;
  deliver(channels_.find({choices[static_cast<size_t>(pick)].to, choices[static_cast<size_t>(pick)].from}));
  return true;
}

void Network::deliver_all() {
  for (auto it = channels_.begin(); it != channels_.end(); ++it)
    while (!it->second.queue.empty()) deliver(it);
}

}  // namespace tagflow::actors
