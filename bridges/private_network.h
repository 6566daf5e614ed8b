// A private loopback for the daemons a bridge starts, where TCP acknowledges at once.
//
// On the host's loopback the kernel delays an acknowledgement by up to 40-200 ms of *real* time
// (delayed ACK), and the sender's tail-loss probe re-sends a segment when an acknowledgement is
// late. Under vtime a receiver held for its turn reads nothing while the sender's timers run in
// real time, so when a sender's buffer empties, when it may write again and what it re-sends
// depended on how fast the machine was: two vtime-k8s runs of one workload ended in one of three
// schedules (docs/k8s.md "Determinism"). In a network namespace of its own the run's loopback
// routes carry the `quickack` attribute (as `ip route ... quickack 1` sets): every segment is
// acknowledged as it arrives, in the sender's own system call, and no real-time timer of TCP
// fires. The run's ports cannot collide with anything else on the machine either.
//
// Needs CAP_SYS_ADMIN (root); without it, a new user namespace is tried, which the kernel allows
// only in a process that has no other thread yet. Otherwise the caller goes on with the host's
// network and says so. Only the calling thread and the children it makes afterwards change
// network: sockets and threads made before (vtime-k8s's ZeroMQ ones) keep the host's.
//
// Example:
//     auto net = bridges::enter_private_network();
//     if (net.where == bridges::Network::kBroken) return fail(net.why);
//     if (net.where == bridges::Network::kHost) fprintf(stderr, "warning: %s\n", net.why.c_str());
#pragma once

#include <optional>
#include <string>

namespace vtime::bridges {

struct Network {
  enum Where {
    kPrivate,  // a namespace of its own, loopback up, acknowledging at once (`why` may say what of
               // that failed: quickack, then the run works but is not protected from the timers)
    kHost,     // no namespace could be made: still on the host's network (`why` says why)
    kBroken,   // in a new namespace whose loopback could not be brought up (`why`)
  } where;
  std::string why;
};

// Moves the calling process (and every child it makes from now on) into a new network namespace
// whose loopback is up and acknowledges at once.
Network enter_private_network();

// Gives the calling thread (and every child it makes from now on) a UTS namespace of its own
// whose host name is `name`: a Go program's behaviour depends on the length of the host name it
// reads (kube-scheduler puts it in every event it writes; docs/k8s.md "Determinism"), which
// differs between machines. Needs CAP_SYS_ADMIN, as root or in the user namespace
// enter_private_network() made. Returns why it could not, or nothing.
std::optional<std::string> enter_private_hostname(const std::string& name);

}  // namespace vtime::bridges
