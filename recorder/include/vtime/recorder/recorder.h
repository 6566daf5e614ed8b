// The recorder: turns what the broker sees and does into trace records (docs/trace-format.md)
// and hands them to a sink, a trace file when recording, a comparator when replaying.
//
// What it is for: one code path makes the records of a run, so that a replay, which makes them
// again from the replayed scheduler, can compare them one by one with the recorded ones.
//
// Example (what the broker does):
//     TraceFileSink sink(std::move(writer));
//     Recorder rec(sink);
//     rec.attach(session, scheduler_pid);
//     rec.message(MsgDir::from_batsim, bytes, t);
//     ... rec.observe(t);                      // whenever the scheduler's tree is idle
//     rec.finish("ok", 0, t);
#pragma once

#include <vtime/broker/run_observer.h>
#include <vtime/observe.h>
#include <vtime/recorder/trace.h>
#include <vtime/session.h>

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vtime::protocol {
struct Message;
}

namespace vtime::recorder {

// Where records go. put() may throw (a replay stops at the first divergence); finish() never.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void put(Json rec) = 0;
  virtual void finish(const std::string& status, int exit_code, int64_t t) = 0;
  // The scheduler runs (pid `root`, in session `s`): a replay needs its processes to pause them.
  virtual void attached(Session& s, pid_t root) {
    (void)s;
    (void)root;
  }
};

class TraceFileSink final : public RecordSink {
 public:
  explicit TraceFileSink(std::unique_ptr<TraceWriter> w) : w_(std::move(w)) {}
  void put(Json rec) override { w_->write(std::move(rec)); }
  void finish(const std::string& status, int exit_code, int64_t t) override { w_->finish(status, exit_code, t); }
  TraceWriter& writer() { return *w_; }

 private:
  std::unique_ptr<TraceWriter> w_;
};

using broker::MsgDir;
const char* to_string(MsgDir d);

// Thread names left out of clock-read counts by default: libzmq's I/O threads, whose number of
// clock reads depends on real time (a TSC cache).
std::vector<std::string> default_ignored_threads();

// What the broker sees (broker::RunObserver), as records.
class Recorder final : public broker::RunObserver {
 public:
  explicit Recorder(RecordSink& sink, std::vector<std::string> ignored_threads = default_ignored_threads());
  ~Recorder() override;

  void attach(Session& s, pid_t root) override;
  // Records the message, exact bytes. Returns its seq.
  uint64_t message(MsgDir d, std::string_view bytes, int64_t t) override;
  // Records the decisions, normalised.
  void decisions(uint64_t msg_seq, const protocol::Message& reply, int64_t t) override;
  // Records processes that appeared or vanished, timers armed or cancelled since the last look,
  // and changed clock-read counts.
  void observe(int64_t t) override;
  // Records the timers the advance fires.
  void before_advance(int64_t from, int64_t to) override;
  void advance(int64_t from, int64_t to, const char* reason, int woken) override;
  void root_exit(int status, int64_t t) override;
  void error(int code, const std::string& message, int64_t t) override;
  // Writes the trailer; status "ok" or the error's kind. Never throws.
  void finish(int exit_code, int64_t t) override;

  // The timers pending at the last look, as trace records ("op":"pending"), for reports.
  std::vector<Json> pending_timers() const;
  uint64_t last_seq() const { return seq_; }

 private:
  void put(Json rec);
  int proc_id(pid_t pid);
  Json thread_id(pid_t pid, pid_t tid);
  struct Timer {
    uint64_t id;
    int proc;
    Json thread;
    uint32_t reason;
    int64_t deadline;
  };
  Json timer_record(const char* op, const Timer& tm, int64_t t);
  static bool fires_before(const Timer& a, const Timer& b);

  RecordSink& sink_;
  std::vector<std::string> ignored_;
  ProcessNames names_;  // process names for clock_reads, through descriptors kept open
  Session* session_ = nullptr;
  pid_t root_ = 0;
  uint64_t seq_ = 0;
  std::string error_kind_;
  std::map<pid_t, int> procs_;                 // pid -> logical process id
  int next_proc_ = 0;
  std::map<pid_t, std::map<pid_t, int>> threads_;  // pid -> tid -> logical thread id
  std::map<uint64_t, Timer> pending_;          // wait seq -> timer
  uint64_t next_timer_id_ = 1;
  std::map<pid_t, std::pair<uint64_t, uint64_t>> clock_;  // last (reads, digest) written
  uint64_t clock_sets_ = 0;                    // abi::ClockState::realtime_sets last recorded
};

// "crash", "hang", ... for a vtime run exit code (broker.h kExit*), "" for 0.
const char* error_kind(int exit_code);

}  // namespace vtime::recorder
