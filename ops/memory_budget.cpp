#include "ops/memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <limits>

namespace tagflow::ops {

namespace {

thread_local MemoryBudget* current_budget = nullptr;

// A control group's memory limit (v2, then v1); "max" or an absurd value
// (v1 writes a page-rounded INT64_MAX) means none.
int64_t cgroup_memory_limit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    long long value = 0;
    if (in >> value && value > 0 && value < (int64_t{1} << 60)) return value;
  }
  return 0;
}

}  // namespace

void MemoryBudget::charge(int64_t bytes) {
  int64_t before = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - before) throw MemoryLimitExceeded(bytes, before, limit_);
  } while (!used_.compare_exchange_weak(before, before + bytes, std::memory_order_relaxed));
}

MemoryLimitExceeded::MemoryLimitExceeded(int64_t requested, int64_t used, int64_t limit)
    : message_(fmt::format("a tensor of {} with {} already held by the step's tensors is over "
                           "the step's memory limit of {} (--memory-limit, [tagflow] memory-limit)",
                           format_bytes(requested), format_bytes(used), format_bytes(limit))) {}

MemoryBudgetScope::MemoryBudgetScope(MemoryBudget* budget) : previous_(current_budget) {
  current_budget = budget;
}

MemoryBudgetScope::~MemoryBudgetScope() { current_budget = previous_; }

MemoryBudget* current_memory_budget() { return current_budget; }

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  int64_t physical = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
  const int64_t group = cgroup_memory_limit();
  if (group > 0 && (physical == 0 || group < physical)) physical = group;
  return physical;
}

int64_t default_memory_limit() {
  static const int64_t limit = [] {
    const int64_t physical = physical_memory_bytes();
    return physical > 0 ? physical / 4 : int64_t{1} << 30;
  }();
  return limit;
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

Expected<int64_t> parse_byte_size(const std::string& text) {
  auto bad = [&] {
    return Status(Error::invalid_argument,
                  fmt::format("'{}' is not a size (bytes, or a number with K, M, G or T: 512M, 4G)",
                              abbreviate(text)));
  };
  size_t pos = 0;
  uint64_t number = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    if (number > (std::numeric_limits<uint64_t>::max() - 9) / 10) return bad();
    number = number * 10 + static_cast<uint64_t>(text[pos++] - '0');
  }
  if (pos == 0) return bad();
  std::string unit = text.substr(pos);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  int shift = 0;
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit.front()))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'B': shift = 0; break;
      default: return bad();
    }
    std::string rest = unit.substr(shift == 0 ? 0 : 1);
    if (rest != "" && rest != "B" && rest != "iB" && rest != "b") return bad();
  }
  if (number > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) >> shift)) return bad();
  return static_cast<int64_t>(number << shift);
}

}  // namespace tagflow::ops
