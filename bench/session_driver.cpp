// The `vtime exec` controller loop for benchmarks (see session_driver.h).
#include "session_driver.h"

#include "child_process.h"
#include "raw_clock.h"

#include <vtime/controller.h>

#include <unistd.h>

#include <cstdlib>

namespace bench {

std::string shim_path() {
  const char* env = getenv("VTIME_SHIM");
  return env && *env ? std::string(env) : std::string(VTIME_SHIM_PATH);
}

void drive_until_exit(vtime::Session& session, pid_t child, int64_t deadline_ns) {
  vtime::Controller ctl(session, child);
  auto stop = [&] { return child_exited(child) || raw_monotonic_ns() > deadline_ns; };
  while (!stop()) {
    if (ctl.wait_idle(stop) != vtime::IdleResult::kIdle) break;
    auto next = ctl.next_deadline();
    if (!next) {
      usleep(1000);  // blocked with no virtual deadline: only the real-time limit ends it
      continue;
    }
    vtime::TimePoint now = session.now();
    ctl.advance_step(*next > now ? *next : now);
  }
}

}  // namespace bench
