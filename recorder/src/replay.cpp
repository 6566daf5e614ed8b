// Replay (see vtime/recorder/replay.h).
//
// The replayed run makes its records through the same Recorder the recording used, so they can
// be compared one by one: the comparator takes the place of the trace file, a port fed from the
// trace takes the place of the simulator. The simulator's messages are inputs (taken from the
// trace); everything else the scheduler and the clock do is checked.
#include <vtime/recorder/replay.h>

#include <vtime/broker/broker.h>
#include <vtime/observe.h>
#include <vtime/recorder/recorder.h>

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>

namespace vtime::recorder {
namespace {

constexpr int kAbortDiverged = 1001;  // broker::Aborted codes private to the replay
constexpr int kAbortCut = 1002;

std::string seconds_text(int64_t ns) {
  char buf[48];
  snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(ns / 1000000000),
           static_cast<long long>((ns % 1000000000) / 1000));
  return buf;
}

std::string from_hex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

std::string escape_pointer(const std::string& k) {
  std::string out;
  for (char c : k) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

Json parse_embedded(const Json& v) {
  if (!v.is_string()) return Json();
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || (s[0] != '{' && s[0] != '[')) return Json();
  Json j = Json::parse(s, nullptr, false);
  return j.is_discarded() ? Json() : j;
}

void diff_into(const Json& a, const Json& b, const std::string& path, std::optional<JsonDifference>& out) {
  if (out) return;
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      std::string p = path + "/" + escape_pointer(it.key());
      if (!b.contains(it.key())) {
        out = JsonDifference{p, it.value(), Json("(absent)")};
        return;
      }
      diff_into(it.value(), b[it.key()], p, out);
      if (out) return;
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) {
        out = JsonDifference{path + "/" + escape_pointer(it.key()), Json("(absent)"), it.value()};
        return;
      }
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      diff_into(a[i], b[i], path + "/" + std::to_string(i), out);
      if (out) return;
    }
    size_t i = n;
    out = JsonDifference{path + "/" + std::to_string(i), i < a.size() ? a[i] : Json("(absent)"),
                         i < b.size() ? b[i] : Json("(absent)")};
    return;
  }
  Json pa = parse_embedded(a), pb = parse_embedded(b);
  if (!pa.is_null() && !pb.is_null()) {
    diff_into(pa, pb, path, out);
    if (out) return;
  }
  out = JsonDifference{path, a, b};
}

// What kind of divergence two differing records show (docs/cli.md lists the kinds).
std::string classify(const Json& e, const Json& a, const std::string& path) {
  std::string et = e.value("type", ""), at = a.value("type", "");
  if (at == "error") {
    std::string k = a.value("kind", "");
    if (k == "crash") return "crash";
    if (k == "hang" || k == "stuck") return "hang";
    if (k == "bad-reply") return "decision";
    return k.empty() ? "error" : k;
  }
  if (et != at) {
    if (et == "msg") return "missing message";
    if (at == "msg") return "extra message";
    if (et == "timer" || at == "timer") return "timers";
    if (et == "advance" || at == "advance") return "timing";
    if (et == "clock" || at == "clock") return "clock digest";
    if (et == "decision" || at == "decision") return "decision";
    return "record";
  }
  auto ends_with = [&](const char* suffix) {
    std::string s = suffix;
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (et == "msg") {
    if (path == "/dir") return e.value("dir", "") == "from_batsim" ? "missing message" : "extra message";
    if (path == "/t" || ends_with("/now") || ends_with("/timestamp")) return "timing";
    return "decision";
  }
  if (et == "decision") return (path == "/t" || ends_with("/timestamp")) ? "timing" : "decision";
  if (et == "timer") return (path == "/deadline" || path == "/t") ? "timing" : "timers";
  if (et == "advance") return "timing";
  if (et == "clock") return e.contains("op") || a.contains("op") ? "clock set" : "clock digest";
  if (et == "process") return "process";
  return "record";
}

// The kind of a divergence where the recorded run had `rec` and the replayed run nothing.
std::string missing_kind(const Json& rec) {
  std::string type = rec.value("type", std::string("record"));
  return type == "msg" ? "missing message" : "missing " + type;
}

using Compare = ReplayOptions::Compare;

// Whether --compare MODE compares the record.
bool compared(Compare mode, const Json& rec) {
  if (mode == Compare::kAll) return true;
  std::string type = rec.value("type", std::string());
  if (type == "decision" || type == "error") return true;
  if (type != "msg") return false;
  if (mode == Compare::kDecisions) return true;
  std::string dir = rec.value("dir", std::string());
  return dir == "to_scheduler" || dir == "from_scheduler";
}

// The recorded records, read one ahead (only those compared).
class Expected {
 public:
  Expected(TraceReader& r, Compare mode) : r_(r), mode_(mode) {}
  const Json* peek() {
    while (!have_ && !ended_) {
      have_ = r_.next(next_);
      ended_ = !have_;
      // Every record read goes through in_shutdown, compared or not: it follows the messages.
      if (have_ && (in_shutdown(next_) || !compared(mode_, next_))) have_ = false;
    }
    return have_ ? &next_ : nullptr;
  }
  Json take() {
    peek();
    have_ = false;
    return std::move(next_);
  }
  bool cut() const { return ended_ && !r_.trailer().has_value(); }
  bool after_end() const { return after_end_; }

 private:
  // Traces recorded before the broker stopped recording at SIMULATION_ENDS (broker.cpp, advance)
  // go on with the scheduler's shutdown: its timers, advances, clock reads and processes' exits,
  // which a run no longer records. Its own exit and any error are still compared.
  bool in_shutdown(const Json& rec) {
    std::string type = rec.value("type", std::string());
    if (type == "msg") {
      if (after_end_) return false;
      std::string dir = rec.value("dir", std::string());
      if (dir == "to_batsim") {
        after_end_ = ends_seen_;
      } else if (dir == "from_batsim" && !ends_seen_) {
        // Looked at in place: a replay reads every recorded message through here.
        auto bytes = rec.find("bytes");
        ends_seen_ = bytes != rec.end() && bytes->is_string() &&
                     bytes->get_ref<const std::string&>().find("\"SIMULATION_ENDS\"") != std::string::npos;
      }
      return false;
    }
    if (!after_end_) return false;
    return type == "timer" || type == "advance" || type == "clock" || (type == "process" && rec.value("proc", -1) != 0);
  }

  TraceReader& r_;
  Compare mode_;
  Json next_;
  bool have_ = false;
  bool ended_ = false;
  bool ends_seen_ = false;  // the recorded SIMULATION_ENDS came in
  bool after_end_ = false;  // and was answered: the shutdown
};

struct Divergence {
  uint64_t seq = 0;
  int64_t t = 0;
  std::string kind;
  Json expected;  // null: none (the trace ended)
  Json actual;    // null: none (the run ended)
  std::optional<JsonDifference> diff;
};

class Comparator final : public RecordSink {
 public:
  Comparator(Expected& ex, const ReplayOptions& o) : ex_(ex), opts_(o) {}

  void attached(Session& s, pid_t root) override {
    session_ = &s;
    root_ = root;
  }

  void put(Json rec) override {
    if (stopped_) throw broker::Aborted(kAbortDiverged, "replay stopped");
    if (!compared(opts_.compare, rec)) return;
    const Json* e = ex_.peek();
    if (!e) {
      stopped_ = true;
      if (ex_.cut()) {
        cut_ = true;
        throw broker::Aborted(kAbortCut, "the trace is cut short here");
      }
      diverge({rec.value("seq", uint64_t{0}), rec.value("t", int64_t{0}), "extra " + rec.value("type", std::string("record")),
               Json(), rec, std::nullopt});
    }
    Json expected = ex_.take();
    uint64_t run_seq = rec.value("seq", uint64_t{0});
    if (opts_.compare != Compare::kAll) {
      // The run's sequence numbers count records left out here: the recorded ones name the place,
      // also where a decision names the message it came in.
      rec["seq"] = expected.value("seq", uint64_t{0});
      if (auto m = rec.find("msg"); m != rec.end() && m->is_number_unsigned()) {
        for (auto& [run, recorded] : seq_map_) {
          if (run == m->get<uint64_t>()) *m = recorded;
        }
      }
    }
    // The scheduler's exit after the end: at the end's instant now, at the shutdown's last one (and
    // after its records) in older traces.
    if (ex_.after_end() && expected.value("type", std::string()) == "process" && expected.value("op", std::string()) == "exit" &&
        expected.value("proc", -1) == 0 && rec.value("type", std::string()) == "process") {
      rec["t"] = expected.value("t", int64_t{0});
      rec["seq"] = expected.value("seq", uint64_t{0});
    }
    if (expected == rec) {
      if (opts_.compare != Compare::kAll && rec.value("type", std::string()) == "msg") {
        seq_map_.emplace_back(run_seq, rec.value("seq", uint64_t{0}));
        if (seq_map_.size() > 8) seq_map_.pop_front();
      }
      matched(std::move(rec));
      return;
    }
    auto d = first_difference(expected, rec);
    std::string kind = classify(expected, rec, d ? d->path : "");
    diverge({expected.value("seq", uint64_t{0}), expected.value("t", int64_t{0}), kind, expected, rec, d});
  }

  void finish(const std::string&, int, int64_t) override {
    // The run ended normally: the trace must end here too.
    if (stopped_ || divergence_) return;
    const Json* e = ex_.peek();
    if (e) {
      divergence_ = Divergence{e->value("seq", uint64_t{0}), e->value("t", int64_t{0}),
                               missing_kind(*e),
                               *e, Json(), std::nullopt};
    } else if (ex_.cut()) {
      cut_ = true;
    }
  }

  // The port found the run waiting for the simulator while the trace expects something else.
  [[noreturn]] void run_waits_for_simulator(const Json& expected) {
    diverge({expected.value("seq", uint64_t{0}), expected.value("t", int64_t{0}),
             missing_kind(expected),
             expected, Json("(the scheduler's step ended: the run waits for the next simulator message)"), std::nullopt});
  }

  const std::optional<Divergence>& divergence() const { return divergence_; }
  const std::deque<Json>& last_matching() const { return last_; }
  uint64_t matched_count() const { return matched_; }
  bool cut() const { return cut_; }
  void set_recorder(Recorder* r) { recorder_ = r; }
  std::vector<Json> pending_at_divergence() const { return pending_; }

 private:
  [[noreturn]] void diverge(Divergence d) {
    stopped_ = true;
    if (recorder_) pending_ = recorder_->pending_timers();
    divergence_ = std::move(d);
    throw broker::Aborted(kAbortDiverged, "divergence");
  }

  void matched(Json rec) {
    ++matched_;
    uint64_t seq = rec.value("seq", uint64_t{0});
    int64_t t = rec.value("t", int64_t{0});
    last_.push_back(std::move(rec));
    if (last_.size() > 5) last_.pop_front();
    if (opts_.stop_at && seq == *opts_.stop_at) pause(seq, t);
  }

  void pause(uint64_t seq, int64_t t) {
    std::vector<pid_t> pids{root_};
    if (session_) {
      for (auto& p : registered_processes(*session_)) {
        if (p.pid != root_) pids.push_back(p.pid);
      }
    }
    for (pid_t p : pids) kill(p, SIGSTOP);
    std::string msg = "vtime replay: paused after record " + std::to_string(seq) + " (simulated time " +
                      seconds_text(t) + " s); the scheduler is stopped:";
    for (pid_t p : pids) msg += " pid " + std::to_string(p);
    msg += "\n  attach a debugger: gdb -p " + std::to_string(root_) +
           "  (the clock stays frozen while it holds the process)\n  resume: press Enter, or kill -USR1 " +
           std::to_string(getpid()) + "\n";
    if (opts_.on_pause) {
      opts_.on_pause(msg);
    } else {
      fputs(msg.c_str(), stderr);
      fflush(stderr);
      wait_for_resume();
    }
    for (pid_t p : pids) kill(p, SIGCONT);
    fprintf(stderr, "vtime replay: resumed\n");
  }

  static void wait_for_resume() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    bool use_stdin = true;
    for (;;) {
      pollfd fds[2] = {{sfd, POLLIN, 0}, {use_stdin ? 0 : -1, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) continue;
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo si;
        if (read(sfd, &si, sizeof si) > 0) break;
      }
      if (fds[1].revents & (POLLIN | POLLHUP)) {
        char c;
        ssize_t n = read(0, &c, 1);
        if (n == 1 && c == '\n') break;
        if (n <= 0) use_stdin = false;  // no terminal or a closed pipe: wait for the signal
      }
    }
    if (sfd >= 0) close(sfd);
  }

  Expected& ex_;
  const ReplayOptions& opts_;
  Session* session_ = nullptr;
  pid_t root_ = 0;
  Recorder* recorder_ = nullptr;
  std::optional<Divergence> divergence_;
  std::deque<Json> last_;
  std::vector<Json> pending_;
  uint64_t matched_ = 0;
  std::deque<std::pair<uint64_t, uint64_t>> seq_map_;  // --compare decisions: the run's message seqs -> recorded
  bool stopped_ = false;
  bool cut_ = false;
};

// The simulator side, from the trace.
class TracePort final : public broker::BatsimPort {
 public:
  TracePort(Expected& ex, Comparator& cmp) : ex_(ex), cmp_(cmp) {}
  std::string recv() override {
    const Json* e = ex_.peek();
    if (!e) {
      if (ex_.cut()) throw broker::Aborted(kAbortCut, "the trace is cut short here");
      cmp_.run_waits_for_simulator(Json("(end of the trace)"));
    }
    if (e->value("type", "") != "msg" || e->value("dir", "") != "from_batsim") cmp_.run_waits_for_simulator(*e);
    if (e->contains("hex")) return from_hex((*e)["hex"].get<std::string>());
    return (*e)["bytes"].get<std::string>();
  }
  void send(const std::string&) override {}  // the answer was compared as it was recorded

 private:
  Expected& ex_;
  Comparator& cmp_;
};

std::string short_json(const Json& j, size_t max = 400) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

}  // namespace

std::optional<JsonDifference> first_difference(const Json& expected, const Json& actual) {
  std::optional<JsonDifference> out;
  diff_into(expected, actual, "", out);
  return out;
}

ReplayResult replay(const ReplayOptions& o) {
  ReplayResult res;
  auto refuse = [&](int code, const std::string& msg) {
    res.exit_code = code;
    res.report_text = "vtime replay: " + msg + "\n";
    res.report = Json::object();
    res.report["result"] = "error";
    res.report["message"] = msg;
    return res;
  };
  std::string err;
  // A first pass over the whole trace: damage in the middle (garbage, a gap in the sequence) is
  // refused before any scheduler starts; a cut end is replayed up to the cut with a warning.
  {
    auto check = TraceReader::open(o.trace, &err, o.force);
    if (!check) return refuse(kReplayRefused, err);
    Json rec;
    while (check->next(rec)) {
    }
    for (auto& p : check->problems()) {
      if (!p.fatal) continue;
      if (!o.force) return refuse(kReplayRefused, to_string(p) + "; --force replays up to there");
      res.warnings.push_back(to_string(p) + ": replaying up to there (--force)");
    }
  }
  auto reader = TraceReader::open(o.trace, &err, o.force);
  if (!reader) return refuse(kReplayRefused, err);
  const Json& h = reader->header();
  if (h.value("version", 0) != kFormatVersion) {
    res.warnings.push_back("the trace has format version " + h["version"].dump() + " (--force)");
  }
  // Inputs: the recorded run's files must be unchanged, or the trace no longer describes them.
  if (h.contains("inputs") && h["inputs"].is_array()) {
    for (auto& in : h["inputs"]) {
      std::string path = in.value("path", ""), role = in.value("role", "input");
      auto now = describe_input(role, path);
      if (!now) {
        res.warnings.push_back("the recorded " + role + " " + path + " is not here: cannot check it");
        continue;
      }
      if ((*now)["fnv1a64"] != in["fnv1a64"]) {
        std::string msg = "the " + role + " " + path + " changed since the recording (hash " +
                          (*now)["fnv1a64"].get<std::string>() + ", recorded " + in.value("fnv1a64", std::string("?")) + ")";
        if (!o.force) return refuse(kReplayRefused, msg + "; --force replays anyway");
        res.warnings.push_back(msg);
      }
    }
  }
  if (h.value("options", Json::object()).value("sync", std::string("exact")) != "exact") {
    res.warnings.push_back("the trace was recorded with the timeout policy: its timing depends on real time and a "
                           "replay may diverge for that reason alone");
  }

  broker::Options b = o.broker;
  std::vector<std::string> cmd = o.scheduler;
  if (cmd.empty() && h.contains("scheduler")) cmd = h["scheduler"].get<std::vector<std::string>>();
  if (cmd.empty()) return refuse(kReplayUsage, "no scheduler command (none given, none recorded)");

  if (o.compare == Compare::kScheduler && !o.simulator) return refuse(kReplayUsage, "--compare scheduler needs a simulator");
  char dir_template[] = "/tmp/vtime-replay-XXXXXX";
  if (!mkdtemp(dir_template)) return refuse(kReplayInternal, "mkdtemp failed");
  std::string dir = dir_template;
  b.scheduler_endpoint = "ipc://" + dir + "/scheduler";
  b.scheduler_command = cmd;  // the broker puts the endpoint in for "{endpoint}"

  Expected expected(*reader, o.compare);
  Comparator cmp(expected, o);
  Recorder recorder(cmp, h.contains("clock") && h["clock"].contains("ignored_threads")
                             ? h["clock"]["ignored_threads"].get<std::vector<std::string>>()
                             : default_ignored_threads());
  cmp.set_recorder(&recorder);
  TracePort port(expected, cmp);
  b.observer = &recorder;
  b.batsim_port = o.compare == Compare::kScheduler ? o.simulator : &port;
  // Schedulers that keep files of their own (vtime-k8s, vtime-slurm) put them beside the outputs,
  // as under vtime run: here in the replay's private directory.
  b.scheduler_env.emplace_back("VTIME_OUTPUT_PREFIX", dir + "/out");
  broker::Summary summary;
  int code = broker::run(b, &summary);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);

  res.records_matched = cmp.matched_count();
  res.complete = !cmp.cut();
  for (auto& p : reader->problems()) {
    if (p.code == "VT005" || p.code == "VT008") res.warnings.push_back(to_string(p));
  }
  Json rep = Json::object();
  rep["trace"] = o.trace;
  rep["compare"] = o.compare == Compare::kAll ? "all" : o.compare == Compare::kDecisions ? "decisions" : "scheduler";
  rep["records_matched"] = res.records_matched;
  std::string text;
  if (auto& d = cmp.divergence()) {
    res.diverged = true;
    res.exit_code = kReplayDiverged;
    rep["result"] = "divergence";
    rep["seq"] = d->seq;
    rep["t"] = d->t;
    rep["time"] = seconds_text(d->t);
    rep["kind"] = d->kind;
    rep["expected"] = d->expected;
    rep["actual"] = d->actual;
    rep["path"] = d->diff ? Json(d->diff->path) : Json(nullptr);
    rep["expected_value"] = d->diff ? d->diff->expected : Json(nullptr);
    rep["actual_value"] = d->diff ? d->diff->actual : Json(nullptr);
    rep["last_matching"] = Json(std::vector<Json>(cmp.last_matching().begin(), cmp.last_matching().end()));
    rep["pending_timers"] = Json(cmp.pending_at_divergence());
    text += "vtime replay: DIVERGENCE at seq " + std::to_string(d->seq) + " (simulated time " + seconds_text(d->t) +
            " s): " + d->kind + "\n";
    if (d->diff) {
      text += "  first difference at " + (d->diff->path.empty() ? std::string("/") : d->diff->path) + ": expected " +
              short_json(d->diff->expected, 200) + ", got " + short_json(d->diff->actual, 200) + "\n";
    }
    text += "  expected: " + (d->expected.is_null() ? std::string("(nothing: the trace ends)") : short_json(d->expected)) + "\n";
    text += "  actual:   " + (d->actual.is_null() ? std::string("(nothing: the run ended)") : short_json(d->actual)) + "\n";
    text += "  last matching records:\n";
    for (auto& r : cmp.last_matching()) text += "    " + short_json(r, 200) + "\n";
    text += "  pending timers:";
    if (cmp.pending_at_divergence().empty()) text += " none";
    text += "\n";
    for (auto& t : cmp.pending_at_divergence()) text += "    " + short_json(t, 200) + "\n";
  } else if (code != broker::kExitOk && code < 1000 && !cmp.cut()) {
    // The broker failed in a way the trace holds too (a recorded crash, reproduced), or before
    // anything could be compared.
    if (res.records_matched == 0) return refuse(kReplayInternal, "the replay could not start (exit " + std::to_string(code) + ")");
    rep["result"] = "match";
    rep["reproduced_error"] = code;
    text += "vtime replay: no divergence: " + std::to_string(res.records_matched) +
            " records matched, including the recorded failure (exit " + std::to_string(code) + ")\n";
  } else {
    rep["result"] = "match";
    text += "vtime replay: no divergence: " + std::to_string(res.records_matched) +
            (o.compare == Compare::kAll         ? " records matched"
             : o.compare == Compare::kDecisions ? " messages and decisions matched"
                                                : " scheduler messages and decisions matched");
    text += res.complete ? std::string(", the whole trace\n") : std::string(" up to the cut\n");
  }
  if (!res.complete) {
    res.warnings.push_back("the trace is cut short (no trailer): replayed up to record " +
                           std::to_string(res.records_matched) + " only");
  }
  rep["complete"] = res.complete;
  rep["warnings"] = res.warnings;
  std::string warn;
  for (auto& w : res.warnings) warn += "vtime replay: warning: " + w + "\n";
  res.report_text = warn + text;
  res.report = rep;
  return res;
}

}  // namespace vtime::recorder
