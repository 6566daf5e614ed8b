#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
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
};

ZmqPeer::ZmqPeer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ZmqPeer::~ZmqPeer() = default;

protocol::Result<std::unique_ptr<ZmqPeer>> ZmqPeer::connect(const std::string& endpoint) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->sock.set(zmq::sockopt::linger, 0);  // never hang at exit on an undelivered message
    impl->sock.connect(endpoint);
    return std::unique_ptr<ZmqPeer>(new ZmqPeer(std::move(impl)));
  } catch (const zmq::error_t& e) {
    return protocol::Error{"cannot connect to '" + endpoint + "': " + e.what()};
  }
}

namespace {
// How long a wait watches the socket before sleeping in poll: most replies come within tens of
// microseconds, and being woken from poll by our own I/O thread (often on a vcpu woken from its
// halt) costs about as much again on a virtual machine (docs/performance.md, session 13).
constexpr std::chrono::microseconds kWatch{50};

// Waits until `events` is possible on the socket; false when a stop signal arrived.
bool wait_for(zmq::socket_t& s, short events) {
  const auto watch_until = std::chrono::steady_clock::now() + kWatch;
  while (std::chrono::steady_clock::now() < watch_until) {
    if (s.get(zmq::sockopt::events) & events) return true;
    sched_yield();
  }
  for (;;) {
    if (g_stop.load() != 0) return false;
    zmq::pollitem_t item{s.handle(), 0, events, 0};
    try {
      if (zmq::poll(&item, 1, kSlice) > 0) return true;
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}
}  // namespace

PeerStatus ZmqPeer::exchange(const std::string& request, std::string& reply) {
  try {
    if (!wait_for(impl_->sock, ZMQ_POLLOUT)) return {PeerStatus::interrupted, g_stop.load(), {}};
    impl_->sock.send(zmq::buffer(request), zmq::send_flags::dontwait);
    if (!wait_for(impl_->sock, ZMQ_POLLIN)) return {PeerStatus::interrupted, g_stop.load(), {}};
    zmq::message_t msg;
    if (!impl_->sock.recv(msg, zmq::recv_flags::dontwait)) return {PeerStatus::failed, 0, "no reply despite readiness"};
    reply.assign(static_cast<const char*>(msg.data()), msg.size());
    return {};
  } catch (const zmq::error_t& e) {
    return {PeerStatus::failed, 0, e.what()};
  }
}

}  // namespace vtime::sim
