#include <vtime/sweep/report.h>
#include <vtime/sweep/csv.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace vtime::sweep {
namespace {

enum MetricIndex { kMakespan, kMeanWaiting, kMeanDelta, kMaxDelta, kLate, kDiffer, kOverlaps, kWall, kMetricCount };

std::optional<double> number_in(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end() || it->second.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (*end) return std::nullopt;
  return v;
}

std::string num(const std::optional<double>& v) { return v ? format_number(*v) : std::string(); }

// Means and spreads: ten digits, so a difference of two makespans prints 0.1, not 0.0999999999999.
std::string stat(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  std::string s = buf;
  return s == "-0" ? "0" : s;
}

std::string wall(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

// The parameter columns of a row: each value as given; empty where the row does not set it.
void add_values(Row& row, const Plan& plan, const Values& v) {
  for (size_t i = 0; i < plan.params.size(); ++i)
    row.push_back(v[i] == kUnused ? std::string() : plan.params[i].values.values[static_cast<size_t>(v[i])].text);
}

Row head(const Plan& plan) {
  Row h;
  for (const auto& p : plan.params) h.push_back(p.name);
  return h;
}

}  // namespace

bool write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(text.data(), static_cast<std::streamsize>(text.size()))) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

std::string status_of(const Outcome& o) {
  if (!o.fault.empty()) return o.fault;
  if (o.timed_out) return "timeout";
  if (o.signal) return "killed";
  switch (o.exit_code) {
    case 0: return "ok";
    case 3: return "bad_reply";
    case 4: return "crash";
    case 5: return "busy";
    case 6: return "blocked";
    case 7: return "sim_failed";
    case 8: return "sim_time_limit";
    default: return "error";
  }
}

bool executor_fault(const std::string& s) {
  return s == "cancelled" || s == "task_timeout" || s == "node_fail" || s == "preempted" || s == "task_failed" ||
         s == "lost";
}

FailureKind failure_kind(const std::string& s) {
  if (s == "ok") return FailureKind::kNone;
  if (s == "crash" || s == "killed") return FailureKind::kCrash;
  if (s == "busy" || s == "blocked" || s == "timeout" || s == "sim_time_limit") return FailureKind::kHang;
  if (s == "bad_reply") return FailureKind::kBadReply;
  return FailureKind::kOther;
}

bool write_result(const std::string& run_dir, const Outcome& o, std::string* error) {
  nlohmann::ordered_json j;
  j["status"] = status_of(o);
  j["exit_code"] = o.exit_code;
  j["wall_s"] = o.wall_s;
  if (!o.reason.empty()) j["reason"] = o.reason;
  if (!write_file_atomic(run_dir + "/result.json", j.dump() + "\n")) {
    *error = "cannot write " + run_dir + "/result.json";
    return false;
  }
  return true;
}

std::optional<RunResult> read_result(const std::string& run_dir) {
  std::ifstream in(run_dir + "/result.json");
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("status") || !j["status"].is_string()) return std::nullopt;
  RunResult r;
  r.status = j["status"].get<std::string>();
  r.exit_code = j.value("exit_code", -1);
  r.wall_s = j.value("wall_s", 0.0);
  r.reason = j.value("reason", std::string());
  return r;
}

const std::vector<MetricInfo>& metrics() {
  static const std::vector<MetricInfo> kMetrics = {
      {"makespan", "makespan (s)"},
      {"mean_waiting_time", "mean waiting time (s)"},
      {"mean_abs_start_delta", "mean |start - exact start| (s)"},
      {"max_abs_start_delta", "max |start - exact start| (s)"},
      {"jobs_late", "jobs started late"},
      {"jobs_differ", "jobs with another outcome"},
      {"overlaps", "overlapping allocations"},
      {"wall_s", "wall time (s)"},
  };
  return kMetrics;
}

Report build_report(const Plan& plan, const std::string& dir) {
  Report rep;
  rep.runs.resize(plan.runs.size());
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    RunMetrics& m = rep.runs[i];
    m.values.assign(kMetricCount, std::nullopt);
    m.result = read_result(dir + "/runs/" + plan.runs[i].id);
    if (!m.result) continue;
    m.values[kWall] = m.result->wall_s;
    auto out = read_outputs(run_prefix(dir, plan.runs[i]));
    if (!out) continue;
    m.outputs = std::move(*out);
    m.overlaps = overlapping_allocations(*m.outputs);
    m.values[kOverlaps] = m.overlaps;
    m.values[kMakespan] = number_in(m.outputs->schedule, "makespan");
    m.values[kMeanWaiting] = number_in(m.outputs->schedule, "mean_waiting_time");
  }
  // Deviations, once every reference is read.
  for (const Configuration& c : plan.configurations) {
    const RunMetrics& ref = rep.runs[c.reference_run];
    for (size_t r : c.runs) {
      RunMetrics& m = rep.runs[r];
      if (m.deviation || !m.outputs || !ref.outputs || !ref.result || ref.result->status != "ok") continue;
      m.deviation = deviation(*ref.outputs, *m.outputs);
      m.values[kMeanDelta] = m.deviation->mean_abs_start_delta;
      m.values[kMaxDelta] = m.deviation->max_abs_start_delta;
      m.values[kLate] = m.deviation->jobs_late;
      m.values[kDiffer] = m.deviation->jobs_differ;
    }
  }
  for (const Configuration& c : plan.configurations) {
    ConfigurationSummary s;
    std::vector<std::vector<double>> samples(kMetricCount);
    for (size_t r : c.runs) {
      const RunMetrics& m = rep.runs[r];
      if (!m.result) continue;
      ++s.finished;
      switch (failure_kind(m.result->status)) {
        case FailureKind::kNone:
          ++s.ok;
          for (size_t k = 0; k < kMetricCount; ++k)
            if (m.values[k]) samples[k].push_back(*m.values[k]);
          break;
        case FailureKind::kCrash: ++s.crashes; break;
        case FailureKind::kHang: ++s.hangs; break;
        case FailureKind::kBadReply: ++s.bad_replies; break;
        case FailureKind::kOther: ++s.other_failures; break;
      }
    }
    for (auto& x : samples) s.stats.push_back(describe(x));
    const RunMetrics& ref = rep.runs[c.reference_run];
    if (ref.result && ref.result->status == "ok") {
      s.reference_makespan = ref.values[kMakespan];
      s.reference_mean_waiting_time = ref.values[kMeanWaiting];
    }
    rep.configurations.push_back(std::move(s));
  }
  return rep;
}

bool write_runs_csv(const Plan& plan, const Report& rep, const std::string& path) {
  Row h = {"run", "workload"};
  for (auto& p : head(plan)) h.push_back(p);
  for (const char* c : {"sync", "reference", "repeat", "status", "exit_code", "makespan", "mean_waiting_time", "nb_jobs",
                        "nb_jobs_rejected", "nb_jobs_killed", "mean_abs_start_delta", "max_abs_start_delta", "jobs_late",
                        "jobs_early", "jobs_differ", "overlaps", "wall_s"})
    h.push_back(c);
  std::string text = csv_line(h);
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const PlannedRun& r = plan.runs[i];
    const RunMetrics& m = rep.runs[i];
    if (!m.result) continue;
    Row row = {r.id, plan.workloads[r.workload].name};
    add_values(row, plan, r.values);
    row.push_back(r.exact ? "exact" : "timeout");
    row.push_back(r.reference ? "1" : "0");
    row.push_back(std::to_string(r.repeat));
    row.push_back(m.result->status);
    row.push_back(std::to_string(m.result->exit_code));
    static const std::map<std::string, std::string> kNone;
    const auto& sched = m.outputs ? m.outputs->schedule : kNone;
    row.push_back(num(m.values[kMakespan]));
    row.push_back(num(m.values[kMeanWaiting]));
    row.push_back(num(number_in(sched, "nb_jobs")));
    row.push_back(num(number_in(sched, "nb_jobs_rejected")));
    row.push_back(num(number_in(sched, "nb_jobs_killed")));
    if (m.deviation) {
      row.push_back(format_number(m.deviation->mean_abs_start_delta));
      row.push_back(format_number(m.deviation->max_abs_start_delta));
      row.push_back(std::to_string(m.deviation->jobs_late));
      row.push_back(std::to_string(m.deviation->jobs_early));
      row.push_back(std::to_string(m.deviation->jobs_differ));
    } else {
      for (int k = 0; k < 5; ++k) row.push_back("");
    }
    row.push_back(m.outputs ? std::to_string(m.overlaps) : std::string());
    row.push_back(wall(m.result->wall_s));
    text += csv_line(row);
  }
  return write_file_atomic(path, text);
}

bool write_summary_csv(const Plan& plan, const Report& rep, const std::string& path) {
  Row h = {"workload"};
  for (auto& p : head(plan)) h.push_back(p);
  for (const char* c : {"sync", "reference", "runs", "finished", "ok", "crashes", "hangs", "bad_replies", "other_failures",
                        "crash_rate", "makespan_vs_exact", "mean_waiting_time_vs_exact"})
    h.push_back(c);
  for (const auto& m : metrics())
    for (const char* s : {"_mean", "_sd", "_ci95"}) h.push_back(std::string(m.name) + s);
  std::string text = csv_line(h);
  for (size_t i = 0; i < plan.configurations.size(); ++i) {
    const Configuration& c = plan.configurations[i];
    const ConfigurationSummary& s = rep.configurations[i];
    Row row = {plan.workloads[c.workload].name};
    add_values(row, plan, c.values);
    row.push_back(c.exact ? "exact" : "timeout");
    row.push_back(c.reference ? "1" : "0");
    for (size_t n : {c.runs.size(), s.finished, s.ok, s.crashes, s.hangs, s.bad_replies, s.other_failures})
      row.push_back(std::to_string(n));
    row.push_back(s.finished ? format_number(static_cast<double>(s.finished - s.ok) / static_cast<double>(s.finished))
                             : std::string());
    auto vs = [&](size_t k, const std::optional<double>& ref) {
      return s.stats[k].n && ref ? stat(s.stats[k].mean - *ref) : std::string();
    };
    row.push_back(vs(kMakespan, s.reference_makespan));
    row.push_back(vs(kMeanWaiting, s.reference_mean_waiting_time));
    for (size_t k = 0; k < kMetricCount; ++k) {
      const Stats& st = s.stats[k];
      if (st.n == 0) {
        row.insert(row.end(), {"", "", ""});
        continue;
      }
      row.push_back(k == kWall ? wall(st.mean) : stat(st.mean));
      row.push_back(st.n < 2 ? std::string() : k == kWall ? wall(st.sd) : stat(st.sd));
      row.push_back(st.n < 2 ? std::string() : k == kWall ? wall(st.ci95) : stat(st.ci95));
    }
    text += csv_line(row);
  }
  return write_file_atomic(path, text);
}

}  // namespace vtime::sweep
