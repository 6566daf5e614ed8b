// The embedded simulator inside `vtime run`'s own process.
//
// `vtime run` used to start `vtime sim` as a child process and talk to it over ZeroMQ; each
// message then cost about 230 us of hops through two I/O threads and a socket. Then a thread ran
// sim::simulate() and handed each message to the broker through a rendezvous: two wake-ups of a
// sleeping thread per message, ~10% of a long run. Now the broker's own thread steps the
// simulation (sim::Stepper): recv() computes the next message, send() applies the reply. The
// same bytes in the same order, so runs and traces are unchanged. Real Batsim (--batsim) still
// plugs in over ZeroMQ.
//
// SIGINT/SIGTERM (see sim::install_stop_signals) end the simulation in an orderly way: the next
// recv() or send() (or finish()) sees the signal, the simulator writes its outputs, and the
// broker gets broker::SimulatorGone with status 128 + the signal. A small thread of this class
// is the only one that takes the signals (its handler only sets a flag); the caller blocks them
// in its own thread before constructing this, so that its other threads (the broker, ZeroMQ's)
// never see them and no ZeroMQ call fails with EINTR.
//
// Example:
//     EmbeddedSimulator s(std::move(platform), std::move(workload), std::move(outputs));
//     options.batsim_port = &s;           // the broker talks to it
//     int code = broker::run(options);
//     int sim_status = s.finish();        // `vtime sim`'s exit status
#pragma once

#include <vtime/broker/broker.h>
#include <vtime/sim/simulator.h>

#include <memory>
#include <string>
#include <thread>

namespace vtime::cli {

class EmbeddedSimulator : public broker::BatsimPort {
 public:
  EmbeddedSimulator(sim::Platform platform, std::unique_ptr<sim::JobSource> workload, std::unique_ptr<sim::Outputs> outputs);
  ~EmbeddedSimulator() override;  // finish() if it was not called

  // The simulator's next message. Throws broker::SimulatorGone once it has stopped.
  std::string recv() override;
  // The answer to the last message. Throws broker::SimulatorGone once it has stopped.
  void send(const std::string& bytes) override;
  // The same, without their text (broker::BatsimPort).
  bool speaks_messages() const override { return true; }
  protocol::Message recv_message() override;
  void send_message(protocol::Message reply) override;

  // Ends the simulation if the broker stopped before SIMULATION_ENDS was answered: the simulator
  // is told the conversation is over and writes what it has. Returns `vtime sim`'s exit status
  // for the run (docs/sim.md); the report's error line, if any, is in error().
  int finish();
  const std::string& error() const { return stepper_.report().error; }

 private:
  [[noreturn]] void gone();        // throws SimulatorGone for the ended run
  bool interrupted_if_signalled();  // a stop signal arrived: the run ends, interrupted
  void abandon(const sim::PeerStatus& why);  // ends the run: no answer will come

  sim::Platform platform_;
  std::unique_ptr<sim::JobSource> workload_;
  std::unique_ptr<sim::Outputs> outputs_;
  sim::Stepper stepper_;
  bool awaiting_reply_ = false;  // recv() gave a message send() has not answered yet
  int wake_fd_ = -1;             // tells the signal thread to end
  std::thread signal_thread_;
};

// The embedded simulator of a platform file (or, if `platform` is empty, of `hosts` identical
// hosts) and a workload file, writing its outputs at `prefix`; the inputs are read before
// anything starts. nullptr after saying why on stderr (prefixed with `who`): a usage error.
// Installs the stop signals and blocks SIGINT/SIGTERM in the calling thread first, as the class
// requires.
std::unique_ptr<EmbeddedSimulator> make_embedded_simulator(const std::string& platform, int hosts,
                                                           const std::string& workload, const std::string& prefix,
                                                           bool quiet, const std::string& who);

}  // namespace vtime::cli
