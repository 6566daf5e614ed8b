#include <vtime/workload/stats.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vtime::workload {
namespace {

Distribution distribution(std::vector<double> xs) {
  Distribution d;
  if (xs.empty()) return d;
  std::sort(xs.begin(), xs.end());
  // Nearest rank: a value that occurs, so sizes stay whole numbers.
  auto q = [&](double p) { return xs[std::min(xs.size() - 1, static_cast<size_t>(std::ceil(p * static_cast<double>(xs.size()))) - (p > 0 ? 1 : 0))]; };
  d.min = xs.front();
  d.p25 = q(0.25);
  d.median = q(0.5);
  d.p75 = q(0.75);
  d.p90 = q(0.9);
  d.max = xs.back();
  double sum = 0;
  for (double x : xs) sum += x;
  d.mean = sum / static_cast<double>(xs.size());
  return d;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

}  // namespace

double WorkloadStats::offered_utilisation(int64_t resources) const {
  double span = last_end - first_submit;
  if (resources <= 0 || span <= 0) return 0;
  return work / (static_cast<double>(resources) * span);
}

WorkloadStats describe_jobs(std::vector<JobShape> jobs) {
  WorkloadStats s;
  s.jobs = jobs.size();
  if (jobs.empty()) return s;
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobShape& a, const JobShape& b) { return a.submit < b.submit; });
  std::vector<double> sizes, durations, gaps;
  s.first_submit = jobs.front().submit;
  s.last_submit = jobs.back().submit;
  s.last_end = s.first_submit;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobShape& j = jobs[i];
    sizes.push_back(static_cast<double>(j.size));
    durations.push_back(j.duration);
    if (i) gaps.push_back(j.submit - jobs[i - 1].submit);
    s.work += static_cast<double>(j.size) * j.duration;
    s.last_end = std::max(s.last_end, j.submit + j.duration);
  }
  s.size = distribution(sizes);
  s.duration = distribution(durations);
  s.interarrival = distribution(gaps);
  return s;
}

std::string format_stats(const WorkloadStats& s, const std::string& what, int64_t resources, const char* size_unit,
                         bool json) {
  auto dist_json = [](const Distribution& d) {
    return nlohmann::ordered_json{{"min", d.min}, {"p25", d.p25}, {"median", d.median}, {"p75", d.p75},
                                  {"p90", d.p90}, {"max", d.max}, {"mean", d.mean}};
  };
  if (json) {
    nlohmann::ordered_json j;
    j["input"] = what;
    j["jobs"] = s.jobs;
    j["first_submit"] = s.first_submit;
    j["last_submit"] = s.last_submit;
    j["last_end"] = s.last_end;
    j["size_unit"] = size_unit;
    j["size"] = dist_json(s.size);
    j["duration"] = dist_json(s.duration);
    j["interarrival"] = dist_json(s.interarrival);
    j["work"] = s.work;
    j["resources"] = resources;
    j["offered_utilisation"] = s.offered_utilisation(resources);
    return j.dump(1) + "\n";
  }
  auto line = [](const char* name, const Distribution& d) {
    return std::string(name) + "min " + num(d.min) + ", p25 " + num(d.p25) + ", median " + num(d.median) + ", p75 " +
           num(d.p75) + ", p90 " + num(d.p90) + ", max " + num(d.max) + ", mean " + num(d.mean) + "\n";
  };
  std::string out = what + ": " + std::to_string(s.jobs) + " jobs\n";
  if (!s.jobs) return out;
  out += "submissions:   " + num(s.first_submit) + " s to " + num(s.last_submit) + " s (span " +
         num(s.last_submit - s.first_submit) + " s); last possible end " + num(s.last_end) + " s\n";
  out += line((std::string("size (") + size_unit + "): ").c_str(), s.size);
  out += line("duration (s):  ", s.duration);
  out += line("interarrival (s): ", s.interarrival);
  out += "work:          " + num(s.work) + " " + size_unit + "-seconds\n";
  if (resources > 0)
    out += "offered utilisation on " + std::to_string(resources) + " " + size_unit + ": " +
           num(s.offered_utilisation(resources)) + " (work / (" + size_unit + " x (last end - first submission)))\n";
  return out;
}

}  // namespace vtime::workload
