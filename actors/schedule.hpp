// Schedules: which message a deterministic session delivers next. Under a
// Network (actors/network.hpp) every message sent to one of tagflow's
// actors is held; when no actor has anything left to do, the session asks
// the network's Chooser which held message goes next — the head of one
// channel (one sender to one receiver; CAF keeps each channel in order).
// The explorer (actors/explorer.hpp) and replay choose through this seam.
// CAF-free.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "trace/event.hpp"

namespace tagflow::actors {

// A message a network holds: the head of its channel.
struct PendingMessage {
  trace::ActorRef from, to;
  trace::MessageKind kind = trace::MessageKind::none;
  uint64_t seq = 0;  // its number on its channel since the network was made
};

// Returns the index of the pending message to deliver next (they come
// oldest first: 0 is what a FIFO network would deliver), or -1 to stop the
// step (it then fails with "stopped by the schedule").
using Chooser = std::function<int(const std::vector<PendingMessage>& pending)>;

}  // namespace tagflow::actors
