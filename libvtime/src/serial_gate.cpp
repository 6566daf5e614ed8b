// The shim's side of the serial gate (see serial_gate.h).
#include <vtime/internal/serial_gate.h>

#include <vtime/internal/futex.h>
#include "libc.h"

#include <vector>

#include <cerrno>

namespace vtime::detail {

bool serial_hold(ProcessContext& c) {
  auto& h = c.seg->header;
  if (h.serial.load(std::memory_order_acquire) == 0) return false;
  if (h.serial_active.load(std::memory_order_acquire) == c.pid) return false;
  int saved_errno = errno;
  auto& held = c.seg->processes[c.proc_index].held;
  held.fetch_add(1, std::memory_order_acq_rel);
  notify_activity(*c.seg);
  for (;;) {
    // The word before the check: a hand-over between the two bumps it, and the wait returns.
    uint32_t word = h.serial_word.load(std::memory_order_acquire);
    if (h.serial_active.load(std::memory_order_acquire) == c.pid || h.serial.load(std::memory_order_acquire) == 0) break;
    // A heartbeat, as every wait of the shim has: a session whose owner died ends the process.
    timespec heartbeat{1, 0};
    if (futex_wait(&h.serial_word, word, &heartbeat) == ETIMEDOUT && !owner_alive(c)) die_owner_gone(c);
  }
  held.fetch_sub(1, std::memory_order_acq_rel);
  notify_activity(*c.seg);
  errno = saved_errno;
  return true;
}

int refresh_poll(pollfd* fds, nfds_t nfds, int held_result) {
  int saved_errno = errno;
  std::vector<short> held(nfds);
  for (nfds_t i = 0; i < nfds; ++i) held[i] = fds[i].revents;
  int n = libc().poll(fds, nfds, 0);
  if (n <= 0) {
    for (nfds_t i = 0; i < nfds; ++i) fds[i].revents = held[i];
    n = held_result;
  }
  errno = saved_errno;
  return n;
}

}  // namespace vtime::detail
