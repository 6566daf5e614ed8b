// C API: clock reads (clock_gettime, gettimeofday, time, timespec_get, clock_getres).
#include <vtime/vtime.h>

#include "clock_stats.h"
#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include "libc.h"

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {
// A clock read the program asked for: counted for decision traces (waits read now() uncounted).
inline TimePoint read_now(ProcessContext& c) {
  TimePoint t = now(c);
  if (charge_call(c, t.ns())) [[unlikely]] t = now(c);  // --cpu-model calls: paid, time moved
  count_clock_read(c, t.ns());
  return t;
}
}  // namespace

extern "C" {

int vtime_active(void) { return context() != nullptr ? 1 : 0; }

// Exported by the shim too (its other vtime_* names are hidden): schedulers find it with dlsym.
__attribute__((visibility("default"))) int vtime_request_tick(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  c->seg->header.tick_requests.fetch_add(1, std::memory_order_acq_rel);
  // Also activity: a controller deciding idleness right now must look again.
  notify_activity(*c->seg);
  return 0;
}

__attribute__((visibility("default"))) int vtime_ticks_on_request(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  c->seg->header.ticks_on_request_only.store(1, std::memory_order_release);
  return 0;
}

__attribute__((visibility("default"))) int vtime_serialize(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  // Never back from threads to processes: programs started since have their futex waits stopped.
  uint32_t off = 0;
  c->seg->header.serial.compare_exchange_strong(off, abi::kSerialProcesses, std::memory_order_acq_rel);
  return 0;
}

__attribute__((visibility("default"))) int vtime_serialize_threads(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  c->seg->header.serial.store(abi::kSerialThreads, std::memory_order_release);
  return 0;
}

__attribute__((visibility("default"))) int vtime_cpu_model(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  return static_cast<int>(c->seg->header.cpu_model.load(std::memory_order_acquire));
}

int vtime_clock_gettime(clockid_t clk, struct timespec* ts) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_gettime(clk, ts);
  if (!ts) {
    errno = EFAULT;
    return -1;
  }
  *ts = to_clock(*c, clk, read_now(*c));
  return 0;
}

int vtime_clock_getres(clockid_t clk, struct timespec* res) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_getres(clk, res);
  if (res) *res = timespec{0, 1};
  return 0;
}

int vtime_gettimeofday(struct timeval* tv, void* tz) {
  ProcessContext* c = context();
  if (!c) return libc().gettimeofday(tv, tz);
  if (tv) *tv = to_timeval(from_timespec(to_clock(*c, CLOCK_REALTIME, read_now(*c))));
  if (tz) {
    auto* z = static_cast<struct timezone*>(tz);
    z->tz_minuteswest = 0;
    z->tz_dsttime = 0;
  }
  return 0;
}

time_t vtime_time(time_t* out) {
  ProcessContext* c = context();
  if (!c) return libc().time(out);
  time_t t = to_clock(*c, CLOCK_REALTIME, read_now(*c)).tv_sec;
  if (out) *out = t;
  return t;
}

int vtime_timespec_get(struct timespec* ts, int base) {
  ProcessContext* c = context();
  if (!c) return libc().timespec_get(ts, base);
  if (base != TIME_UTC) return 0;
  *ts = to_clock(*c, CLOCK_REALTIME, read_now(*c));
  return base;
}

}  // extern "C"
