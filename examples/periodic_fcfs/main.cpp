// periodic_fcfs: FCFS decided by a background thread every P seconds, the way real-time
// schedulers are written (see periodic_fcfs.h). Meant to run under `vtime run`, which makes its
// clock virtual and turns its waits into CALL_ME_LATER; against plain Batsim it would wait P real
// seconds per pass and never be called back.
//
//   periodic_fcfs -s ENDPOINT --period P [--decision-cost MS]
//
// Binds a REP socket at ENDPOINT, answers every message with the decisions queued so far, and
// exits 0 after replying to SIMULATION_ENDS. Exit codes: 0 done; 1 invalid message from Batsim or
// ZeroMQ error (one line on stderr); 2 bad command line; 130/143 on SIGINT/SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <zmq.hpp>

#include "decision_cost.h"
#include "periodic_fcfs.h"
#include "vtime/protocol/codec.h"

namespace {
// Self-pipe: the handler makes the protocol thread's poll return, whichever thread it runs on,
// so the protocol thread can block without a timeout (a timeout would be a timer under vtime).
int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) {
  g_signal.store(sig);
  char c = 0;
  ssize_t n = write(g_signal_pipe[1], &c, 1);
  (void)n;  // the pipe is non-blocking; a full pipe already holds a wake-up
}
}  // namespace

int main(int argc, char** argv) {
  std::string endpoint = "tcp://*:28000";
  double period = 0;
  double decision_cost_ms = 0;
  CLI::App app{"periodic_fcfs: FCFS on the lowest-numbered free resources, decided by a thread waking every P seconds."};
  app.add_option("-s,--socket-endpoint", endpoint, "ZeroMQ endpoint to bind (REP)")->capture_default_str();
  app.add_option("--period", period, "Seconds between two scheduling passes (the first at P after SIMULATION_BEGINS)")
      ->required()
      ->check(CLI::PositiveNumber);
  // --work-ms: its name before the sweep's studies named it --decision-cost (kept for scripts).
  app.add_option("--decision-cost,--work-ms", decision_cost_ms,
                 "Real CPU milliseconds each pass spends before publishing its decisions")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  auto p = vtime::protocol::Nanos::from_seconds(period);
  if (!p || p->ns() <= 0) {
    std::fprintf(stderr, "periodic_fcfs: --period out of range\n");
    return 2;
  }

  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("periodic_fcfs: pipe2");
    return 1;
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
    // Declared after the socket so that its thread is joined first on every return path.
    periodic_fcfs::PeriodicFcfs sched(std::chrono::nanoseconds(p->ns()), examples::decision_cost(decision_cost_ms));
    while (!sched.finished()) {
      zmq::pollitem_t items[] = {{sock.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, g_signal_pipe[0], ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 2);  // no timeout
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw;
      }
      if (items[1].revents & ZMQ_POLLIN) return 128 + g_signal.load();
      zmq::message_t msg;
      if (!sock.recv(msg, zmq::recv_flags::dontwait)) continue;
      auto in = vtime::protocol::parse_message(msg.to_string_view(), vtime::protocol::Direction::to_scheduler);
      if (!in) {
        std::fprintf(stderr, "periodic_fcfs: invalid message from Batsim: %s\n", in.error().c_str());
        return 1;
      }
      std::string reply = vtime::protocol::serialise(sched.on_message(*in));
      sock.send(zmq::buffer(reply), zmq::send_flags::none);
    }
    // Replied to SIMULATION_ENDS: give that reply time to leave (linger 0 would drop it), then
    // the destructors stop the scheduling thread and close the socket.
    sock.set(zmq::sockopt::linger, 30000);
    return 0;
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "periodic_fcfs: ZeroMQ error on '%s': %s\n", endpoint.c_str(), e.what());
    return 1;
  }
}
