#include <vtime/sweep/run_outputs.h>
#include <vtime/sweep/csv.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <unordered_map>

namespace vtime::sweep {
namespace {

constexpr double kSameInstant = 1e-6;  // the files print microseconds

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(out);
}

// Batsim's interval sets: "0-3 7 9-10".
bool parse_resources(const std::string& s, std::vector<int>& out) {
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    char* end = nullptr;
    long a = std::strtol(s.c_str() + i, &end, 10);
    if (end == s.c_str() + i || a < 0) return false;
    long b = a;
    i = static_cast<size_t>(end - s.c_str());
    if (i < s.size() && s[i] == '-') {
      ++i;
      b = std::strtol(s.c_str() + i, &end, 10);
      if (end == s.c_str() + i || b < a || b - a > 10000000) return false;
      i = static_cast<size_t>(end - s.c_str());
    }
    for (long r = a; r <= b; ++r) out.push_back(static_cast<int>(r));
  }
  return true;
}

std::string key(const JobOutcome& j) { return j.id; }

}  // namespace

Result<RunOutputs> read_outputs(const std::string& prefix) {
  RunOutputs out;
  const std::string jobs_path = prefix + "_jobs.csv";
  auto rows = read_csv_file(jobs_path);
  if (!rows) return Error{rows.error()};
  if (rows->empty()) return Error{jobs_path + ": empty (no header)"};
  const Row& header = rows->front();
  auto col = [&](const char* name) -> long {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : it - header.begin();
  };
  long c_id = col("job_id"), c_wl = col("workload_name"), c_state = col("final_state"), c_start = col("starting_time"),
       c_finish = col("finish_time"), c_alloc = col("allocated_resources");
  if (c_id < 0 || c_state < 0 || c_start < 0 || c_finish < 0 || c_alloc < 0)
    return Error{jobs_path + ":1: not a Batsim _jobs.csv header (job_id, final_state, starting_time, finish_time, "
                 "allocated_resources)"};
  for (size_t n = 1; n < rows->size(); ++n) {
    const Row& r = (*rows)[n];
    if (r.size() != header.size())
      return Error{jobs_path + ": row " + std::to_string(n + 1) + " has " + std::to_string(r.size()) + " fields, the header " +
                   std::to_string(header.size())};
    JobOutcome j;
    j.id = (c_wl >= 0 ? r[static_cast<size_t>(c_wl)] + "!" : std::string()) + r[static_cast<size_t>(c_id)];
    j.final_state = r[static_cast<size_t>(c_state)];
    double start = 0, finish = 0;
    if (parse_double(r[static_cast<size_t>(c_start)], start) && parse_double(r[static_cast<size_t>(c_finish)], finish)) {
      j.start = start;
      j.finish = finish;
      if (!parse_resources(r[static_cast<size_t>(c_alloc)], j.resources))
        return Error{jobs_path + ": row " + std::to_string(n + 1) + ": bad allocated_resources '" +
                     r[static_cast<size_t>(c_alloc)] + "'"};
    }
    out.jobs.push_back(std::move(j));
  }
  auto sched = read_csv_file(prefix + "_schedule.csv");
  if (sched && sched->size() >= 2 && (*sched)[0].size() == (*sched)[1].size())
    for (size_t i = 0; i < (*sched)[0].size(); ++i) out.schedule[(*sched)[0][i]] = (*sched)[1][i];
  return out;
}

Deviation deviation(const RunOutputs& reference, const RunOutputs& run) {
  std::unordered_map<std::string, const JobOutcome*> by_id;
  for (const auto& j : run.jobs) by_id[key(j)] = &j;
  Deviation d;
  double sum = 0;
  size_t compared = 0;
  for (const auto& ref : reference.jobs) {
    auto it = by_id.find(key(ref));
    if (it == by_id.end()) {
      ++d.jobs_differ;
      continue;
    }
    const JobOutcome& j = *it->second;
    if (j.final_state != ref.final_state) ++d.jobs_differ;
    if (!j.start || !ref.start) continue;
    double delta = *j.start - *ref.start;
    if (delta > kSameInstant) ++d.jobs_late;
    if (delta < -kSameInstant) ++d.jobs_early;
    double a = std::fabs(delta) <= kSameInstant ? 0 : std::fabs(delta);
    sum += a;
    d.max_abs_start_delta = std::max(d.max_abs_start_delta, a);
    ++compared;
  }
  // Jobs the run has and the reference does not (a reference cut short).
  std::unordered_map<std::string, bool> in_ref;
  for (const auto& ref : reference.jobs) in_ref[key(ref)] = true;
  for (const auto& j : run.jobs)
    if (!in_ref.count(key(j))) ++d.jobs_differ;
  d.mean_abs_start_delta = compared ? sum / static_cast<double>(compared) : 0;
  return d;
}

int overlapping_allocations(const RunOutputs& run) {
  struct Use {
    double start, finish;
    size_t job;
  };
  std::unordered_map<int, std::vector<Use>> per_resource;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    const auto& j = run.jobs[i];
    if (!j.start || !j.finish) continue;
    for (int r : j.resources) per_resource[r].push_back({*j.start, *j.finish, i});
  }
  std::vector<bool> overlaps(run.jobs.size(), false);
  for (auto& [r, uses] : per_resource) {
    std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
      return a.start != b.start ? a.start < b.start : a.job < b.job;
    });
    double busy_until = -1e300;
    for (const Use& u : uses) {
      // A job starting exactly when the previous ends does not overlap it.
      if (u.start < busy_until - kSameInstant) overlaps[u.job] = true;
      busy_until = std::max(busy_until, u.finish);
    }
  }
  return static_cast<int>(std::count(overlaps.begin(), overlaps.end(), true));
}

}  // namespace vtime::sweep
