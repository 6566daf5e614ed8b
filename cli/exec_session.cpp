// Running one command tree under a fresh virtual-time session (see exec_session.h).
#include "exec_session.h"

#include "command.h"
#include "companions.h"

#include <vtime/controller.h>
#include <vtime/session.h>
#include <vtime/spawn.h>
#include <vtime/tree_watch.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>

namespace vtime::cli {
namespace {

// The only process-global state of the CLI: signal handlers forward to the wrapped root, and
// count the requests to stop.
std::atomic<pid_t> g_forward_pid{0};
std::atomic<int> g_stop_requests{0};

void forward_signal(int sig) {
  pid_t p = g_forward_pid.load();
  if (p > 0) kill(p, sig);
  // A second request to stop (Ctrl-C twice): the program did not end on the first (it ignores
  // the signal, or cannot take it), so vtime ends, by that signal, and every process it controls
  // dies with it (docs/cli.md).
  if (sig != SIGUSR1 && sig != SIGUSR2 && g_stop_requests.fetch_add(1) >= 1) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void install_forwarding(pid_t child) {
  g_forward_pid.store(child);
  struct sigaction sa{};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitInternal;
}

// Returns true when the tree is not deadlocked but stuck on a real timeout vtime does not control.
bool print_report(const std::vector<ThreadReport>& threads, TimePoint now) {
  const ThreadReport* real = nullptr;
  for (auto& t : threads) {
    if (!t.real_timeout.empty()) {
      real = &t;
      break;
    }
  }
  if (real) {
    fprintf(stderr,
            "vtime exec: virtual time cannot move at %.9f s: pid %d tid %d (%s) waits in %s, which vtime does not "
            "control (a system call made where neither the shim nor the tracer rewrites it: docs/tracer.md lists "
            "them). Use a call vtime virtualises, or rewrite the program with `vtime rewrite`. Every thread:\n",
            static_cast<double>(now.ns()) / 1e9, real->pid, real->tid, real->comm.c_str(), real->real_timeout.c_str());
  } else {
    fprintf(stderr, "vtime exec: the program is blocked forever at virtual time %.9f s: every thread waits "
                    "and no virtual deadline is pending\n", static_cast<double>(now.ns()) / 1e9);
  }
  for (auto& t : threads) fprintf(stderr, "  %s\n", to_string(t).c_str());
  return real != nullptr;
}

}  // namespace

int run_exec(const ExecOptions& opts) {
  std::string why;
  std::string shim = find_shim(why);
  if (shim.empty()) {
    fprintf(stderr, "vtime exec: %s\n", why.c_str());
    return kExitInternal;
  }
  std::optional<Session> session;
  try {
    session.emplace(Session::create(session_options(opts.cpu, opts.epoch_ns)));
  } catch (const SessionError& e) {
    fprintf(stderr, "vtime exec: %s\n", e.what());
    return kExitInternal;
  }
  std::unique_ptr<TreeWatch> watch;
  try {
    watch = TreeWatch::open_or_say(shim.substr(0, shim.rfind('/')));  // its helper is beside the shim
  } catch (const std::exception& e) {
    fprintf(stderr, "vtime exec: %s\n", e.what());
    return kExitInternal;
  }
  auto wall_start = std::chrono::steady_clock::now();
  // Before the tree starts, so that its first waits are already followed (Controller::set_serial).
  if (opts.serialize || opts.serialize_threads) {
    session->header().serial.store(opts.serialize_threads ? abi::kSerialThreads : abi::kSerialProcesses, std::memory_order_release);
  }
  SpawnResult spawned = spawn_in_session(*session, shim, opts.command, {}, watch.get());
  if (!spawned.pid) {
    fprintf(stderr, "vtime exec: %s\n", spawned.error.c_str());
    return spawned.exit_code;
  }
  pid_t child = spawned.pid;
  int status = 0;
  install_forwarding(child);

  Controller ctl(*session, child, watch.get());
  ctl.set_cpu_model(opts.cpu);
  bool reaped = false;
  // With the kernel count, the child can only have become reapable if a thread of the tree died
  // (`exits`: a root under the shim) or the tracer reaped a traced process (`tracer_reaps`: a
  // traced root is reaped by the tracer first) since the last waitpid that found it alive; the
  // looks in between skip the system call (one per notified sleep, ~1 us here).
  TreeWatch* const count = watch.get();
  std::optional<std::pair<uint64_t, uint32_t>> alive_at;
  auto exited = [&] {
    if (reaped) return true;
    std::optional<std::pair<uint64_t, uint32_t>> now;
    if (count) now.emplace(count->counts().exits, session->header().tracer_reaps.load(std::memory_order_acquire));
    if (now && now == alive_at) return false;
    if (waitpid(child, &status, WNOHANG) == child) {
      reaped = true;
    } else {
      alive_at = now;
    }
    return reaped;
  };
  int result = -1;
  bool reported = false;
  uint64_t reported_activity = 0;
  // wait_idle asks `exited` before each of its looks; a tree idle at the first look costs one
  // waitpid per advance, not three (a system call is ~1 us on a VM, a traced wait ~45 us).
  const std::function<bool()> exited_fn(exited);  // made once: it would allocate per advance
  for (;;) {
    if (ctl.wait_idle(exited_fn) == IdleResult::kInterrupted) break;
    auto next = ctl.next_deadline();
    if (!next && ctl.root_exited()) {
      // The root's exit is on its way to us (a traced one is reaped by the tracer first): never
      // a deadlock. The controller counts such a root as busy; CI still saw one reported
      // (tracer.static_c), so the report waits for the reaping, boundedly.
      for (int i = 0; i < 5000 && !exited(); ++i) usleep(1000);
      if (exited()) break;
    }
    if (!next && !reported) {
      // A decision made while a traced process was exiting can see the tree blocked for a
      // moment: the kernel reports the exit to the tracer first, and the parent (or vtime, for
      // the root) hears of it only once the tracer has reaped it (tracer.static_signal and
      // tracer.serial_gate each reported a root in wait4, or a zombie root, once in CI). A real
      // deadlock stays one: look again after 50 ms of real time, unless nothing moved.
      uint64_t before = session->header().activity.load();
      std::vector<pid_t> pids = ctl.tree_pids();
      for (int i = 0; i < 50 && !exited() && !ctl.root_exited() && session->header().activity.load() == before; ++i) {
        usleep(1000);
      }
      if (exited()) break;
      if (ctl.root_exited() || session->header().activity.load() != before || ctl.tree_pids() != pids) continue;
    }
    if (!next) {
      uint64_t activity = session->header().activity.load();
      if (reported && activity == reported_activity) {
        // --on-deadlock=report: keep waiting for input from outside the tree.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      bool real_timeout = print_report(ctl.describe(), session->now());
      reported = true;
      reported_activity = activity;
      if (opts.on_deadlock == OnDeadlock::kExit) {
        for (pid_t p : ctl.tree_pids()) kill(p, SIGKILL);
        waitpid(child, &status, 0);
        result = real_timeout ? kExitRealTimeout : kExitDeadlock;
        break;
      }
      continue;
    }
    reported = false;
    TimePoint now = session->now();
    ctl.advance_step(*next > now ? *next : now);
  }
  g_forward_pid.store(0);
  if (result < 0) {
    result = exit_code(status);
    // Processes the command left behind cannot live on without the clock: end them now rather
    // than let them fail on their own when they notice the session is gone.
    for (pid_t p : ctl.tree_pids()) {
      if (p != child) kill(p, SIGKILL);
    }
  }
  if (opts.stats) {
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    double virt = static_cast<double>(session->now().ns()) / 1e9;
    ControllerStats st = ctl.stats();
    fprintf(stderr, "vtime: virtual time %.9f s, wall time %.6f s, speed-up x%.1f, %llu advances, %llu wake-ups, "
                    "%llu idle decisions, cpu model %s",
            virt, wall, wall > 0 ? virt / wall : 0.0, static_cast<unsigned long long>(st.advances),
            static_cast<unsigned long long>(st.wakeups), static_cast<unsigned long long>(st.idle_decisions),
            cpu_model_name(opts.cpu.model));
    if (st.handovers) fprintf(stderr, ", %llu hand-overs", static_cast<unsigned long long>(st.handovers));
    if (st.notified) fprintf(stderr, ", %llu notified waits", static_cast<unsigned long long>(st.notified));
    if (st.sysmon_nudges) fprintf(stderr, ", %llu sysmon nudges", static_cast<unsigned long long>(st.sysmon_nudges));
    const auto& h = session->header();
    const uint32_t trapped = h.tsc_trapped_images.load(), patched = h.tsc_patched_images.load(), real = h.tsc_real_images.load();
    if (trapped + patched + real) {
      fprintf(stderr, ", Go counter reads: %u trapped, %u patched, %u real", trapped, patched, real);
    }
    if (st.busy_flows) {
      fprintf(stderr, " (the clock ran with real time in %llu busy stretches)", static_cast<unsigned long long>(st.busy_flows));
    }
    fprintf(stderr, "\n");
  }
  return result;
}

}  // namespace vtime::cli
