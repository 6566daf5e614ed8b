// A set of daemons started and watched by a bridge scheduler (vtime-slurm, vtime-k8s).
//
// What it is for: a bridge runs a real resource manager's daemons as its own children, inside
// the wrapped tree, so they live in virtual time. It must notice at once when one dies (a pidfd
// per daemon, readable when it exits, goes into the bridge's poll set), report it with the
// daemon's name and the last lines of its log, and stop them all in order when the run ends or
// fails, leaving nothing running.
//
// Example:
//     DaemonSet d;
//     d.start({"slurmctld", {"slurmctld", "-D", "-f", conf}, dir + "/log/slurmctld.log",
//              dir + "/log/slurmctld.out"});
//     ... poll d.fds() ...; if (auto dead = d.reap()) die(*dead);
//     d.stop_all(std::chrono::seconds(10));
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtime::bridges {

struct DaemonSpec {
  std::string name;               // how the user knows it: "slurmctld", "slurmd n3"
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string log;                // its own log file, quoted when it fails (may be empty)
  std::string output;             // where its stdout and stderr go
  // Its whole environment ("NAME=VALUE"); unset: this process's. PATH lookup of argv[0] uses
  // this process's PATH either way.
  std::optional<std::vector<std::string>> env;
  std::string cwd;  // its working directory; empty: this process's
};

struct DaemonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DaemonSet {
 public:
  DaemonSet() = default;
  ~DaemonSet();  // kills what is still running (SIGKILL): nothing outlives the bridge
  DaemonSet(const DaemonSet&) = delete;
  DaemonSet& operator=(const DaemonSet&) = delete;

  // Starts a daemon (with spec.env, or this process's environment). Throws DaemonError when it
  // cannot be executed (the message names it and says why).
  void start(const DaemonSpec& spec);
  // One pidfd per running daemon, readable once it has exited.
  std::vector<int> fds() const;
  // Reaps daemons that exited. Returns the description of the first one that ended while it
  // was expected to run: "slurmctld (pid 123) was killed by signal 9; last lines of its log: ...".
  std::optional<std::string> reap();
  bool running(const std::string& name) const;
  size_t size() const { return daemons_.size(); }
  // Expects the daemons to exit by themselves from now on (after a shutdown request).
  void expect_exit() { stopping_ = true; }
  // Waits (with sleeps of this process's clock: virtual under vtime) up to `grace` for every
  // daemon to exit, then SIGTERMs what is left in reverse start order, waits `grace` again, and
  // SIGKILLs the rest. Returns the names of the daemons that had to be signalled. For daemons
  // that were not asked to stop by other means, `wait_first` = false SIGTERMs them at once.
  std::vector<std::string> stop_all(std::chrono::milliseconds grace, bool wait_first = true);

  // Polls `ready` every `step` (10 ms by default) of this process's clock (virtual under vtime: a
  // bridge's set-up is not simulated time) until it holds. Throws DaemonError when a daemon dies
  // first (described as reap() does) or when `timeout` passes ("timed out after N s waiting for
  // WHAT; HINT").
  template <class F>
  void wait_until(const std::string& what, std::chrono::seconds timeout, const std::string& hint, F ready,
                  std::chrono::milliseconds step = std::chrono::milliseconds(10)) {
    for (long waited_ms = 0;; waited_ms += step.count()) {
      if (auto dead = reap()) throw DaemonError(*dead);
      if (ready()) return;
      if (waited_ms >= timeout.count() * 1000) {
        throw DaemonError("timed out after " + std::to_string(timeout.count()) + " s waiting for " + what +
                          (hint.empty() ? "" : "; " + hint));
      }
      sleep_ms(step.count());
    }
  }

  // The last `lines` lines of a file ("" when unreadable).
  static std::string tail(const std::string& path, int lines);

 private:
  struct Daemon {
    DaemonSpec spec;
    pid_t pid = 0;
    int pidfd = -1;
    bool exited = false;
    int status = 0;
  };
  static void sleep_ms(long ms);
  std::string describe_exit(const Daemon& d) const;
  bool reap_one(Daemon& d);
  std::vector<Daemon> daemons_;
  bool stopping_ = false;
};

}  // namespace vtime::bridges
