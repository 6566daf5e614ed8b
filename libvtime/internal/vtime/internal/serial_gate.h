// The serial gate for threads under the shim (abi::Header::serial; docs/design.md "Serialised
// processes"; the tracer holds traced threads itself, tracer/serial_gate.cpp).
#pragma once

#include <vtime/internal/context.h>

#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cstddef>

namespace vtime::detail {

// Called where an fd wait (poll, select, epoll) saw a descriptor ready, before the program
// learns of it: returns at once (false) unless the gate is on and another process has the
// tree; then sleeps until the controller hands the tree to this process, so that what it reads
// was all sent by processes that have stopped, and returns true. The wait's result was taken
// when it woke, while the process that woke it may still have been writing (one descriptor
// ready or two, depending on real time): after a hold, look again (refresh_poll,
// merge_epoll_events).
bool serial_hold(ProcessContext& c);

// After a hold, a poll's result afresh (descriptors seen ready stay so unless another thread
// took their data): what is ready now, or the held result if nothing is.
int refresh_poll(pollfd* fds, nfds_t nfds, int held_result);

// An epoll wait's `n` events followed by `m` more from a second, non-blocking call after a
// hold: a level-triggered descriptor is reported by both; one entry each, as one call gives
// them (the program tells them apart by their data), flags merged. Returns the entries kept.
// Shared by the shim and the tracer (which copies the events out of the traced process).
inline size_t merge_epoll_events(epoll_event* ev, size_t n, size_t m) {
  size_t kept = n;
  for (size_t i = n; i < n + m; ++i) {
    epoll_event* end = ev + kept;
    epoll_event* same = std::find_if(ev, end, [&](const epoll_event& e) { return e.data.u64 == ev[i].data.u64; });
    if (same != end) {
      same->events |= ev[i].events;
    } else {
      ev[kept++] = ev[i];
    }
  }
  return kept;
}

}  // namespace vtime::detail
