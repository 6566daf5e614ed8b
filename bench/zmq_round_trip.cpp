// The protocol's floor: a bare ZeroMQ REQ/REP round trip between two processes over ipc, with
// messages the size of Batsim's (a JOB_SUBMITTED one way, an EXECUTE_JOB back), and nothing
// else: no JSON, no simulation, no scheduling. bench/scale.sh multiplies it by a run's message
// count to get the wall time no Batsim-protocol simulator can beat on this machine.
//
// Usage: bench_zmq_round_trip [ROUND_TRIPS]      prints "us_per_round_trip N"
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <zmq.hpp>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 100000;
  const std::string endpoint = "ipc:///tmp/vtime-bench-zmq-" + std::to_string(getpid());
  const std::string request(260, 'r'), reply(120, 'a');
  pid_t child = fork();
  if (child == 0) {
    zmq::context_t ctx;
    zmq::socket_t rep(ctx, zmq::socket_type::rep);
    rep.bind(endpoint);
    for (long i = 0; i < n; ++i) {
      zmq::message_t m;
      if (!rep.recv(m)) return 1;
      rep.send(zmq::buffer(reply));
    }
    return 0;
  }
  zmq::context_t ctx;
  zmq::socket_t req(ctx, zmq::socket_type::req);
  req.connect(endpoint);
  // The first exchange waits for the child to bind: not timed.
  req.send(zmq::buffer(request));
  zmq::message_t m;
  if (!req.recv(m)) return 1;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 1; i < n; ++i) {
    req.send(zmq::buffer(request));
    if (!req.recv(m)) return 1;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int status = 0;
  waitpid(child, &status, 0);
  unlink(endpoint.c_str() + 6);  // the ipc socket file the child bound (ZeroMQ leaves it behind)
  std::printf("us_per_round_trip %.2f\n", s * 1e6 / static_cast<double>(n - 1));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
