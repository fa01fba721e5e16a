#include "ops/cpu/isa.hpp"

#include <cstdlib>
#include <mutex>
#include <optional>

namespace tagflow::ops::cpu {

namespace {

struct Choice {
  std::mutex mu;
  std::optional<Isa> fixed;
  Status status;
};

Choice& choice() {
  static Choice c;
  return c;
}

// Called with choice().mu held.
Isa fix_locked(Choice& c, std::optional<Isa> requested) {
  if (c.fixed) return *c.fixed;
  // TAGFLOW_ISA first: it is how a test forces a level on everything.
  Isa isa = requested ? *requested : machine_isa();
  if (const char* env = std::getenv("TAGFLOW_ISA"); env && *env) {
    Expected<Isa> asked = parse_isa(env);
    if (!asked.ok())
      c.status = asked.status().with_prefix("TAGFLOW_ISA: ");
    else if (*asked > machine_isa())
      c.status = Status(Error::invalid_argument, std::string("TAGFLOW_ISA=") + env +
                                                     ": this machine supports up to " +
                                                     to_string(machine_isa()));
    else
      isa = *asked;
  }
  c.fixed = isa;
  return isa;
}

}  // namespace

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::baseline: return "baseline";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

Expected<Isa> parse_isa(std::string_view name) {
  if (name == "baseline" || name == "sse2") return Isa::baseline;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512") return Isa::avx512;
  return Status(Error::invalid_argument,
                "unknown instruction-set level '" + std::string(name) +
                    "' (the levels: baseline, avx2, avx512)");
}

Isa machine_isa() {
  // libgcc's probe checks the OS saves the wider registers (XCR0) too.
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("fma"))
      return Isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
    return Isa::baseline;
  }();
  return isa;
}

Isa active_isa() {
  // The fast path after the first call: one acquire load.
  static const Isa isa = [] {
    Choice& c = choice();
    std::lock_guard<std::mutex> lock(c.mu);
    return fix_locked(c, std::nullopt);
  }();
  return isa;
}

Status isa_status() {
  active_isa();
  Choice& c = choice();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.status;
}

Status request_isa(Isa isa, const std::string& source) {
  if (isa > machine_isa())
    return Status(Error::invalid_argument, source + " = \"" + to_string(isa) +
                                               "\": this machine supports up to " +
                                               to_string(machine_isa()));
  Choice& c = choice();
  std::lock_guard<std::mutex> lock(c.mu);
  const bool first = !c.fixed;
  Isa fixed = fix_locked(c, isa);
  if (fixed != isa)
    return Status(Error::failed_precondition,
                  source + " = \"" + to_string(isa) + "\": kernels already run at " + to_string(fixed) +
                      (first ? " (TAGFLOW_ISA)" : " in this process (the level is chosen once, at start-up)"));
  return ok_status();
}

std::string isa_summary() {
  return std::string(to_string(active_isa())) + " (machine: " + to_string(machine_isa()) + ")";
}

}  // namespace tagflow::ops::cpu
