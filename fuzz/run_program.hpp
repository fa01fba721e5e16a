// How the `run` fuzzer turns bytes into a step to run: a small graph with
// dynamic control flow, its feeds and fetches, and the session it runs in.
//
//   byte 0   bit 7: the rest is a GraphDef (text or binary) rather than a
//            program; bits 0-1: devices - 1; bits 2 and 4 both set: run on
//            CAF's threaded scheduler (2 workers) instead of the
//            deterministic one (a quarter of the inputs: a threaded session
//            costs ~10 times a deterministic one to start and stop); bit 3:
//            strict Merges (a second live input is an error)
//   byte 1   placement seed (random placement over the devices) and the
//            value fed to the program's Placeholder `x`
//   rest     a program for GraphBuilder (run_program.cpp): a stack machine
//            over int32 and bool tensors whose instructions push constants,
//            the fed placeholder, arithmetic, comparisons, raw Switch and
//            Merge, control dependencies, and nested cond / while_loop /
//            case_ whose branches and bodies are sub-programs; the fetches
//            are the top of the stack. Every byte string decodes to some
//            graph; the builder's own errors end the decoding early.
//
// A GraphDef is run only if its every op keeps tensors within the size of
// its inputs and its constants are small (run_program.cpp): until a session
// bounds a step's memory, a graph that asks for gigabytes (Fill, Tile, a
// loop that concatenates) would stop the fuzzer as an out-of-memory crash
// without showing a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "graph/graph.hpp"

namespace tagflow::fuzz {

struct RunCase {
  graph::Graph graph;
  actors::Feeds feeds;
  std::vector<std::string> fetches;
  int devices = 1;
  uint64_t placement_seed = 0;
  bool threaded = false;
  bool strict_merge = false;
  // False if a Merge may get two live inputs and Merges are not strict:
  // which input wins is then up to the schedule, and results may differ
  // between runs. (A strict Merge fails the step whichever comes first.)
  bool deterministic_result = true;
};

// The case the bytes describe, or an error if they describe nothing to run
// (the builder failed, the GraphDef does not import or is not admitted).
ops::Expected<RunCase> decode_run_case(const uint8_t* data, size_t size);

}  // namespace tagflow::fuzz
