// Shrinking a program that disagrees: edits that keep it a valid program —
// a statement left out, a loop variable, TensorArray, stack or variable
// dropped, an operand or a constant made 1 or 0, a control input or a fetch
// dropped, a predicate made plain — are tried one at a time, and each that
// still disagrees under some configuration is kept, until none does (or
// the budget is spent). Then the configuration is made plain too: fewer
// devices, the deterministic scheduler, the shortcuts on.
#pragma once

#include <functional>
#include <vector>

#include "difftest.hpp"
#include "program.hpp"

namespace tagflow::difftest {

struct ShrinkResult {
  Program program;
  RunConfig config;  // a configuration under which it disagrees
  Outcome reference, got;
  int tried = 0;     // candidate programs run
  int kept = 0;      // of them, kept
};

struct ShrinkOptions {
  int max_candidates = 400;
  Limits limits;
};

ShrinkResult shrink(const Program& p, Form form, const RunConfig& failing, const ShrinkOptions& options = {});

// The candidate edits of one program (each a valid program), most
// reducing first.
std::vector<Program> shrink_candidates(const Program& p);

}  // namespace tagflow::difftest
