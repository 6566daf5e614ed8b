// What this process itself used (the simulator and, in `vtime run`, the broker and the clock's
// controller): its peak resident size and its CPU time, for the one-line summaries of `vtime run`
// and `vtime sim --stats`.
#pragma once

#include <sys/resource.h>

#include <cstdio>
#include <cstring>

namespace vtime::cli {

// VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec, so a vtime started by
// a big parent (a test harness holding a workload) would report the parent's size at fork.
inline double peak_rss_mb() {
  if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
    if (kb >= 0) return static_cast<double>(kb) / 1024.0;
  }
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// User plus system CPU time of every thread of this process, not of its children: what vtime's
// own work cost, apart from the wrapped tree's (bench/slurm_speed.sh sets it against the CPU time
// of the whole run to find the tree's floor).
inline double own_cpu_s() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace vtime::cli
