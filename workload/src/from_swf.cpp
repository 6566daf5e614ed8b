#include <vtime/workload/from_swf.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_set>

namespace vtime::workload {
namespace {

std::string number_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return buf;
}

// Whole seconds stay integers in the JSON ("subtime": 170, not 170.0); others as nlohmann
// prints them (shortest text that reads back the same).
std::string json_number(double x) {
  if (x == std::floor(x) && std::fabs(x) < 9e15) return std::to_string(static_cast<int64_t>(x));
  return nlohmann::json(std::stod(number_text(x))).dump();
}

double start_of(const SwfJob& j) { return j.submit + std::max(0.0, j.wait); }

}  // namespace

double UtilisationProfile::integral(double t) const {
  if (times.empty() || t <= times.front()) return 0;
  auto it = std::upper_bound(times.begin(), times.end(), t);
  size_t i = static_cast<size_t>(it - times.begin()) - 1;
  return area[i] + (i < busy.size() ? busy[i] : 0) * (t - times[i]);
}

UtilisationProfile utilisation_profile(const std::vector<SwfJob>& jobs) {
  std::map<double, double> delta;
  for (const auto& j : jobs) {
    if (j.run <= 0 || j.procs() <= 0) continue;
    double s = start_of(j);
    delta[s] += static_cast<double>(j.procs());
    delta[s + j.run] -= static_cast<double>(j.procs());
  }
  UtilisationProfile p;
  double level = 0, acc = 0;
  for (const auto& [t, d] : delta) {
    if (!p.times.empty()) acc += level * (t - p.times.back());
    p.times.push_back(t);
    p.area.push_back(acc);
    level += d;
    p.busy.push_back(level);
  }
  return p;
}

Result<double> parse_duration(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v)) return Error{"'" + text + "' is not a duration (e.g. 3600, 60min, 10h, 2d)"};
  std::string unit = end;
  double scale = unit.empty() || unit == "s" ? 1 : unit == "min" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
  if (scale < 0) return Error{"'" + text + "': unknown unit '" + unit + "' (s, min, h, d)"};
  // Every use (window bounds and length, run-time bounds) is a length of time (found by fuzz_values).
  if (v < 0) return Error{"'" + text + "' is negative: a duration is 0 or more"};
  if (!std::isfinite(v * scale)) return Error{"'" + text + "' is too large"};
  return v * scale;
}

Result<std::set<int>> parse_statuses(const std::string& text) {
  static const std::map<std::string, std::vector<int>> kNames = {
      {"completed", {1}}, {"failed", {0}}, {"cancelled", {5}}, {"partial", {2, 3, 4}}, {"unknown", {-1}}};
  std::set<int> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (auto it = kNames.find(item); it != kNames.end()) {
      out.insert(it->second.begin(), it->second.end());
    } else {
      char* end = nullptr;
      long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end || v < -1 || v > 5)
        return Error{"unknown status '" + item + "' (completed, failed, cancelled, partial, unknown, or -1..5)"};
      out.insert(static_cast<int>(v));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<Conversion> convert(const SwfTrace& trace, const ConvertOptions& o) {
  if ((o.window_start || o.window_end) && o.window_length)
    return Error{"give either --window START:END or --window-length with --utilisation, not both"};
  if (o.window_length.has_value() != o.utilisation.has_value())
    return Error{"--window-length and --utilisation go together"};
  if (o.window_start && o.window_end && !(*o.window_start < *o.window_end))
    return Error{"--window: START must be before END"};
  if (o.window_length && !(*o.window_length > 0)) return Error{"--window-length must be positive"};
  if (o.utilisation && !(*o.utilisation > 0 && *o.utilisation <= 1)) return Error{"--utilisation must be in (0, 1]"};
  if (o.max_duration && !(*o.max_duration > 0)) return Error{"--max-duration must be positive"};
  if (o.procs_per_host && *o.procs_per_host < 1) return Error{"--procs-per-host must be at least 1"};
  if (o.hosts && *o.hosts < 1) return Error{"--hosts must be at least 1"};
  if (o.walltime == Walltime::kFactor && !(o.walltime_factor > 0)) return Error{"--walltime factor:F needs F > 0"};

  Conversion c;
  size_t by_status = 0, no_size = 0, no_run = 0, outside = 0, too_big = 0;
  std::vector<SwfJob> kept;
  kept.reserve(trace.jobs.size());
  for (const SwfJob& j : trace.jobs) {
    if (!o.statuses.count(j.status) || (j.status == 5 && j.run <= 0)) {
      ++by_status;
      continue;
    }
    if (j.run < 0 || j.submit < 0) {
      ++no_run;
      continue;
    }
    if (j.procs() < 1) {
      ++no_size;
      continue;
    }
    kept.push_back(j);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const SwfJob& a, const SwfJob& b) { return a.submit < b.submit; });

  double from = o.window_start.value_or(-1e300), to = o.window_end.value_or(1e300);
  if (o.window_length) {
    int64_t capacity = o.hosts && o.procs_per_host ? *o.hosts * *o.procs_per_host : trace.header.max_procs.value_or(0);
    if (capacity <= 0)
      return Error{"--utilisation needs the machine's size: the trace has no MaxProcs header; give --hosts and "
                   "--procs-per-host"};
    if (kept.empty()) return Error{"no job left to choose a window from"};
    const double length = *o.window_length;
    UtilisationProfile prof = utilisation_profile(kept);
    // Candidate windows start at a submission and end before the last one (inside the trace).
    const double last = kept.back().submit;
    std::optional<ChosenWindow> best;
    double prev = -1;
    for (const SwfJob& j : kept) {
      if (j.submit == prev) continue;
      prev = j.submit;
      if (j.submit + length > last) break;
      double u = prof.mean(j.submit, length, capacity);
      if (!best || std::fabs(u - *o.utilisation) < std::fabs(best->utilisation - *o.utilisation))
        best = ChosenWindow{j.submit, j.submit + length, u, capacity};
    }
    if (!best)
      return Error{"the trace's submissions span " + number_text(last - kept.front().submit) +
                   " s, less than the window length " + number_text(length) + " s"};
    c.window = best;
    from = best->start;
    to = best->end;
  }

  // Written by hand in nlohmann's dump(1) layout: a million jobs as JSON objects would take most
  // of the conversion's time.
  std::map<double, std::string> profiles;  // delay -> name
  std::unordered_set<int64_t> ids;
  std::string jobs;
  jobs.reserve(kept.size() * 96);
  bool first = true;
  int64_t max_res = 0;
  for (const SwfJob& j : kept) {
    if (j.submit < from || j.submit >= to) {
      ++outside;
      continue;
    }
    double run = j.run;
    if (o.max_duration && run > *o.max_duration) {
      run = *o.max_duration;
      ++c.capped_duration;
    }
    int64_t res = j.procs();
    if (o.procs_per_host) res = res / *o.procs_per_host + (res % *o.procs_per_host != 0);  // no overflow
    if (o.hosts && res > *o.hosts) {
      if (o.too_big == TooBig::kDrop) {
        ++too_big;
        continue;
      }
      if (o.too_big == TooBig::kCap) {
        res = *o.hosts;
        ++c.capped_size;
      }
    }
    if (!ids.insert(j.number).second)
      return Error{"job number " + std::to_string(j.number) + " appears twice in the trace"};
    if (first) c.shift = o.shift ? j.submit : 0;
    std::optional<double> walltime;
    switch (o.walltime) {
      case Walltime::kRequested:
        if (j.req_time > 0) walltime = j.req_time;
        break;
      case Walltime::kRuntime: walltime = run; break;
      case Walltime::kFactor: walltime = run * o.walltime_factor; break;
      case Walltime::kNone: break;
    }
    // Batsim takes no zero walltime (-1 or > 0): a job that ran 0 s gets none, and so does one
    // whose walltime rounds to 0 ns on the simulator's time line (found by fuzz_swf).
    if (walltime && !(*walltime >= 5e-10)) walltime.reset();
    // The workload must read back into the simulator: times within its int64 nanoseconds
    // (about 292 years), sizes within its limit (found by fuzz_swf).
    constexpr double kMaxSeconds = 9.2e9;
    for (auto [what, v] : {std::pair<const char*, double>{"submit time", j.submit - c.shift}, {"run time", run},
                           {"walltime", walltime.value_or(0)}}) {
      if (!(std::fabs(v) < kMaxSeconds))
        return Error{"job " + std::to_string(j.number) + ": its " + what + " (" + json_number(v) +
                     " s) is beyond the simulator's time range (about 292 years)"};
    }
    if (res > 1'000'000'000)
      return Error{"job " + std::to_string(j.number) + " asks for " + std::to_string(res) +
                   " hosts, more than the simulator takes (1,000,000,000)"};
    auto& name = profiles[run];
    if (name.empty()) name = "delay" + number_text(run);
    jobs += first ? "\n  {\n" : ",\n  {\n";
    first = false;
    jobs += "   \"id\": \"" + std::to_string(j.number) + "\",\n   \"subtime\": " + json_number(j.submit - c.shift) + ",\n";
    if (walltime) jobs += "   \"walltime\": " + json_number(*walltime) + ",\n";
    jobs += "   \"res\": " + std::to_string(res) + ",\n   \"profile\": \"" + name + "\"\n  }";
    ++c.jobs;
    max_res = std::max(max_res, res);
  }
  if (o.hosts) {
    c.nb_res = *o.hosts;
  } else if (trace.header.max_procs && *trace.header.max_procs > 0) {
    int64_t ppn = o.procs_per_host.value_or(1);
    int64_t procs = *trace.header.max_procs;
    c.nb_res = procs / ppn + (procs % ppn != 0);  // rounded up without overflow (found by fuzz_swf)
  } else {
    c.nb_res = std::max<int64_t>(1, max_res);
  }
  c.json = "{\n \"nb_res\": " + std::to_string(c.nb_res) + ",\n \"jobs\": [" + jobs + (c.jobs ? "\n ],\n" : "],\n");
  c.json += " \"profiles\": {";
  bool first_profile = true;
  for (const auto& [delay, name] : profiles) {
    c.json += std::string(first_profile ? "\n" : ",\n") + "  \"" + name + "\": {\n   \"type\": \"delay\",\n   \"delay\": " +
              json_number(delay) + "\n  }";
    first_profile = false;
  }
  c.json += profiles.empty() ? "}\n}\n" : "\n }\n}\n";
  for (auto [reason, n] : {std::pair<const char*, size_t>{"status not kept", by_status}, {"no run time", no_run},
                           {"no size", no_size}, {"outside the window", outside}, {"too big", too_big}})
    if (n) c.dropped.emplace_back(reason, n);
  return c;
}

}  // namespace vtime::workload
