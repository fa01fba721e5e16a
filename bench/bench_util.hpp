// Shared by the benchmarks: timing, medians, peak RSS and one-line reports.
// Every figure is printed beside a baseline measured in the same run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace tagflow::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double time_once(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return seconds_since(t0);
}

// Median of `reps` timings of f(), in seconds; TAGFLOW_BENCH_REPS, when
// set, replaces `reps` (more repetitions for a profiler to sample).
template <class F>
double median_seconds(int reps, F&& f) {
  if (const char* env = std::getenv("TAGFLOW_BENCH_REPS")) reps = std::max(1, std::atoi(env));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(time_once(f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Medians of each function's timings, the functions taking turns `reps`
// times (after one untimed warm-up run each), so that the machine's drift
// slows them alike; TAGFLOW_BENCH_REPS, when set, replaces `reps`.
inline std::vector<double> interleaved_medians(int reps, const std::vector<std::function<void()>>& fs) {
  if (const char* env = std::getenv("TAGFLOW_BENCH_REPS")) reps = std::max(1, std::atoi(env));
  std::vector<std::vector<double>> t(fs.size());
  for (const auto& f : fs) f();
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < fs.size(); ++i) t[i].push_back(time_once(fs[i]));
  std::vector<double> medians;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

// Peak resident set size of this process so far, in MiB (VmHWM).
inline double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

inline double current_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Prevents the compiler from dropping a computed value.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

}  // namespace tagflow::bench
