// Slots of process-owned timers (see timer_slots.h).
#include <vtime/internal/timer_slots.h>

#include <vtime/internal/slots.h>
#include <vtime/internal/waits.h>

namespace vtime::detail {

void arm_timer_slot(abi::Segment& seg, uint32_t slot, TimePoint deadline, bool realtime, int64_t shift) {
  auto& s = seg.waiters[slot];
  s.deadline.store(deadline.ns(), std::memory_order_relaxed);
  s.early_ns.store(0, std::memory_order_relaxed);  // Linux arms timers without slack
  mark_realtime(s, realtime, shift);
  s.seq.store(seg.header.next_seq.fetch_add(1), std::memory_order_relaxed);
  s.state.store(abi::kWaiting, std::memory_order_release);
  settle_realtime(seg, s);
  notify_activity(seg);
}

void disarm_timer_slot(abi::Segment& seg, uint32_t slot) {
  auto& s = seg.waiters[slot];
  s.state.store(abi::kClaimed, std::memory_order_release);
  s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
  notify_activity(seg);
}

uint64_t fire_timer_slot(abi::Segment& seg, uint32_t slot, int64_t interval_ns, TimePoint now) {
  auto& s = seg.waiters[slot];
  int64_t due = s.deadline.load();
  if (interval_ns <= 0) {
    disarm_timer_slot(seg, slot);
    return 1;
  }
  uint64_t count = static_cast<uint64_t>((now.ns() - due) / interval_ns) + 1;
  arm_timer_slot(seg, slot, TimePoint::from_ns(due) + nanoseconds(interval_ns) * static_cast<int64_t>(count),
                 s.realtime_abs.load() != 0, s.shift_at.load());
  return count;
}

itimerspec timer_slot_value(const abi::Segment& seg, uint32_t slot, int64_t interval_ns, TimePoint now) {
  itimerspec v{};
  auto& s = seg.waiters[slot];
  uint32_t st = s.state.load();
  if (st == abi::kWaiting || st == abi::kWoken || st == abi::kWaking) {
    Duration left = TimePoint::from_ns(s.deadline.load()) - now;
    if (left <= Duration::zero()) left = nanoseconds(1);
    v.it_value = to_timespec(left);
  }
  v.it_interval = to_timespec(nanoseconds(interval_ns));
  return v;
}

bool valid_itimerspec(const itimerspec& v) {
  return v.it_value.tv_nsec >= 0 && v.it_value.tv_nsec < 1000000000L && v.it_interval.tv_nsec >= 0 &&
         v.it_interval.tv_nsec < 1000000000L && v.it_value.tv_sec >= 0 && v.it_interval.tv_sec >= 0;
}

namespace {
constexpr time_t kSecondsCap = 4000000000;
}  // namespace

itimerspec bounded(itimerspec v) {
  for (timespec* t : {&v.it_value, &v.it_interval}) {
    if (t->tv_sec > kSecondsCap) *t = timespec{kSecondsCap, 0};
  }
  return v;
}

itimerval bounded(itimerval v) {
  for (timeval* t : {&v.it_value, &v.it_interval}) {
    if (t->tv_sec > kSecondsCap) *t = timeval{kSecondsCap, 0};
  }
  return v;
}

unsigned alarm_seconds_left(const itimerval& old) {
  unsigned r = static_cast<unsigned>(old.it_value.tv_sec + (old.it_value.tv_usec >= 500000 ? 1 : 0));
  if (r == 0 && old.it_value.tv_usec > 0) r = 1;
  return r;
}

}  // namespace vtime::detail
