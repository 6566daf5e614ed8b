// event_fcfs: a FCFS scheduler speaking the Batsim protocol over ZeroMQ.
//
//   event_fcfs -s ENDPOINT [--period P] [--decision-cost MS]
//
// Binds a REP socket at ENDPOINT (Batsim or `vtime sim` connects to it), answers every
// message, and exits 0 after replying to SIMULATION_ENDS. Exit codes: 0 done; 1 invalid message
// from Batsim or ZeroMQ error (one line on stderr); 2 bad command line; 130/143 on SIGINT/SIGTERM.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <zmq.hpp>

#include "decision_cost.h"
#include "fcfs.h"
#include "vtime/protocol/codec.h"

namespace {
std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal.store(sig); }
}  // namespace

int main(int argc, char** argv) {
  std::string endpoint = "tcp://*:28000";
  double period = 0;
  double decision_cost_ms = 0;
  CLI::App app{"event_fcfs: first-come-first-served on the lowest-numbered free resources, for Batsim or vtime sim."};
  app.add_option("-s,--socket-endpoint", endpoint, "ZeroMQ endpoint to bind (REP)")->capture_default_str();
  app.add_option("--period", period,
                 "Decide only every P seconds, at CALL_ME_LATER ticks (0: decide on every event)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--decision-cost", decision_cost_ms, "Real CPU milliseconds spent on each message before replying")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  auto p = vtime::protocol::Nanos::from_seconds(period);
  if (!p) {
    std::fprintf(stderr, "event_fcfs: --period out of range\n");
    return 2;
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  try {
    zmq::context_t ctx{1};
    zmq::socket_t sock{ctx, zmq::socket_type::rep};
    sock.set(zmq::sockopt::linger, 0);
    sock.bind(endpoint);
    event_fcfs::Fcfs fcfs(*p);
    while (!fcfs.finished()) {
      if (g_signal.load() != 0) return 128 + g_signal.load();
      zmq::pollitem_t item{sock.handle(), 0, ZMQ_POLLIN, 0};
      try {
        // No timeout: under vtime a timed poll is a timer, and a 100 ms one meant a tick every
        // 0.1 s of simulated time (31 million for a 36-day workload). A signal interrupts the
        // poll instead (the handler has no SA_RESTART).
        zmq::poll(&item, 1, std::chrono::milliseconds(-1));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
        if (g_signal.load() != 0) return 128 + g_signal.load();
        continue;
      }
      zmq::message_t msg;
      if (!sock.recv(msg, zmq::recv_flags::dontwait)) continue;
      auto in = vtime::protocol::parse_message(msg.to_string_view(), vtime::protocol::Direction::to_scheduler);
      if (!in) {
        std::fprintf(stderr, "event_fcfs: invalid message from Batsim: %s\n", in.error().c_str());
        return 1;
      }
      std::string reply = vtime::protocol::serialise(fcfs.on_message(*in));
      examples::spend_cpu(examples::decision_cost(decision_cost_ms));
      sock.send(zmq::buffer(reply), zmq::send_flags::none);
    }
    // The reply to SIMULATION_ENDS must leave before the socket closes (linger 0 would drop it,
    // and a loaded machine can take seconds to flush it); bounded, so a vanished peer cannot
    // hold the exit for ever.
    sock.set(zmq::sockopt::linger, 30000);
    return 0;
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "event_fcfs: ZeroMQ error on '%s': %s\n", endpoint.c_str(), e.what());
    return 1;
  }
}
