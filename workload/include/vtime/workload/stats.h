// What a workload holds: jobs, span, the distributions of sizes and durations, and the
// utilisation it offers a platform. Reads Batsim JSON workloads and SWF traces alike.
//
// Example:
//     std::vector<JobShape> jobs = ...;             // from a workload or a trace
//     WorkloadStats s = describe_jobs(jobs);
//     double u = s.offered_utilisation(16);        // work / (16 hosts x submission span)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vtime::workload {

struct JobShape {
  double submit = 0;
  int64_t size = 1;     // hosts (Batsim) or processors (SWF)
  double duration = 0;  // seconds
};

struct Distribution {
  double min = 0, p25 = 0, median = 0, p75 = 0, p90 = 0, max = 0, mean = 0;
};

struct WorkloadStats {
  size_t jobs = 0;
  double first_submit = 0, last_submit = 0;
  double last_end = 0;  // latest submit + duration: a lower bound of any schedule's makespan
  Distribution size, duration, interarrival;
  double work = 0;      // sum of size x duration (resource-seconds)
  // work / (resources x (last_end - first_submit)); 0 when the span is empty.
  double offered_utilisation(int64_t resources) const;
};

WorkloadStats describe_jobs(std::vector<JobShape> jobs);

// The report `vtime workload stats` prints (text, or JSON with `json`).
std::string format_stats(const WorkloadStats& s, const std::string& what, int64_t resources, const char* size_unit,
                         bool json);

}  // namespace vtime::workload
