// Order statistics of benchmark samples and the one-line result format bench/run_all.sh collects.
//
// Example:
//     bench::Stats s = bench::stats_of(latencies_us);
//     bool ok = bench::report_result("wake_latency_median", s.median, "us", "<=", 20);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace bench {

// Order statistics of a sample (sorted copy; p in [0, 1], nearest rank).
struct Stats {
  double min = 0, median = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  size_t n = 0;
};

inline Stats stats_of(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
  s.min = v.front();
  s.median = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

// One machine-readable line per target, collected by bench/run_all.sh:
//   RESULT <name> <measured> <unit> target <op> <bound> PASS|FAIL
// Returns whether the target was met.
inline bool report_result(const char* name, double measured, const char* unit, const char* op, double bound) {
  bool ok = (op[0] == '<') ? measured <= bound : measured >= bound;
  printf("RESULT %-28s %10.3f %-3s target %s %g %s\n", name, measured, unit, op, bound, ok ? "PASS" : "FAIL");
  fflush(stdout);
  return ok;
}

}  // namespace bench
