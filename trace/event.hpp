// The typed event stream of tagflow (DESIGN.md §6): what happened in a step,
// as events with numeric fields — step, partition, frame instance,
// iteration, node, port, message kind, transfer key, dead, bytes, time —
// each made by the one helper of its kind below. Names (of partitions,
// nodes, frames, transfers) are not in the events: a partition describes
// itself once per step (trace/names.hpp) and readers look them up
// (trace/trace.hpp). Plain values; no CAF, no test framework.
#pragma once

#include <cstdint>
#include <string>

namespace tagflow::trace {

// The version of the event schema written by every sink (JSONL header,
// binary header); readers refuse other versions. Version 2: the header
// also says what the recording machine ran with (Header).
inline constexpr int kSchemaVersion = 2;

enum class Kind : uint8_t {
  step_started,         // a partition started a step; `key`: its name table
  step_done,            // a partition ended a step; `text`: the error, if any
  frame_created,        // a frame instance started (iteration 0); `node`: the frame's id
  frame_done,           // a frame instance ended
  iteration_started,
  iteration_done,
  node_ran,             // a node instance ran; `port`: the live output of a Switch
  value_dead,           // a node instance's outputs are dead; `port`: its first dead input
  merge_input_ignored,  // a later live input of a Merge; `port`: it, `src_port`: the first
  message_sent,         // a value leaves an actor
  message_received,     // a value reaches an actor
  message_taken,        // an actor took a message from its mailbox (replay, explorer)
  partition_up,         // the coordinator started watching a partition; `text`: its name
  partition_down,       // a watched partition went down; `text`: why
  // A functional op run as written (docs/tf2.md): `node` is the calling
  // node of the partition's graph; `port` the branch an If (0: else,
  // 1: then) or Case took, -1 for calls and loops; call_done's `text` the
  // error, if any, and `duration_ns` the call's time.
  call_started,
  call_done,
  // An iteration of a While or For run as written: `node` the loop node,
  // `key` the loop's own iteration number (its cond and its body).
  function_iteration_started,
  function_iteration_done,
  // The optimiser changed the step's graph before it ran (graph/optimize/,
  // docs/optimizer.md): `text` is "pass: action 'node' detail", e.g.
  // "constant_folding: folded 'c' 6". Recorded by the session (partition
  // -1) at the start of every step of that graph.
  node_rewritten,
  // What the session was asked to run (recorded by the session, partition
  // -1, before the step's other events): `text` is "feed NAME HEX" (the
  // fed value's wire form, ops/tensor_wire.hpp, in hex), "fetch NAME" or
  // "target NAME", one event each, in the order asked. Replay takes the
  // step from them when it is given none (actors/explorer.hpp).
  step_request,
};
inline constexpr int kNumKinds = 20;

// What a message carries.
enum class MessageKind : uint8_t {
  none,
  transfer,     // a _Send's value to the peer partition's _Recv
  enter,        // Enter values into a child frame
  deliver,      // values a frame hands an iteration (NextIteration, invariants)
  start,        // a frame starts an iteration
  report,       // an iteration reports to its frame
  exits,        // a frame's live Exit values to its parent iteration
  frame_done,   // a frame tells its parent it is done
  step_start,   // the coordinator starts a step on a partition
  step_result,  // a partition's end of a step
  abort,        // the coordinator ends a step on a partition
  route,        // a partition announces a frame instance to its peers
  compute,      // a kernel batch handed to a worker
  other,
};
inline constexpr int kNumMessageKinds = 14;

// What an actor is for.
enum class Role : uint8_t { none, caller, coordinator, partition, frame, iteration, worker };

// An actor as the protocol knows it, the same in every run of the same
// step: a partition by its index in the step, a frame by its frame
// instance, an iteration actor by its frame instance and its number among
// that frame's iteration actors (one actor runs several iterations).
struct ActorRef {
  Role role = Role::none;
  int32_t partition = -1;
  uint64_t instance = 0;
  int64_t index = 0;

  bool operator==(const ActorRef& o) const {
    return role == o.role && partition == o.partition && instance == o.instance && index == o.index;
  }
  bool operator!=(const ActorRef& o) const { return !(*this == o); }
  bool operator<(const ActorRef& o) const;
};

// Where an event happened: a step, a partition (its index in the step; -1:
// the session), a frame instance (0: the root) and an iteration.
struct At {
  uint64_t step = 0;
  int32_t partition = -1;
  uint64_t instance = 0;
  int64_t iteration = 0;
};

inline constexpr int64_t kNoTime = -1;

struct Event {
  Kind kind = Kind::step_started;
  MessageKind message = MessageKind::none;
  bool dead = false;
  int32_t partition = -1;
  int32_t node = -1;      // node id in the partition's graph (frame_created: the frame id)
  int32_t port = -1;      // see Kind
  int32_t src_node = -1;  // value_dead: the node whose dead output reached `port`
  int32_t src_port = -1;
  uint32_t thread = 0;    // the recording thread (timeline tracks)
  uint64_t step = 0;
  uint64_t instance = 0;
  int64_t iteration = 0;
  uint64_t key = 0;       // transfer key hash; step_started: the name table
  uint64_t parent_instance = 0;  // frame_created
  int64_t parent_iteration = 0;  // frame_created
  int64_t bytes = 0;
  int64_t time_ns = kNoTime;  // since the sink's epoch; kNoTime: the sink stamps it
  int64_t duration_ns = 0;
  ActorRef from, to;      // message_*: sender and receiver; message_taken: to took from
  uint64_t seq = 0;       // message_taken: the message's number on its channel from → to
  std::string text;       // errors and names (rare events only)

  At at() const { return At{step, partition, instance, iteration}; }
};

// --- one helper per kind ----------------------------------------------------

Event step_started(uint64_t step, int32_t partition, uint64_t names);
Event step_done(uint64_t step, int32_t partition, std::string error);
Event frame_created(const At& at, int32_t frame, uint64_t parent_instance, int64_t parent_iteration);
Event frame_done(const At& at);
Event iteration_started(const At& at);
Event iteration_done(const At& at);
// `live_port`: for a Switch, the output that got the value (-1: none).
Event node_ran(const At& at, int32_t node, int64_t start_ns, int64_t duration_ns, int32_t live_port = -1);
// `input`: the node's first dead input, the output `src_node`:`src_port`
// (-1: a value that came into the iteration dead — Enter, NextIteration,
// Exit or a transfer).
Event value_dead(const At& at, int32_t node, int32_t input, int32_t src_node, int32_t src_port);
Event merge_input_ignored(const At& at, int32_t node, int32_t input, int32_t first_live);
// A value sent or received: `node` is the node whose output it is (a
// transfer: the _Send on the sender's side, -1 on the receiver's), `key`
// the transfer key hash of a transfer.
Event message_sent(const At& at, MessageKind kind, const ActorRef& from, const ActorRef& to, int32_t node,
                   uint64_t key, bool dead, int64_t bytes);
Event message_received(const At& at, MessageKind kind, const ActorRef& from, const ActorRef& to, int32_t node,
                       uint64_t key, bool dead, int64_t bytes);
Event message_taken(uint64_t step, const ActorRef& by, const ActorRef& from, MessageKind kind, uint64_t seq);
Event partition_up(uint64_t step, int32_t partition, std::string name);
Event partition_down(uint64_t step, int32_t partition, std::string why);
Event call_started(const At& at, int32_t node, int32_t branch);
Event call_done(const At& at, int32_t node, int32_t branch, int64_t duration_ns, std::string error);
Event function_iteration_started(const At& at, int32_t node, int64_t iteration);
Event function_iteration_done(const At& at, int32_t node, int64_t iteration);
Event node_rewritten(uint64_t step, std::string what);
Event step_request(uint64_t step, std::string what);

const char* to_string(Kind k);
const char* to_string(MessageKind k);
const char* to_string(Role r);
// The enum of a name to_string gives; false if there is none.
bool parse_kind(const std::string& s, Kind* k);
bool parse_message_kind(const std::string& s, MessageKind* k);
bool parse_role(const std::string& s, Role* r);

// "iteration 2 of frame instance 0x3f… on partition 1", for messages.
std::string describe(const ActorRef& a);

}  // namespace tagflow::trace
