// The instruction-set level tagflow's kernels run at: the widest vector
// unit of the machine the process runs on, chosen once at start-up, or a
// lower one forced by TAGFLOW_ISA / `[tagflow] isa` (tests, reproducing a
// smaller machine's rounding). One binary serves every x86-64 machine:
// tagflow's own vector kernels are compiled once per level (ops/cpu/
// vector_kernels.hpp) and oneDNN generates its code for the level at run
// time (its maximum ISA is set to match before its first primitive).
//
// Levels, lowest first:
//   baseline  x86-64's SSE2 (oneDNN: SSE4.1, its lowest, where the CPU has it)
//   avx2      AVX2 + FMA
//   avx512    AVX-512 F, BW, DQ and VL (oneDNN's avx512_core)
//
// Thread-safe: the level is fixed by the first call that reads it.
#pragma once

#include <string>
#include <string_view>

#include "ops/status.hpp"

namespace tagflow::ops::cpu {

enum class Isa { baseline = 0, avx2 = 1, avx512 = 2 };
inline constexpr Isa kAllIsas[] = {Isa::baseline, Isa::avx2, Isa::avx512};

const char* to_string(Isa isa);
// "baseline", "sse2" (= baseline), "avx2", "avx512"; the error names the levels.
Expected<Isa> parse_isa(std::string_view name);

// The widest level this CPU and its operating system support.
Isa machine_isa();

// The level kernels run at. The first call fixes it: TAGFLOW_ISA's, else
// the level asked for with request_isa(), else machine_isa(). A
// TAGFLOW_ISA that names no level or one the machine lacks is reported by
// isa_status() and the machine's level is used instead.
Isa active_isa();
Status isa_status();

// Asks for `isa` (from a configuration key; `source` names it in errors).
// Fails if the machine lacks it, if TAGFLOW_ISA names another level, or if
// the level is already fixed to another one: it is chosen once per process.
Status request_isa(Isa isa, const std::string& source);

// "avx2 (machine: avx2)": what `tagflow --version` and trace headers show.
std::string isa_summary();

}  // namespace tagflow::ops::cpu
