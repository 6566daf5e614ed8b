#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <cstring>
#include <zmq.hpp>

#include "vtime/sim/peer.h"

namespace vtime::sim {

namespace {
std::atomic<int> g_stop{0};
extern "C" void on_stop_signal(int sig) { g_stop.store(sig); }
// Poll slices: short enough that a signal ends the wait promptly, long enough to cost nothing.
constexpr std::chrono::milliseconds kSlice{100};
}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked poll returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return g_stop.load(); }

struct ZmqPeer::Impl {
  zmq::context_t ctx{1};
  zmq::socket_t sock{ctx, zmq::socket_type::req};
  // ZeroMQ's socket monitor: tells when the scheduler's socket was reached and when it went away
  // (the process exited or closed it), which is how a dead scheduler is told from a slow one.
  zmq::socket_t monitor{ctx, zmq::socket_type::pair};
  bool connected = false;
  // Stop the monitor and read what it still holds before the sockets close: libzmq leaks an event
  // left in flight otherwise (seen by LeakSanitizer).
  ~Impl() {
    zmq_socket_monitor(sock.handle(), nullptr, 0);
    monitor.set(zmq::sockopt::linger, 0);
    zmq::message_t m;
    while (monitor.recv(m, zmq::recv_flags::dontwait)) {
    }
  }
};

ZmqPeer::ZmqPeer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ZmqPeer::~ZmqPeer() = default;

protocol::Result<std::unique_ptr<ZmqPeer>> ZmqPeer::connect(const std::string& endpoint) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->sock.set(zmq::sockopt::linger, 0);  // never hang at exit on an undelivered message
    std::string monitor = "inproc://vtime-sim-monitor-" + std::to_string(reinterpret_cast<uintptr_t>(impl.get()));
    if (zmq_socket_monitor(impl->sock.handle(), monitor.c_str(), ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED) != 0)
      throw zmq::error_t();
    impl->monitor.connect(monitor);
    impl->sock.connect(endpoint);
    return std::unique_ptr<ZmqPeer>(new ZmqPeer(std::move(impl)));
  } catch (const zmq::error_t& e) {
    return protocol::Error{"cannot connect to '" + endpoint + "': " + e.what()};
  }
}

namespace {
// How long a wait watches the socket before sleeping in poll: most replies come within tens of
// microseconds, and being woken from poll by our own I/O thread (often on a vcpu woken from its
// halt) costs about as much again on a virtual machine
// (docs/performance.md, "The broker (vtime run)").
constexpr std::chrono::microseconds kWatch{50};
// How long a reply may take to come out of ZeroMQ once its sender has disconnected.
constexpr std::chrono::milliseconds kGrace{500};

enum class Wait { ready, stopped, gone };

// Reads the monitor's pending events: false once the scheduler's socket went away.
bool peer_still_there(ZmqPeer::Impl& p);

// Waits until `events` is possible on the socket: stopped when a stop signal arrived, gone when
// the scheduler disconnected and no reply came within a grace period.
Wait wait_for(ZmqPeer::Impl& p, short events) {
  zmq::socket_t& s = p.sock;
  const auto watch_until = std::chrono::steady_clock::now() + kWatch;
  while (std::chrono::steady_clock::now() < watch_until) {
    if (s.get(zmq::sockopt::events) & events) return Wait::ready;
    sched_yield();
  }
  for (;;) {
    if (g_stop.load() != 0) return Wait::stopped;
    zmq::pollitem_t item{s.handle(), 0, events, 0};
    try {
      if (zmq::poll(&item, 1, kSlice) > 0) return Wait::ready;
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      continue;
    }
    // Between slices (not in every poll: a second socket there costs each message), the monitor.
    if (events == ZMQ_POLLIN && !peer_still_there(p)) {
      // A reply sent just before the exit may still be on its way through ZeroMQ's I/O thread.
      zmq::pollitem_t last{s.handle(), 0, events, 0};
      if (zmq::poll(&last, 1, kGrace) > 0) return Wait::ready;
      return Wait::gone;
    }
  }
}

bool peer_still_there(ZmqPeer::Impl& p) {
  bool there = true;
  for (;;) {
    zmq::message_t event, address;
    if (!p.monitor.recv(event, zmq::recv_flags::dontwait)) break;
    if (event.more()) (void)p.monitor.recv(address, zmq::recv_flags::dontwait);
    uint16_t id = 0;
    if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
    if (id == ZMQ_EVENT_CONNECTED) {
      p.connected = true;
      there = true;
    } else if (id == ZMQ_EVENT_DISCONNECTED) {
      there = !p.connected;  // only a scheduler that was reached can have gone away
      p.connected = false;
    }
  }
  return there;
}
}  // namespace

PeerStatus ZmqPeer::exchange(const std::string& request, std::string& reply) {
  try {
    if (wait_for(*impl_, ZMQ_POLLOUT) == Wait::stopped) return {PeerStatus::interrupted, g_stop.load(), {}};
    impl_->sock.send(zmq::buffer(request), zmq::send_flags::dontwait);
    switch (wait_for(*impl_, ZMQ_POLLIN)) {
      case Wait::stopped: return {PeerStatus::interrupted, g_stop.load(), {}};
      case Wait::gone:
        return {PeerStatus::failed, 0,
                "the scheduler disconnected without replying (it exited, crashed or closed its socket)"};
      case Wait::ready: break;
    }
    zmq::message_t msg;
    if (!impl_->sock.recv(msg, zmq::recv_flags::dontwait)) return {PeerStatus::failed, 0, "no reply despite readiness"};
    reply.assign(static_cast<const char*>(msg.data()), msg.size());
    return {};
  } catch (const zmq::error_t& e) {
    return {PeerStatus::failed, 0, e.what()};
  }
}

}  // namespace vtime::sim
