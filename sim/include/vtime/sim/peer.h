// Peer: the scheduler side of vtime sim's conversation, one strict request/reply at a time
// (Batsim's REQ socket connected to the scheduler's REP socket).
//
// ZmqPeer waits for replies in short polls so SIGINT/SIGTERM end the wait cleanly. There is no
// receive timeout, because a scheduler may legitimately think for a long time; but a scheduler
// that disconnects (exits, crashes, closes its socket) while a reply is due ends the wait with
// `failed` (ZeroMQ's socket monitor sees the connection go).
//
// Example:
//     install_stop_signals();                       // SIGINT/SIGTERM interrupt exchange()
//     auto peer = ZmqPeer::connect("ipc:///tmp/x/sched.sock");
//     std::string reply;
//     PeerStatus st = (*peer)->exchange(request, reply);
#pragma once

#include <memory>
#include <string>

#include "vtime/protocol/result.h"

namespace vtime::sim {

struct PeerStatus {
  enum Kind { ok, interrupted, failed } kind = ok;
  int signal = 0;        // interrupted: the signal number
  std::string error;     // failed: why
};

class Peer {
 public:
  virtual ~Peer() = default;
  // Sends `request` and waits for the whole reply.
  virtual PeerStatus exchange(const std::string& request, std::string& reply) = 0;
};

class ZmqPeer : public Peer {
 public:
  struct Impl;
  // Fails only on an invalid endpoint; connecting itself is asynchronous in ZeroMQ.
  static protocol::Result<std::unique_ptr<ZmqPeer>> connect(const std::string& endpoint);
  ~ZmqPeer() override;
  PeerStatus exchange(const std::string& request, std::string& reply) override;

 private:
  explicit ZmqPeer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Installs SIGINT/SIGTERM handlers (no SA_RESTART) that make a pending exchange() return
// `interrupted`. Returns the signal received so far, 0 if none.
void install_stop_signals();
int stop_signal();

}  // namespace vtime::sim
