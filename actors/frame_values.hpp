// The values frames, iterations and partitions of one step exchange, as
// plain structs: actors/messages.hpp makes them CAF messages, and the
// frame's book-keeping (actors/frame_book.hpp) reads them without CAF.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/iteration_state.hpp"
#include "actors/tag.hpp"
#include "actors/transfer.hpp"

namespace tagflow::actors {

// Values crossing between actors of one partition: (item, tensor, dead).
struct ValueBatch {
  std::vector<OutValue> values;
};

// What an iteration tells its frame after running.
struct IterationReport {
  int64_t iteration = 0;
  std::vector<OutValue> next_iterations;
  std::vector<OutValue> exits;
  std::vector<OutValue> fetches;
  bool quiescent = false;   // nothing ready, no child frame outstanding
  int64_t received = 0;     // messages from the frame processed so far
};

// Values of `_Send`s of one (frame instance, iteration) for one peer
// partition.
struct TransferBatch {
  uint64_t step_id = 0;
  FrameInstanceId instance = kRootFrameInstance;
  int64_t iteration = 0;
  int32_t from_partition = 0;
  std::vector<TransferValue> values;
};

// Transfers of several iterations of one frame instance for one peer, sent
// together by a frame that runs its iterations (docs/protocol.md, "Frames
// that run their iterations"); taken as if each batch came alone.
struct TransferBatches {
  std::vector<TransferBatch> batches;
};

}  // namespace tagflow::actors
