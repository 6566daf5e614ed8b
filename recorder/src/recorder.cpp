// The recorder (see vtime/recorder/recorder.h). Record order inside one observation is fixed
// (processes, then cancelled timers, then armed timers, then clock reads; each sorted by logical
// ids and deadlines), never by the order threads happened to run in.
#include <vtime/recorder/recorder.h>

#include <vtime/observe.h>
#include <vtime/protocol/codec.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

namespace vtime::recorder {

const char* to_string(MsgDir d) {
  switch (d) {
    case MsgDir::kFromBatsim: return "from_batsim";
    case MsgDir::kToScheduler: return "to_scheduler";
    case MsgDir::kFromScheduler: return "from_scheduler";
    case MsgDir::kToBatsim: return "to_batsim";
  }
  return "?";
}

std::vector<std::string> default_ignored_threads() { return {"ZMQbg/*"}; }

const char* error_kind(int exit_code) {
  switch (exit_code) {
    case 0: return "";
    case 3: return "bad-reply";
    case 4: return "crash";
    case 5: return "hang";
    case 6: return "stuck";
    case 7: return "simulator";
    default: return "internal";
  }
}

namespace {

std::string wait_status_text(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "ended";
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// The trace's names of wait kinds (abi::Reason order), stable across versions of the report text.
const char* wait_name(uint32_t reason) {
  static const char* names[] = {"wait", "sleep", "poll", "select", "epoll", "cond", "sem", "mutex",
                                "rwlock", "futex", "join", "sigwait", "posix-timer", "timerfd", "alarm", "cpu"};
  return reason < sizeof names / sizeof names[0] ? names[reason] : "wait";
}

std::string to_hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

}  // namespace

Recorder::Recorder(RecordSink& sink, std::vector<std::string> ignored) : sink_(sink), ignored_(std::move(ignored)) {}
Recorder::~Recorder() = default;

void Recorder::put(Json rec) {
  rec["seq"] = ++seq_;
  sink_.put(std::move(rec));
}

void Recorder::attach(Session& s, pid_t root) {
  session_ = &s;
  root_ = root;
  sink_.attached(s, root);
  procs_[root] = next_proc_++;
  Json r = record("process", s.now().ns());
  r["op"] = "spawn";
  r["proc"] = 0;
  r["parent"] = nullptr;
  put(std::move(r));
}

uint64_t Recorder::message(MsgDir d, std::string_view bytes, int64_t t) {
  Json r = record("msg", t);
  r["dir"] = to_string(d);
  if (valid_utf8(bytes)) {
    r["bytes"] = std::string(bytes);
  } else {
    r["hex"] = to_hex(bytes);
  }
  put(std::move(r));
  return seq_;
}

void Recorder::decisions(uint64_t msg_seq, const protocol::Message& reply, int64_t t) {
  for (const protocol::Event& e : reply.events) {
    Json r = record("decision", t);
    r["msg"] = msg_seq;
    r["kind"] = std::string(protocol::type_name(e.payload));
    if (auto* x = std::get_if<protocol::ExecuteJob>(&e.payload)) r["job"] = x->job_id;
    if (auto* x = std::get_if<protocol::RejectJob>(&e.payload)) r["job"] = x->job_id;
    if (auto* x = std::get_if<protocol::KillJob>(&e.payload)) r["jobs"] = x->job_ids;
    // The codec's own writing: the same decision compares equal whatever the scheduler's format.
    r["event"] = Json::parse(protocol::serialise(e), nullptr, false);
    put(std::move(r));
  }
}

int Recorder::proc_id(pid_t pid) {
  auto it = procs_.find(pid);
  if (it != procs_.end()) return it->second;
  int id = next_proc_++;
  procs_[pid] = id;
  return id;
}

Json Recorder::thread_id(pid_t pid, pid_t tid) {
  if (tid == 0) return nullptr;
  auto& m = threads_[pid];
  auto it = m.find(tid);
  if (it != m.end()) return it->second;
  int id = static_cast<int>(m.size());
  m[tid] = id;
  return id;
}

Json Recorder::timer_record(const char* op, const Timer& tm, int64_t t) {
  Json r = record("timer", t);
  r["op"] = op;
  r["id"] = tm.id;
  r["proc"] = tm.proc;
  r["thread"] = tm.thread;
  r["wait"] = wait_name(tm.reason);
  r["deadline"] = tm.deadline;
  return r;
}

void Recorder::observe(int64_t t) {
  if (!session_) return;
  // Processes: new ones get ids parents first, then by their parent's id, then by lineage (a
  // hash of where they come from: their parent's lineage and their rank among its forks), then
  // pid: processes that several parents fork at one instant (slurmds starting jobs) race for
  // pids, and a double-forked daemon's parent is gone before anyone sees it; lineages do not
  // depend on either. Gone ones (but the scheduler
  // itself, whose exit status the broker records) are reported once.
  auto live = registered_processes(*session_);
  std::set<pid_t> live_pids;
  for (auto& p : live) live_pids.insert(p.pid);
  std::vector<RegisteredProcess> fresh;
  for (auto& p : live) {
    // A child and its parent may each have claimed a slot for it at once: one id per pid.
    bool listed = std::any_of(fresh.begin(), fresh.end(), [&](auto& q) { return q.pid == p.pid; });
    if (!procs_.count(p.pid) && !listed) fresh.push_back(p);
  }
  while (!fresh.empty()) {
    // The new processes whose parent has an id (or is not in the tree at all), by (parent id,
    // pid); the others wait for their parent's turn.
    auto known = [&](const RegisteredProcess& p) {
      return procs_.count(p.parent) || std::none_of(fresh.begin(), fresh.end(), [&](auto& q) { return q.pid == p.parent; });
    };
    std::vector<RegisteredProcess> ready;
    for (auto& p : fresh) {
      if (known(p)) ready.push_back(p);
    }
    if (ready.empty()) ready = fresh;  // a cycle of pids cannot happen; be safe anyway
    auto parent_id = [&](const RegisteredProcess& p) {
      auto it = procs_.find(p.parent);
      return it == procs_.end() ? -1 : it->second;
    };
    std::sort(ready.begin(), ready.end(), [&](auto& a, auto& b) {
      return std::make_tuple(parent_id(a), a.lineage, a.pid) < std::make_tuple(parent_id(b), b.lineage, b.pid);
    });
    for (auto& p : ready) {
      int id = proc_id(p.pid);
      Json r = record("process", t);
      r["op"] = "spawn";
      r["proc"] = id;
      int pid_of_parent = parent_id(p);
      r["parent"] = pid_of_parent < 0 ? Json(nullptr) : Json(pid_of_parent);
      put(std::move(r));
    }
    std::erase_if(fresh, [&](auto& p) { return procs_.count(p.pid) > 0; });
  }
  // Exits in logical id order (pids are not deterministic).
  std::vector<std::pair<int, pid_t>> gone;
  for (auto& [pid, id] : procs_) {
    if (pid != root_ && !live_pids.count(pid)) gone.emplace_back(id, pid);
  }
  std::sort(gone.begin(), gone.end());
  for (auto& [id, pid] : gone) {
    Json r = record("process", t);
    r["op"] = "exit";
    r["proc"] = id;
    r["status"] = "gone";
    put(std::move(r));
    // Ids are never reused: a new process with a recycled pid gets a new one.
    threads_.erase(pid);
    procs_.erase(pid);
  }

  // Clock sets by the tree (clock_settime & co.): one record for what happened since the last
  // look; absolute realtime waits moved with the clock, so pending timers take their new deadlines.
  auto waits = pending_waits(*session_);
  auto& clk = session_->header().clock;
  uint64_t sets = clk.realtime_sets.load(std::memory_order_acquire);
  if (sets != clock_sets_) {
    clock_sets_ = sets;
    Json r = record("clock", t);
    r["op"] = "set";
    r["shift"] = clk.realtime_shift_ns.load(std::memory_order_acquire);
    r["sets"] = sets;
    put(std::move(r));
    for (auto& w : waits) {
      auto it = pending_.find(w.seq);
      if (it != pending_.end()) it->second.deadline = w.deadline.ns();
    }
  }

  // Timers.
  std::set<uint64_t> now_seqs;
  for (auto& w : waits) now_seqs.insert(w.seq);
  std::vector<Timer> cancelled;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!now_seqs.count(it->first)) {
      cancelled.push_back(it->second);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(cancelled.begin(), cancelled.end(), [](const Timer& a, const Timer& b) { return a.id < b.id; });
  for (auto& tm : cancelled) put(timer_record("cancel", tm, t));

  // New threads get ids in tid (creation) order, then new timers ids in a fixed order.
  std::map<pid_t, std::vector<pid_t>> new_threads;
  for (auto& w : waits) {
    if (pending_.count(w.seq) || w.tid == 0) continue;
    auto& m = threads_[w.pid];
    if (!m.count(w.tid)) new_threads[w.pid].push_back(w.tid);
  }
  for (auto& [pid, tids] : new_threads) {
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    for (pid_t tid : tids) thread_id(pid, tid);
  }
  std::vector<std::pair<uint64_t, Timer>> armed;
  for (auto& w : waits) {
    if (pending_.count(w.seq)) continue;
    Timer tm{0, proc_id(w.pid), thread_id(w.pid, w.tid), w.reason, w.deadline.ns()};
    armed.emplace_back(w.seq, tm);
  }
  auto key = [](const Timer& tm) {
    int th = tm.thread.is_null() ? -1 : tm.thread.get<int>();
    return std::make_tuple(tm.proc, th, tm.deadline, tm.reason);
  };
  std::stable_sort(armed.begin(), armed.end(), [&](auto& a, auto& b) { return key(a.second) < key(b.second); });
  for (auto& [wseq, tm] : armed) {
    tm.id = next_timer_id_++;
    pending_[wseq] = tm;
    put(timer_record("arm", tm, t));
  }

  // Clock reads, per process, when they changed.
  auto reads = clock_reads(*session_, ignored_, &names_);
  std::vector<std::pair<int, std::pair<pid_t, ClockReads>>> by_id;
  for (auto& [pid, c] : reads) {
    auto it = procs_.find(pid);
    if (it != procs_.end()) by_id.push_back({it->second, {pid, c}});
  }
  std::sort(by_id.begin(), by_id.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [id, pc] : by_id) {
    auto& [pid, c] = pc;
    auto& last = clock_[pid];
    if (last.first == c.reads && last.second == c.digest) continue;
    last = {c.reads, c.digest};
    Json r = record("clock", t);
    r["proc"] = id;
    r["reads"] = c.reads;
    r["digest"] = hex64(c.digest);
    put(std::move(r));
  }
}

// Timers fire in deadline order, ties in the order they were armed.
bool Recorder::fires_before(const Timer& a, const Timer& b) {
  return a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id;
}

void Recorder::before_advance(int64_t from, int64_t to) {
  observe(from);
  std::vector<std::pair<uint64_t, Timer>> due;
  for (auto& [wseq, tm] : pending_) {
    if (tm.deadline <= to) due.emplace_back(wseq, tm);
  }
  std::sort(due.begin(), due.end(), [](auto& a, auto& b) { return fires_before(a.second, b.second); });
  for (auto& [wseq, tm] : due) {
    pending_.erase(wseq);
    put(timer_record("fire", tm, to));
  }
}

void Recorder::advance(int64_t from, int64_t to, const char* reason, int woken) {
  Json r = record("advance", to);
  r["from"] = from;
  r["reason"] = reason;
  r["woken"] = woken;
  put(std::move(r));
}

void Recorder::root_exit(int status, int64_t t) {
  Json r = record("process", t);
  r["op"] = "exit";
  r["proc"] = 0;
  r["status"] = wait_status_text(status);
  put(std::move(r));
}

void Recorder::error(int code, const std::string& message, int64_t t) {
  error_kind_ = error_kind(code);
  Json r = record("error", t);
  r["code"] = code;
  r["kind"] = error_kind_;
  r["message"] = message;
  put(std::move(r));
}

void Recorder::finish(int exit_code, int64_t t) {
  std::string status = exit_code == 0 ? "ok" : error_kind(exit_code);
  sink_.finish(status, exit_code, t);
}

std::vector<Json> Recorder::pending_timers() const {
  std::vector<std::pair<uint64_t, Timer>> all(pending_.begin(), pending_.end());
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return fires_before(a.second, b.second); });
  std::vector<Json> out;
  for (auto& [wseq, tm] : all) {
    Json r;
    r["id"] = tm.id;
    r["proc"] = tm.proc;
    r["thread"] = tm.thread;
    r["wait"] = wait_name(tm.reason);
    r["deadline"] = tm.deadline;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace vtime::recorder
