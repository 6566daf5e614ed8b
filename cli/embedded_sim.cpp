// The embedded simulator in `vtime run`'s process (see embedded_sim.h).
#include "embedded_sim.h"

#include <vtime/protocol/codec.h>

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace vtime::cli {

EmbeddedSimulator::EmbeddedSimulator(sim::Platform platform, std::unique_ptr<sim::JobSource> workload,
                                     std::unique_ptr<sim::Outputs> outputs)
    : platform_(std::move(platform)),
      workload_(std::move(workload)),
      outputs_(std::move(outputs)),
      stepper_(platform_, *workload_, *outputs_),
      wake_fd_(eventfd(0, EFD_CLOEXEC)) {
  // The thread that takes SIGINT/SIGTERM: it waits with them unblocked (ppoll's mask) until
  // finish() wakes it; the handler sets the flag recv()/send() look at.
  signal_thread_ = std::thread([fd = wake_fd_] {
    sigset_t during;
    pthread_sigmask(SIG_SETMASK, nullptr, &during);
    sigdelset(&during, SIGINT);
    sigdelset(&during, SIGTERM);
    pollfd p{fd, POLLIN, 0};
    for (;;) {
      const int n = ppoll(&p, 1, nullptr, &during);
      if (n > 0 || (n < 0 && errno != EINTR)) return;
    }
  });
}

EmbeddedSimulator::~EmbeddedSimulator() { finish(); }

void EmbeddedSimulator::gone() {
  const sim::RunReport& r = stepper_.report();
  const int code = sim::exit_status(r);
  throw broker::SimulatorGone(code ? code : broker::kExitBatsimError,
                              r.error.empty() ? "the simulator ended before SIMULATION_ENDS"
                                              : "the simulator stopped: " + r.error);
}

void EmbeddedSimulator::abandon(const sim::PeerStatus& why) {
  // The simulator used to compute its next message as soon as it had a reply, and then waited
  // for the answer to it: it does so here too, so the outputs of an unfinished run hold the same.
  if (!awaiting_reply_ && stepper_.next()) awaiting_reply_ = true;
  if (awaiting_reply_) stepper_.abandon(why);
  awaiting_reply_ = false;
}

bool EmbeddedSimulator::interrupted_if_signalled() {
  const int sig = sim::stop_signal();
  if (sig == 0 || stepper_.ended()) return false;
  // A stop comes first, even with an answer at hand: a run that never pauses must stop too.
  abandon({sim::PeerStatus::interrupted, sig, {}});
  return true;
}

std::string EmbeddedSimulator::recv() { return protocol::serialise(recv_message()); }

void EmbeddedSimulator::send(const std::string& bytes) {
  if (interrupted_if_signalled() || stepper_.ended()) gone();
  awaiting_reply_ = false;
  stepper_.answer(bytes);
}

protocol::Message EmbeddedSimulator::recv_message() {
  if (interrupted_if_signalled()) gone();
  std::optional<protocol::Message> m = stepper_.next_message();
  if (!m) gone();
  awaiting_reply_ = true;
  return std::move(*m);
}

void EmbeddedSimulator::send_message(protocol::Message reply) {
  if (interrupted_if_signalled() || stepper_.ended()) gone();
  awaiting_reply_ = false;
  stepper_.answer_message(std::move(reply));
}

int EmbeddedSimulator::finish() {
  // The broker stopped before SIMULATION_ENDS was answered.
  if (!stepper_.ended() && !interrupted_if_signalled()) {
    abandon({sim::PeerStatus::failed, 0, "the broker stopped before answering"});
  }
  if (signal_thread_.joinable()) {
    const uint64_t one = 1;
    if (write(wake_fd_, &one, sizeof one) < 0) {
      // eventfd writes of 1 cannot fail short of a bad descriptor; join would then hang.
      signal_thread_.detach();
    } else {
      signal_thread_.join();
    }
    close(wake_fd_);
  }
  return sim::exit_status(stepper_.report());
}

std::unique_ptr<EmbeddedSimulator> make_embedded_simulator(const std::string& platform_path, int hosts,
                                                           const std::string& workload_path, const std::string& prefix,
                                                           bool quiet, const std::string& who) {
  // Only the simulator's signal thread takes SIGINT/SIGTERM (see the class): this thread and
  // every thread it starts from here on (the broker's ZeroMQ threads) keep them blocked. The
  // scheduler starts with an empty mask (spawn_in_session).
  sim::install_stop_signals();
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto platform = platform_path.empty() ? sim::make_platform(hosts, "master_host")
                                        : sim::load_platform_xml(platform_path, "master_host");
  if (!platform) {
    fprintf(stderr, "%s: %s\n", who.c_str(), platform.error().c_str());
    return nullptr;
  }
  auto workload = sim::open_workload(workload_path, "w0");
  if (!workload) {
    fprintf(stderr, "%s: %s\n", who.c_str(), workload.error().c_str());
    return nullptr;
  }
  // Once, what the embedded model leaves out (docs/sim.md); real Batsim (--batsim) would use it.
  if (!quiet)
    for (const std::string& what : platform->ignored) fprintf(stderr, "%s: note: %s\n", who.c_str(), what.c_str());
  auto outputs = sim::Outputs::open(prefix);
  if (!outputs) {
    fprintf(stderr, "%s: %s\n", who.c_str(), outputs.error().c_str());
    return nullptr;
  }
  return std::make_unique<EmbeddedSimulator>(std::move(*platform), std::move(*workload), std::move(*outputs));
}

}  // namespace vtime::cli
