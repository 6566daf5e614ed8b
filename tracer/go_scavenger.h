// Go's background scavenger kept from waking the program (docs/tracer.md "Go's scavenger").
//
// Why: after each collection Go's runtime returns free memory to the kernel in a goroutine of
// its own that works about 1% of the time and sleeps in between on a runtime timer, one of the
// network poller's like the program's. Under a frozen clock its work costs nothing, so it
// counts 10 us per page released and sleeps that over its share: 1.4-5 ms at instants that
// are not whole milliseconds, which Go's poller then rounds to whole ones, where the programs'
// own events fall. How much memory there is to release follows which goroutine allocated what
// in what order within an instant, which vtime leaves to Go, so the chain of wake-ups (how
// many, when) differed between two runs of the same Kubernetes control plane (etcd's scavenger
// had released 2,344 KiB in one run and 2,368 KiB in the other by its 34th collection, and the
// traces parted). Go 1.19 has no setting that turns it off.
//
// What it does: at the exec stop of a Go program the tracer finds
// `runtime.(*scavengerState).run` (Go 1.19 and later; the scavenger's one round of work, whose
// results are the bytes released and the work's duration) and makes it return (0, 0) at once:
// the scavenger then parks until the next collection's sweep wakes it, finds nothing again, and
// never arms its timer. Nothing the program computes depends on it; the cost is memory freed by
// the collector staying mapped (the heap's peak, which the runtime reuses) instead of going
// back to the kernel between collections. An executable without that function is left alone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace vtime::tracer {

// Finds the scavenger's round of work in executable `exe` (which process `pid` has just executed)
// and overwrites its start with `xor eax,eax; xorps xmm0,xmm0; ret` (Go's register ABI returns the
// bytes released in RAX, the work in X0). False, with `why`, when not found or not written.
bool park_go_scavenger(pid_t pid, const std::string& exe, std::string& why);

}  // namespace vtime::tracer
