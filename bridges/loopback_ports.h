// Free loopback ports for the daemons of a bridge scheduler.
//
// What it is for: a bridge runs real daemons that listen on TCP ports (Slurm's controller and
// nodes, etcd, kube-apiserver). The ports travel in the daemons' requests (HTTP/2 :authority,
// compressed with HPACK's Huffman code, whose length depends on the digits): runs that used
// different ports exchanged frames of different lengths, and the flow-control updates and
// frame interleavings that follow from those lengths differed too. So every run takes the same
// block when it can: the search starts at the same place, and a block is reserved (an abstract
// Unix socket named after it, held while the reservation lives) so that parallel runs on one
// machine still take different blocks.
//
// Example:
//     LoopbackPorts ports(17);   // ports.base() .. ports.base()+16 are free and ours
#pragma once

#include <vector>

namespace vtime::bridges {

// True when a TCP socket can bind 127.0.0.1:port right now; with `reuse_address`, as a socket
// with SO_REUSEADDR can (a port whose last connections are in TIME_WAIT is free to such
// daemons: Go's listeners set it).
bool loopback_port_free(int port, bool reuse_address = false);
// True when something accepts TCP connections on 127.0.0.1:port (a daemon is listening).
bool loopback_port_answers(int port);

// A run of `count` consecutive free loopback ports outside the kernel's ephemeral range (below
// it: 10000-32767 by default), where the daemons' own outgoing connections cannot take them
// before they are bound, reserved against other runs for the object's lifetime. Throws
// std::runtime_error when none is found. Ports never reach Batsim or the outputs.
// `reuse_address`: the daemons bind with SO_REUSEADDR (etcd, the Kubernetes components), so a run
// right after another gets the same block; Slurm's daemons are checked without it.
class LoopbackPorts {
 public:
  explicit LoopbackPorts(int count, bool reuse_address = false);
  ~LoopbackPorts();
  LoopbackPorts(LoopbackPorts&& o) noexcept;
  LoopbackPorts& operator=(LoopbackPorts&& o) noexcept;
  LoopbackPorts(const LoopbackPorts&) = delete;
  LoopbackPorts& operator=(const LoopbackPorts&) = delete;
  int base() const { return base_; }

 private:
  void release();
  int base_ = 0;
  std::vector<int> locks_;  // the reservation's sockets
};

}  // namespace vtime::bridges
