// Capabilities of a thread, as the kernel checks them (capget(2)). Async-signal-safe: a forked
// child installing its seccomp filters asks too.
#pragma once

#include <vtime/internal/futex.h>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/types.h>

namespace vtime::detail {

// Capability `cap` in the effective (or, with `permitted`, the permitted) set of thread `tid`
// (0: the calling thread).
inline bool has_capability(pid_t tid, int cap, bool permitted = false) {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, tid};
  __user_cap_data_struct data[2] = {};
  if (raw_syscall6(SYS_capget, reinterpret_cast<long>(&hdr), reinterpret_cast<long>(data), 0, 0, 0, 0) != 0) {
    return false;
  }
  uint32_t set = permitted ? data[cap / 32].permitted : data[cap / 32].effective;
  return (set & (1u << (cap % 32))) != 0;
}

}  // namespace vtime::detail
