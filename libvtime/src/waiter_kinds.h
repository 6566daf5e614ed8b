// Small facts about waiter slots and blocked threads that more than one of the controller's
// parts needs (controller.cpp, go_sysmon.cpp).
#pragma once

#include <vtime/abi.h>

#include <cstdint>
#include <cstdlib>

namespace vtime::detail {

// A language runtime's own wait (abi::kTracerHousekeeping): serviced when time moves anyway.
inline bool housekeeping(const abi::WaiterSlot& w) {
  return w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
         (w.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerHousekeeping) != 0;
}

// A /proc/TID/syscall line of a blocked thread: its call's number and six arguments.
struct SyscallLine {
  long nr = -1;
  uint64_t a[6] = {};
};
// False for "running" (or an unreadable line).
inline bool parse_syscall_line(const char* line, SyscallLine& out) {
  if (*line < '0' || *line > '9') return false;
  char* end = nullptr;
  out.nr = strtol(line, &end, 10);
  for (auto& v : out.a) v = strtoull(end, &end, 16);
  return true;
}

}  // namespace vtime::detail
