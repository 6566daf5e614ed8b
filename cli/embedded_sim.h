// The embedded simulator inside `vtime run`'s own process.
//
// `vtime run` used to start `vtime sim` as a child process and talk to it over ZeroMQ; each
// message then cost about 230 us of hops through two I/O threads and a socket, a quarter of the
// wall time of a run whose scheduler ticks every second. Here a thread runs sim::simulate(), and
// its messages reach the broker through a rendezvous (one mutex, two condition variables): the
// same bytes in the same order, so runs and traces are unchanged. Real Batsim (--batsim) still
// plugs in over ZeroMQ.
//
// SIGINT/SIGTERM (see sim::install_stop_signals) end the simulation in an orderly way: the
// simulator writes its outputs and stops, and the broker's next recv() or send() throws
// broker::SimulatorGone with status 128 + the signal. The simulation thread unblocks both
// signals for itself; the caller blocks them in its own thread before constructing this, so
// that its other threads (the broker, ZeroMQ's) never see them.
//
// Example:
//     EmbeddedSimulator s(std::move(platform), std::move(workload), std::move(outputs));
//     options.batsim_port = &s;           // the broker talks to it
//     int code = broker::run(options);
//     int sim_status = s.finish();        // joins; `vtime sim`'s exit status
#pragma once

#include <vtime/broker/broker.h>
#include <vtime/sim/simulator.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace vtime::cli {

class EmbeddedSimulator : public broker::BatsimPort {
 public:
  // Starts the simulation thread at once; it waits for the broker's first recv().
  EmbeddedSimulator(sim::Platform platform, std::unique_ptr<sim::JobSource> workload, std::unique_ptr<sim::Outputs> outputs);
  ~EmbeddedSimulator() override;  // ends and joins the simulation if finish() was not called

  // The simulator's next message. Throws broker::SimulatorGone once it has stopped.
  std::string recv() override;
  // The answer to the last message. Throws broker::SimulatorGone once it has stopped.
  void send(const std::string& bytes) override;

  // Waits for the simulation to end (it ends by itself once SIMULATION_ENDS is answered; if the
  // broker stopped earlier, the simulator is told the conversation is over and writes what it
  // has). Returns `vtime sim`'s exit status for it (docs/sim.md); the report's error line, if
  // any, is in error().
  int finish();
  const std::string& error() const { return report_.error; }

 private:
  class Port;
  sim::PeerStatus exchange(const std::string& request, std::string& reply);

  sim::Platform platform_;
  std::unique_ptr<sim::JobSource> workload_;
  std::unique_ptr<sim::Outputs> outputs_;
  std::unique_ptr<Port> port_;

  std::mutex m_;
  std::condition_variable to_broker_cv_, to_sim_cv_;
  std::optional<std::string> to_broker_, to_sim_;
  bool sim_done_ = false;     // simulate() returned
  bool broker_done_ = false;  // finish() was called: no answer will come
  sim::RunReport report_;
  std::thread thread_;
  bool joined_ = false;
};

}  // namespace vtime::cli
