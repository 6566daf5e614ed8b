// Driving a child program under a vtime session from a benchmark process, the way `vtime exec`
// does, without depending on the vtime binary.
//
// Example:
//     auto session = vtime::Session::create();
//     ... start `child` with VTIME_SESSION=session.attach_spec() and LD_PRELOAD=bench::shim_path() ...
//     bench::drive_until_exit(session, child, bench::raw_monotonic_ns() + 50'000'000'000);
#pragma once

#include <vtime/session.h>

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace bench {

// libvtime-shim.so: $VTIME_SHIM, else the one built with the benchmarks.
std::string shim_path();

// The controller loop of `vtime exec` (wait_idle -> next_deadline -> advance_to) until the child
// exits (it is not reaped) or the real-time deadline passes.
void drive_until_exit(vtime::Session& session, pid_t child, int64_t deadline_ns);

}  // namespace bench
