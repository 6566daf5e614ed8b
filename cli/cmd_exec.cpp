// `vtime exec`: run any command tree in discrete-event virtual time.
#include "command.h"
#include "cpu_options.h"
#include "epoch.h"
#include "exec_session.h"

#include <vtime/session.h>

#include <cstdio>

namespace vtime::cli {

namespace {
constexpr double kExecSleepLatencyNs = kLinuxTimerSlackNs;
}  // namespace

Subcommand register_exec(CLI::App& root) {
  struct Options {
    std::vector<std::string> command;
    std::string epoch;
    bool stats = false;
    bool serialize = false;
    bool serialize_threads = false;
    std::string on_deadlock = "exit";
    CpuOptions cpu;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "exec",
      "Run COMMAND under a virtual clock. The clock is frozen while any thread of the command's\n"
      "process tree runs, and jumps to the earliest pending deadline (sleep, timeout, timer) each\n"
      "time the whole tree is idle, so a program that sleeps for an hour finishes at once while\n"
      "seeing exactly one hour pass. Exit status: COMMAND's own (128+N if killed by signal N);\n"
      "121 blocked forever (--on-deadlock exit); 122 a wrapped process could not attach to the\n"
      "session; 123 stuck on a real timeout vtime does not control; 125 vtime failed; 126 COMMAND not runnable; 127 COMMAND not found; 2 usage.\n"
      "Signals to vtime go to COMMAND; a second SIGINT, SIGTERM, SIGHUP or SIGQUIT ends vtime (128+N) and the whole tree.");
  app->add_option("--epoch", opts->epoch,
                  "Wall-clock time at virtual time 0, ISO-8601 (2024-05-01T12:00:00Z, 2024-05-01, +02:00 offsets) "
                  "or @UNIX_SECONDS. Default: 2024-01-01T00:00:00Z, fixed so runs are reproducible.");
  app->add_flag("--stats", opts->stats, "Print virtual time elapsed, wall time, advances and wake-ups on exit.");
  app->add_option("--on-deadlock", opts->on_deadlock,
                  "When every thread waits and no deadline is pending: 'exit' prints what each thread waits on, "
                  "kills the tree and exits 121; 'report' prints it and keeps waiting (input may still come "
                  "from outside the tree).")
      ->check(CLI::IsMember({"report", "exit"}));
  app->add_flag("--serialize", opts->serialize,
                "One process at a time: a process whose wait for a descriptor (for a static or Go program, any "
                "timed wait) ends while another process of the tree runs is held until the tree is idle; held "
                "processes then run one after another in start order (not by pid), so what each reads from pipes "
                "and sockets at one virtual instant does not depend on real-time races (docs/design.md, "
                "Serialised processes).");
  app->add_flag("--serialize-threads", opts->serialize_threads,
                "--serialize, and one thread of a static or Go program at a time: a thread woken by another thread "
                "of its process (a futex, its descriptors) is held until that one waits, held threads run in the "
                "order their process made them, new threads wait for their turn (docs/design.md).");
  // A real kernel ends a sleep of a normal thread no earlier than its deadline plus the thread's
  // timer slack, 50 us by default (here a sleep of 10 us to 1 ms ended 56-68 us late). Without
  // it, threads that poll with short sleeps all wake at one instant many times more often than
  // they could on a real machine (CPython's test_queue: 50 threads polling every 10 us).
  opts->cpu.sleep_latency_ns = kExecSleepLatencyNs;
  // And every other timed wait by the slack too, as Linux ends it (timer_slack.h): a futex or
  // condition wait 50 us late, poll/select/epoll 0.1% of their timeout. Exact waits:
  // --sleep-latency 0 --timer-slack 0.
  opts->cpu.timer_slack_ns = kLinuxTimerSlackNs;
  add_cpu_options(*app, opts->cpu);
  app->add_option("command", opts->command, "The command and its arguments (after --).")->required();
  app->prefix_command(false);
  app->positionals_at_end(true);

  return {app, [opts]() -> int {
            ExecOptions o;
            o.command = opts->command;
            o.stats = opts->stats;
            o.serialize = opts->serialize;
            o.serialize_threads = opts->serialize_threads;
            o.on_deadlock = opts->on_deadlock == "report" ? OnDeadlock::kReport : OnDeadlock::kExit;
            std::string err;
            auto cpu = to_cpu_model(opts->cpu, &err);
            if (!cpu) {
              fprintf(stderr, "vtime exec: %s\n", err.c_str());
              return kExitUsage;
            }
            o.cpu = *cpu;
            o.epoch_ns = kDefaultEpochNs;
            if (!opts->epoch.empty()) {
              auto e = parse_epoch(opts->epoch);
              if (!e) {
                fprintf(stderr, "vtime exec: --epoch: cannot parse '%s' (expected ISO-8601 such as "
                                "2024-05-01T12:00:00Z, or @UNIX_SECONDS)\n", opts->epoch.c_str());
                return kExitUsage;
              }
              o.epoch_ns = *e;
            }
            return run_exec(o);
          }};
}

}  // namespace vtime::cli
