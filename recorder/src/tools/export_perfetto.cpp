// perfetto export: Chrome trace-event JSON ({"traceEvents":[...]}, times in microseconds), the
// format ui.perfetto.dev and chrome://tracing open. Layout, one "process" per concern:
//   pid 1  Batsim resources  one track per machine, a complete event ("X") per job running on it
//   pid 2  protocol          one track per message direction (an instant per message, its bytes
//                            in args) and one for the scheduler's decisions
//   pid 3  virtual clock     an instant per advance, counters of armed timers and woken waits
//   pid 100+N scheduler process N: its timers as async spans from arm to fire/cancel (one track
//                            per thread), spawn/exit instants, a counter of its clock reads
// Events are written as records are read; only the jobs (whose end comes later) are held.
#include <map>
#include <set>

#include "exports.h"
#include "job_tracker.h"
#include "trace_input.h"

namespace vtime::recorder::tools {

namespace {

constexpr int kResourcesPid = 1, kProtocolPid = 2, kClockPid = 3, kSchedulerPidBase = 100;
constexpr int kDecisionsTid = 5;

int dir_tid(const std::string& dir) {
  if (dir == "from_batsim") return 1;
  if (dir == "to_scheduler") return 2;
  if (dir == "from_scheduler") return 3;
  return 4;
}

double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) { out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }
  void emit(const Json& ev) {
    out_ << (first_ ? "" : ",\n") << ev.dump(-1, ' ', false, Json::error_handler_t::replace);
    first_ = false;
  }
  void close() { out_ << "\n]}\n"; }
  // Names a process or thread once ("M" metadata events may come anywhere in the file).
  void name_process(int pid, const std::string& name, int sort) {
    if (!named_pids_.insert(pid).second) return;
    emit({{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", name}}}});
    emit({{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_sort_index"}, {"args", {{"sort_index", sort}}}});
  }
  void name_thread(int pid, int tid, const std::string& name) {
    if (!named_tids_.insert({pid, tid}).second) return;
    emit({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
    emit({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", tid}}}});
  }

 private:
  std::ostream& out_;
  bool first_ = true;
  std::set<int> named_pids_;
  std::set<std::pair<int, int>> named_tids_;
};

std::string msg_name(const Json& rec) {
  auto bytes = msg_bytes(rec);
  if (bytes && bytes->empty()) return "tick";
  auto m = parse_msg(rec);
  if (!m) return "unparsable message";
  if (m->events.empty()) return "(no events)";
  std::string s;
  for (size_t i = 0; i < m->events.size() && i < 4; ++i) s += (i ? " " : "") + std::string(type_name(m->events[i].payload));
  if (m->events.size() > 4) s += " +" + std::to_string(m->events.size() - 4);
  return s;
}

struct OpenTimer {
  int pid = 0, tid = 0;
  std::string wait;
};

}  // namespace

void write_perfetto(TraceReader& r, const std::string& trace_name, std::ostream& out, std::ostream&) {
  EventWriter w(out);
  JobTracker jobs;
  w.name_process(kProtocolPid, "protocol (" + trace_name + ")", 2);
  for (const char* d : {"from_batsim", "to_scheduler", "from_scheduler", "to_batsim"}) w.name_thread(kProtocolPid, dir_tid(d), d);
  w.name_thread(kProtocolPid, kDecisionsTid, "decisions");
  w.name_process(kClockPid, "virtual clock", 3);
  w.name_thread(kClockPid, 1, "advances");

  std::map<int64_t, OpenTimer> open_timers;
  int64_t armed = 0, last_t = 0;
  Json rec;
  while (r.next(rec)) {
    jobs.add(rec);
    const std::string type = str_or(rec, "type");
    const int64_t t = int_or(rec, "t");
    last_t = std::max(last_t, t);
    const double ts = micros(t);
    const int64_t seq = int_or(rec, "seq");
    if (type == "msg") {
      std::string dir = str_or(rec, "dir", "?");
      Json args = {{"seq", seq}, {"dir", dir}};
      if (auto b = str_field(rec, "bytes")) args["bytes"] = *b;
      else args["hex"] = str_or(rec, "hex");
      w.emit({{"ph", "i"}, {"s", "t"}, {"pid", kProtocolPid}, {"tid", dir_tid(dir)}, {"ts", ts}, {"cat", "msg"},
              {"name", msg_name(rec)}, {"args", args}});
    } else if (type == "decision") {
      std::string name = str_or(rec, "kind", "?");
      if (auto job = str_field(rec, "job")) name += " " + *job;
      Json args = {{"seq", seq}, {"msg", int_or(rec, "msg")}};
      if (rec.contains("event")) args["event"] = rec["event"];
      w.emit({{"ph", "i"}, {"s", "t"}, {"pid", kProtocolPid}, {"tid", kDecisionsTid}, {"ts", ts}, {"cat", "decision"},
              {"name", name}, {"args", args}});
    } else if (type == "timer") {
      int64_t proc = int_or(rec, "proc"), id = int_or(rec, "id");
      int pid = kSchedulerPidBase + static_cast<int>(proc);
      bool owned_by_process = rec.contains("thread") && rec["thread"].is_null();
      int tid = owned_by_process ? 0 : static_cast<int>(int_or(rec, "thread")) + 1;
      w.name_process(pid, proc == 0 ? "scheduler (proc 0)" : "scheduler proc " + std::to_string(proc), 10 + static_cast<int>(proc));
      w.name_thread(pid, tid, owned_by_process ? "process timers" : "thread " + std::to_string(tid - 1));
      std::string op = str_or(rec, "op"), wait = str_or(rec, "wait", "?");
      Json args = {{"seq", seq}, {"op", op}, {"deadline_s", seconds6(int_or(rec, "deadline"))}};
      if (op == "arm") {
        open_timers[id] = {pid, tid, wait};
        ++armed;
        w.emit({{"ph", "b"}, {"cat", "timer"}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"name", wait}, {"args", args}});
      } else {
        // End the span where it began, even if a damaged trace names another thread.
        auto it = open_timers.find(id);
        if (it != open_timers.end()) {
          pid = it->second.pid;
          tid = it->second.tid;
          wait = it->second.wait;
          open_timers.erase(it);
          --armed;
        }
        w.emit({{"ph", "e"}, {"cat", "timer"}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"name", wait}, {"args", args}});
      }
      w.emit({{"ph", "C"}, {"pid", kClockPid}, {"tid", 0}, {"ts", ts}, {"name", "armed timers"}, {"args", {{"armed", armed}}}});
    } else if (type == "advance") {
      Json args = {{"seq", seq}, {"from_s", seconds6(int_or(rec, "from"))}, {"reason", str_or(rec, "reason")},
                   {"woken", int_or(rec, "woken")}};
      w.emit({{"ph", "i"}, {"s", "t"}, {"pid", kClockPid}, {"tid", 1}, {"ts", ts}, {"cat", "advance"},
              {"name", "advance (" + str_or(rec, "reason", "?") + ")"}, {"args", args}});
      w.emit({{"ph", "C"}, {"pid", kClockPid}, {"tid", 0}, {"ts", ts}, {"name", "woken"}, {"args", {{"woken", int_or(rec, "woken")}}}});
    } else if (type == "clock" && str_or(rec, "op") == "set") {
      w.emit({{"ph", "i"}, {"s", "g"}, {"pid", kClockPid}, {"tid", 1}, {"ts", ts}, {"cat", "clock"},
              {"name", "realtime clock set"}, {"args", {{"shift_ns", int_or(rec, "shift")}}}});
    } else if (type == "clock") {
      int pid = kSchedulerPidBase + static_cast<int>(int_or(rec, "proc"));
      w.emit({{"ph", "C"}, {"pid", pid}, {"tid", 0}, {"ts", ts}, {"name", "clock reads"}, {"args", {{"reads", int_or(rec, "reads")}}}});
    } else if (type == "process") {
      int64_t proc = int_or(rec, "proc");
      int pid = kSchedulerPidBase + static_cast<int>(proc);
      w.name_process(pid, proc == 0 ? "scheduler (proc 0)" : "scheduler proc " + std::to_string(proc), 10 + static_cast<int>(proc));
      std::string op = str_or(rec, "op", "?");
      Json args = {{"seq", seq}};
      if (op == "exit") args["status"] = str_or(rec, "status");
      else args["parent"] = rec.contains("parent") ? rec["parent"] : Json();
      w.emit({{"ph", "i"}, {"s", "p"}, {"pid", pid}, {"tid", 0}, {"ts", ts}, {"cat", "process"}, {"name", op}, {"args", args}});
    } else if (type == "error") {
      w.emit({{"ph", "i"}, {"s", "g"}, {"pid", kClockPid}, {"tid", 1}, {"ts", ts}, {"cat", "error"},
              {"name", "error: " + str_or(rec, "kind", "?")},
              {"args", {{"seq", seq}, {"code", int_or(rec, "code")}, {"message", str_or(rec, "message")}}}});
    }
  }
  jobs.finish();
  if (r.trailer()) last_t = std::max(last_t, int_or(*r.trailer(), "t"));
  // Timers still armed when the trace ends are closed there, so viewers draw them.
  for (auto& [id, open] : open_timers) {
    w.emit({{"ph", "e"}, {"cat", "timer"}, {"id", id}, {"pid", open.pid}, {"tid", open.tid}, {"ts", micros(last_t)},
            {"name", open.wait}, {"args", {{"op", "still armed at the end of the trace"}}}});
  }

  w.name_process(kResourcesPid, "Batsim resources", 1);
  std::map<int, std::string> names;
  for (const TrackedResource& res : jobs.resources()) names[res.id] = res.name;
  for (const TrackedJob& j : jobs.jobs()) {
    if (!j.start) continue;
    int64_t end = j.end ? j.end->ns() : last_t;
    Json args = {{"job", j.id},
                 {"alloc", j.alloc.to_string()},
                 {"state", j.final_state.empty() ? "running at the end of the trace" : j.final_state},
                 {"submitted_s", seconds6(j.desc.subtime.ns())},
                 {"start_s", seconds6(j.start->ns())},
                 {"finish_s", seconds6(end)}};
    for (int id : j.alloc.ids()) {
      auto n = names.find(id);
      w.name_thread(kResourcesPid, id, n == names.end() ? "resource " + std::to_string(id)
                                                        : n->second + " (" + std::to_string(id) + ")");
      w.emit({{"ph", "X"}, {"pid", kResourcesPid}, {"tid", id}, {"ts", micros(j.start->ns())},
              {"dur", micros(end - j.start->ns())}, {"cat", "job"}, {"name", j.id}, {"args", args}});
    }
  }
  w.close();
}

}  // namespace vtime::recorder::tools
