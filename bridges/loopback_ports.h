// Free loopback ports for the daemons of a bridge scheduler.
//
// What it is for: a bridge runs real daemons that listen on TCP ports (Slurm's controller and
// nodes, etcd, kube-apiserver). Parallel runs on one machine must not collide, so each run looks
// for its own run of free ports, starting at a place that depends on its pid.
//
// Example:
//     int base = find_loopback_ports(17);   // base .. base+16 are free now
#pragma once

namespace vtime::bridges {

// True when a TCP socket can bind 127.0.0.1:port right now.
bool loopback_port_free(int port);
// True when something accepts TCP connections on 127.0.0.1:port (a daemon is listening).
bool loopback_port_answers(int port);

// The first port of a run of `count` consecutive free loopback ports outside the kernel's
// ephemeral range (below it: 10000-32767 by default), where the daemons' own outgoing connections
// cannot take them before they are bound. Throws std::runtime_error when none is found. Ports
// never reach Batsim or the outputs.
int find_loopback_ports(int count);

}  // namespace vtime::bridges
