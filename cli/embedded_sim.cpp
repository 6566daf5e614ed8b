// The embedded simulator in `vtime run`'s process (see embedded_sim.h).
#include "embedded_sim.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>

namespace vtime::cli {

namespace {
// Waits are cut in slices so that a stop signal (whose handler cannot notify a condition
// variable) is seen promptly; a message is handed over by notify() at once, whatever the slice.
constexpr std::chrono::milliseconds kSlice{100};
}  // namespace

// The simulator's side of the rendezvous.
class EmbeddedSimulator::Port : public sim::Peer {
 public:
  explicit Port(EmbeddedSimulator& s) : s_(s) {}
  sim::PeerStatus exchange(const std::string& request, std::string& reply) override { return s_.exchange(request, reply); }

 private:
  EmbeddedSimulator& s_;
};

EmbeddedSimulator::EmbeddedSimulator(sim::Platform platform, std::unique_ptr<sim::JobSource> workload,
                                     std::unique_ptr<sim::Outputs> outputs)
    : platform_(std::move(platform)),
      workload_(std::move(workload)),
      outputs_(std::move(outputs)),
      port_(std::make_unique<Port>(*this)) {
  thread_ = std::thread([this] {
    // The stop signals are taken here (the caller blocks them in its other threads, so that no
    // ZeroMQ call of the broker fails with EINTR): the handler only sets a flag, which the
    // rendezvous looks at every slice.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
    sim::RunReport r = sim::simulate(platform_, *workload_, *outputs_, *port_);
    std::lock_guard<std::mutex> lock(m_);
    report_ = std::move(r);
    sim_done_ = true;
    to_broker_cv_.notify_all();
  });
}

EmbeddedSimulator::~EmbeddedSimulator() { finish(); }

sim::PeerStatus EmbeddedSimulator::exchange(const std::string& request, std::string& reply) {
  std::unique_lock<std::mutex> lock(m_);
  to_sim_.reset();
  to_broker_ = request;
  // Notified without the lock: a woken broker would otherwise block at once on the mutex still
  // held here (a second sleep and wake-up per message).
  lock.unlock();
  to_broker_cv_.notify_one();
  lock.lock();
  for (;;) {
    // A stop comes first, even with an answer waiting: a run that never pauses must stop too.
    if (int sig = sim::stop_signal()) return {sim::PeerStatus::interrupted, sig, {}};
    if (to_sim_) {
      reply = std::move(*to_sim_);
      to_sim_.reset();
      return {};
    }
    if (broker_done_) return {sim::PeerStatus::failed, 0, "the broker stopped before answering"};
    to_sim_cv_.wait_for(lock, kSlice);
  }
}

std::string EmbeddedSimulator::recv() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    if (to_broker_) {
      std::string m = std::move(*to_broker_);
      to_broker_.reset();
      return m;
    }
    if (sim_done_) {
      int code = sim::exit_status(report_);
      throw broker::SimulatorGone(code ? code : broker::kExitBatsimError,
                                  report_.error.empty() ? "the simulator ended before SIMULATION_ENDS"
                                                        : "the simulator stopped: " + report_.error);
    }
    to_broker_cv_.wait_for(lock, kSlice);
  }
}

void EmbeddedSimulator::send(const std::string& bytes) {
  {
    std::lock_guard<std::mutex> lock(m_);
    if (sim_done_) {
      int code = sim::exit_status(report_);
      throw broker::SimulatorGone(code ? code : broker::kExitBatsimError, "the simulator stopped: " + report_.error);
    }
    to_sim_ = bytes;
  }
  to_sim_cv_.notify_one();  // after unlocking, as in exchange()
}

int EmbeddedSimulator::finish() {
  if (!joined_) {
    {
      std::lock_guard<std::mutex> lock(m_);
      broker_done_ = true;
      to_sim_cv_.notify_all();
    }
    thread_.join();
    joined_ = true;
  }
  return sim::exit_status(report_);
}

}  // namespace vtime::cli
