// `vtime trace stats`: what a trace holds, counted: records, messages, decisions, jobs, timers,
// clock advances, processes, and how the run ended.
#include <vtime/recorder/tools.h>

#include <map>

#include "trace_input.h"

namespace vtime::recorder::tools {

using namespace vtime::protocol;

namespace {

const char* const kTypes[] = {"msg", "decision", "timer", "advance", "clock", "process", "error"};
const char* const kDirs[] = {"from_batsim", "to_scheduler", "from_scheduler", "to_batsim"};

struct TimerCounts {
  uint64_t arm = 0, fire = 0, cancel = 0;
};

struct Stats {
  std::map<std::string, uint64_t> types, dirs, decisions, reasons;
  std::optional<int64_t> first_t, last_t;
  uint64_t ticks = 0, unparsable = 0;
  uint64_t submitted = 0, started = 0, completed = 0, rejected = 0, killed = 0;
  std::map<std::string, TimerCounts> timers;  // by wait kind
  TimerCounts timer_total;
  uint64_t woken = 0;
  std::map<int64_t, std::string> processes;   // proc -> "running" or its exit status
  std::map<int64_t, uint64_t> clock_reads;    // proc -> last cumulative count
  uint64_t clock_sets = 0;                    // clock records with op "set"
  std::vector<std::string> errors;
};

void count_msg(Stats& s, const Json& rec) {
  std::string dir = str_or(rec, "dir", "?");
  s.dirs[dir]++;
  auto bytes = msg_bytes(rec);
  if (bytes && bytes->empty()) {
    ++s.ticks;
    return;
  }
  auto m = parse_msg(rec);
  if (!m) {
    ++s.unparsable;
    return;
  }
  // Jobs are counted on Batsim's side of the broker: what the simulator received and sent.
  for (const Event& e : m->events) {
    if (dir == "from_batsim") {
      if (std::holds_alternative<JobSubmitted>(e.payload)) ++s.submitted;
      else if (std::holds_alternative<JobCompleted>(e.payload)) ++s.completed;
      else if (auto* k = std::get_if<JobKilled>(&e.payload)) s.killed += k->job_ids.size();
    } else if (dir == "to_batsim") {
      if (std::holds_alternative<ExecuteJob>(e.payload)) ++s.started;
      else if (std::holds_alternative<RejectJob>(e.payload)) ++s.rejected;
    }
  }
}

void count(Stats& s, const Json& rec) {
  std::string type = str_or(rec, "type");
  s.types[type]++;
  int64_t t = int_or(rec, "t");
  if (!s.first_t) s.first_t = t;
  s.last_t = t;
  if (type == "msg") {
    count_msg(s, rec);
  } else if (type == "decision") {
    s.decisions[str_or(rec, "kind", "?")]++;
  } else if (type == "timer") {
    std::string op = str_or(rec, "op");
    TimerCounts& c = s.timers[str_or(rec, "wait", "?")];
    uint64_t TimerCounts::*field = op == "arm" ? &TimerCounts::arm : op == "fire" ? &TimerCounts::fire : &TimerCounts::cancel;
    ++(c.*field);
    ++(s.timer_total.*field);
  } else if (type == "advance") {
    s.reasons[str_or(rec, "reason", "?")]++;
    s.woken += static_cast<uint64_t>(int_or(rec, "woken"));
  } else if (type == "clock" && str_or(rec, "op") == "set") {
    ++s.clock_sets;
  } else if (type == "clock") {
    s.clock_reads[int_or(rec, "proc", -1)] = static_cast<uint64_t>(int_or(rec, "reads"));
  } else if (type == "process") {
    int64_t proc = int_or(rec, "proc", -1);
    s.processes[proc] = str_or(rec, "op") == "exit" ? str_or(rec, "status", "exited") : "running";
  } else if (type == "error") {
    s.errors.push_back(str_or(rec, "kind", "?") + ": " + str_or(rec, "message"));
  }
}

std::string counts_line(const std::map<std::string, uint64_t>& m) {
  if (m.empty()) return "none";
  std::string s;
  for (auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s;
}

std::string ending(const TraceReader& r) {
  if (!r.trailer()) return "cut short (no trailer)";
  const Json& tr = *r.trailer();
  return str_or(tr, "status", "?") + " (exit code " + std::to_string(int_or(tr, "exit_code")) + ")";
}

Json to_json(const Stats& s, const TraceReader& r, const std::string& path) {
  Json j;
  j["trace"] = path;
  j["compressed"] = r.compressed();
  j["records"] = r.records_read();
  Json types = Json::object();
  for (const char* t : kTypes) types[t] = s.types.count(t) ? s.types.at(t) : 0;
  j["types"] = types;
  Json dirs = Json::object();
  for (const char* d : kDirs) dirs[d] = s.dirs.count(d) ? s.dirs.at(d) : 0;
  j["messages"] = dirs;
  j["ticks"] = s.ticks;
  j["unparsable_messages"] = s.unparsable;
  j["span"] = {{"first_ns", s.first_t ? Json(*s.first_t) : Json()}, {"last_ns", s.last_t ? Json(*s.last_t) : Json()}};
  j["decisions"] = Json(s.decisions);
  j["jobs"] = {{"submitted", s.submitted}, {"started", s.started}, {"completed", s.completed},
               {"rejected", s.rejected},   {"killed", s.killed}};
  Json timers = {{"arm", s.timer_total.arm}, {"fire", s.timer_total.fire}, {"cancel", s.timer_total.cancel}};
  Json by_wait = Json::object();
  for (auto& [w, c] : s.timers) by_wait[w] = {{"arm", c.arm}, {"fire", c.fire}, {"cancel", c.cancel}};
  timers["by_wait"] = by_wait;
  j["timers"] = timers;
  j["advances"] = Json(s.reasons);
  j["woken"] = s.woken;
  j["clock_sets"] = s.clock_sets;
  Json procs = Json::array();
  for (auto& [p, st] : s.processes) procs.push_back({{"proc", p}, {"status", st}, {"clock_reads", s.clock_reads.count(p) ? s.clock_reads.at(p) : 0}});
  j["processes"] = procs;
  j["errors"] = s.errors;
  j["trailer"] = r.trailer() ? *r.trailer() : Json();
  Json problems = Json::array();
  for (const Problem& p : r.problems()) problems.push_back(to_string(p));
  j["problems"] = problems;
  return j;
}

void print_text(const Stats& s, const TraceReader& r, const std::string& path, std::ostream& out) {
  auto line = [&](const char* what, const std::string& text) {
    char key[24];
    snprintf(key, sizeof key, "%-16s", what);
    out << key << text << "\n";
  };
  line("trace", path + (r.compressed() ? " (zstd)" : "") + ", " + std::to_string(r.records_read()) + " records");
  line("ended", ending(r));
  if (s.first_t) {
    line("simulated span", seconds6(*s.first_t) + " .. " + seconds6(*s.last_t) + " s (" +
                               seconds6(*s.last_t - *s.first_t) + " s)");
  }
  std::map<std::string, uint64_t> types;
  for (const char* t : kTypes) types[t] = s.types.count(t) ? s.types.at(t) : 0;
  std::string tl;
  for (const char* t : kTypes) tl += (tl.empty() ? "" : ", ") + std::string(t) + " " + std::to_string(types[t]);
  line("records", tl);
  std::string dl;
  for (const char* d : kDirs) dl += (dl.empty() ? "" : ", ") + std::string(d) + " " + std::to_string(s.dirs.count(d) ? s.dirs.at(d) : 0);
  if (s.ticks) dl += " (" + std::to_string(s.ticks) + " ticks)";
  if (s.unparsable) dl += " (" + std::to_string(s.unparsable) + " unparsable)";
  line("messages", dl);
  line("decisions", counts_line(s.decisions));
  line("jobs", "submitted " + std::to_string(s.submitted) + ", started " + std::to_string(s.started) + ", completed " +
                   std::to_string(s.completed) + ", rejected " + std::to_string(s.rejected) + ", killed " +
                   std::to_string(s.killed));
  std::string timers = "armed " + std::to_string(s.timer_total.arm) + ", fired " + std::to_string(s.timer_total.fire) +
                       ", cancelled " + std::to_string(s.timer_total.cancel);
  for (auto& [w, c] : s.timers)
    timers += "; " + w + " " + std::to_string(c.arm) + "/" + std::to_string(c.fire) + "/" + std::to_string(c.cancel);
  if (!s.timers.empty()) timers += " (armed/fired/cancelled)";
  line("timers", timers);
  line("clock advances", counts_line(s.reasons) + (s.reasons.empty() ? "" : "; woke " + std::to_string(s.woken) + " waits"));
  std::string procs = std::to_string(s.processes.size());
  for (auto& [p, st] : s.processes) {
    procs += (p == s.processes.begin()->first ? ": " : ", ") + std::string("proc ") + std::to_string(p) + " " + st;
    if (s.clock_reads.count(p)) procs += " (" + std::to_string(s.clock_reads.at(p)) + " clock reads)";
  }
  line("processes", procs);
  if (s.clock_sets) line("clock sets", std::to_string(s.clock_sets) + " (the realtime clock set by the scheduler's tree)");
  for (auto& e : s.errors) line("error", e);
  line("problems", r.problems().empty() ? "none" : std::to_string(r.problems().size()) + " (see stderr)");
}

}  // namespace

int stats(const std::string& path, const StatsOptions& o, std::ostream& out, std::ostream& err) {
  auto reader = open_trace(path, err);
  if (!reader) return kTraceUnreadable;
  Stats s;
  Json rec;
  while (reader->next(rec)) count(s, rec);
  if (o.json) out << to_json(s, *reader, path).dump(2) << "\n";
  else print_text(s, *reader, path, out);
  return report_problems(*reader, path, err) > 0 ? kTraceProblems : kTraceOk;
}

}  // namespace vtime::recorder::tools
