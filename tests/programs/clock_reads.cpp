// clock_reads: every way of reading the time agrees with every other, and advances by exactly
// the time slept under virtual time.
//  1. All clock ids (REALTIME, REALTIME_COARSE, TAI, MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE,
//     BOOTTIME): each advances by exactly one unit across a one-unit sleep; REALTIME - MONOTONIC
//     and TAI - REALTIME stay constant; under virtual time the clocks of one family are equal.
//  2. gettimeofday, time(), timespec_get, std::chrono::{system,steady,high_resolution}_clock
//     agree with clock_gettime (virtual: exactly, read at one frozen instant; native: in order).
//  3. syscall(SYS_clock_gettime / SYS_gettimeofday / SYS_time) agree with the libc calls;
//     syscall(SYS_nanosleep / SYS_clock_nanosleep) sleep exactly like them.
//  4. CPU-time clocks pass through: real CPU work advances them while (virtual) wall clocks
//     stay frozen.
#include "check.h"

#include <pthread.h>
#include <sys/syscall.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>

namespace {

struct ClockId {
  const char* name;
  clockid_t id;
  bool realtime_family;  // epoch + now; otherwise origin + now
  bool coarse;
};

constexpr std::array<ClockId, 7> kClocks{{
    {"REALTIME", CLOCK_REALTIME, true, false},
    {"REALTIME_COARSE", CLOCK_REALTIME_COARSE, true, true},
    {"TAI", CLOCK_TAI, true, false},
    {"MONOTONIC", CLOCK_MONOTONIC, false, false},
    {"MONOTONIC_RAW", CLOCK_MONOTONIC_RAW, false, false},
    {"MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE, false, true},
    {"BOOTTIME", CLOCK_BOOTTIME, false, false},
}};
constexpr size_t kReal = 0, kTai = 2, kMono = 3;

using Snapshot = std::array<int64_t, kClocks.size()>;

Snapshot snapshot() {
  Snapshot s{};
  for (size_t i = 0; i < kClocks.size(); ++i) s[i] = vt_now(kClocks[i].id);
  return s;
}

int64_t coarse_resolution() {
  struct timespec res;
  SYS(clock_getres(CLOCK_MONOTONIC_COARSE, &res));
  return vt_ts_ns(res);
}

void clock_ids(int64_t unit) {
  for (const ClockId& c : kClocks) {
    struct timespec res;
    CHECK_EQ(clock_getres(c.id, &res), 0);
    CHECK(vt_ts_ns(res) > 0);
  }
  const Snapshot s0 = snapshot();
  vt_sleep(unit);
  const Snapshot s1 = snapshot();
  const int64_t coarse = coarse_resolution();
  for (size_t i = 0; i < kClocks.size(); ++i) {
    const ClockId& c = kClocks[i];
    const int64_t delta = s1[i] - s0[i];
    printf("  %-17s advanced %lld ns over a one-unit sleep\n", c.name,
           static_cast<long long>(delta));
    if (vt_virtual()) {
      CHECK_EQ(delta, unit);
      // One frozen instant: the clocks of one family read the same value.
      CHECK_EQ(s0[i], c.realtime_family ? s0[kReal] : s0[kMono]);
    } else {
      // Natively the coarse clocks lag by up to a tick, and MONOTONIC_RAW is not slewed.
      const int64_t slack = c.coarse ? 2 * coarse : VT_NS_PER_MS;
      CHECK(delta >= unit - slack);  // late by any amount under load
    }
  }
  const int64_t drift_real_mono = (s1[kReal] - s1[kMono]) - (s0[kReal] - s0[kMono]);
  const int64_t drift_tai_real = (s1[kTai] - s1[kReal]) - (s0[kTai] - s0[kReal]);
  printf("  REALTIME - MONOTONIC moved %lld ns; TAI - REALTIME = %lld ns, moved %lld ns\n",
         static_cast<long long>(drift_real_mono), static_cast<long long>(s0[kTai] - s0[kReal]),
         static_cast<long long>(drift_tai_real));
  if (vt_virtual()) {
    CHECK_EQ(drift_real_mono, 0);
    CHECK_EQ(drift_tai_real, 0);
  } else {
    // Sequential reads: preemption between them shows up here, nothing else should.
    CHECK(std::llabs(drift_real_mono) <= 50 * VT_NS_PER_MS);
    CHECK(std::llabs(drift_tai_real) <= 50 * VT_NS_PER_MS);
  }
}

// `value` (in ns, truncated to `granularity`) was read between `before` and `after`.
void check_between(const char* what, int64_t before, int64_t value, int64_t after,
                   int64_t granularity) {
  const bool ok = vt_virtual()
                      ? value == before / granularity * granularity && after == before
                      : value >= before / granularity * granularity && value <= after;
  if (!ok) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %lld not within [%lld, %lld] (granularity %lld ns)", what,
             static_cast<long long>(value), static_cast<long long>(before),
             static_cast<long long>(after), static_cast<long long>(granularity));
    vt_fail(__FILE__, __LINE__, msg);
  }
}

void libc_and_chrono(int64_t unit) {
  using namespace std::chrono;
  int64_t before = vt_real();
  struct timeval tv;
  SYS(gettimeofday(&tv, nullptr));
  int64_t after = vt_real();
  check_between("gettimeofday", before, vt_tv_ns(tv), after, VT_NS_PER_US);

  // time() reads the coarse clock natively: it may lag REALTIME by a tick, so the second it
  // shows can be the previous one.
  before = vt_real();
  time_t stored = 0;
  const time_t t = time(&stored);
  after = vt_real();
  CHECK_EQ(t, stored);
  if (vt_virtual()) {
    check_between("time", before, t * VT_NS_PER_SEC, after, VT_NS_PER_SEC);
  } else {
    CHECK(t >= before / VT_NS_PER_SEC - 1 && t <= after / VT_NS_PER_SEC);
  }

  before = vt_real();
  struct timespec ts;
  CHECK_EQ(timespec_get(&ts, TIME_UTC), TIME_UTC);
  after = vt_real();
  check_between("timespec_get", before, vt_ts_ns(ts), after, 1);

  before = vt_real();
  const int64_t sys = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
  const int64_t hr =
      duration_cast<nanoseconds>(high_resolution_clock::now().time_since_epoch()).count();
  after = vt_real();
  check_between("system_clock", before, sys, after, 1);
  check_between("high_resolution_clock", before, hr, after, 1);

  before = vt_mono();
  const int64_t steady = duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
  after = vt_mono();
  check_between("steady_clock", before, steady, after, 1);

  // Across a sleep, every one of them advances by exactly the time slept (virtual).
  const auto sys0 = system_clock::now();
  const auto steady0 = steady_clock::now();
  struct timeval tv0;
  SYS(gettimeofday(&tv0, nullptr));
  vt_sleep(unit);
  const auto sys1 = system_clock::now();
  const auto steady1 = steady_clock::now();
  struct timeval tv1;
  SYS(gettimeofday(&tv1, nullptr));
  const int64_t d_sys = duration_cast<nanoseconds>(sys1 - sys0).count();
  const int64_t d_steady = duration_cast<nanoseconds>(steady1 - steady0).count();
  printf("  system_clock advanced %lld ns, steady_clock %lld ns, gettimeofday %lld ns\n",
         static_cast<long long>(d_sys), static_cast<long long>(d_steady),
         static_cast<long long>(vt_tv_ns(tv1) - vt_tv_ns(tv0)));
  CHECK_ELAPSED(d_steady, unit);
  if (vt_virtual()) {
    CHECK_EQ(d_sys, unit);
    CHECK_EQ(vt_tv_ns(tv1) - vt_tv_ns(tv0), unit);
  }
}

void raw_syscalls(int64_t unit) {
  for (const clockid_t id : {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME}) {
    const int64_t before = vt_now(id);
    struct timespec ts;
    CHECK_EQ(syscall(SYS_clock_gettime, id, &ts), 0);
    const int64_t after = vt_now(id);
    check_between("syscall(SYS_clock_gettime)", before, vt_ts_ns(ts), after, 1);
  }
  int64_t before = vt_real();
  struct timeval tv;
  CHECK_EQ(syscall(SYS_gettimeofday, &tv, nullptr), 0);
  int64_t after = vt_real();
  check_between("syscall(SYS_gettimeofday)", before, vt_tv_ns(tv), after, VT_NS_PER_US);

  before = vt_real();
  const long t = syscall(SYS_time, nullptr);
  after = vt_real();
  if (vt_virtual()) {
    check_between("syscall(SYS_time)", before, t * VT_NS_PER_SEC, after, VT_NS_PER_SEC);
  } else {
    CHECK(t >= before / VT_NS_PER_SEC - 1 && t <= after / VT_NS_PER_SEC);
  }

  int64_t t0 = vt_mono();
  struct timespec req = vt_ts(unit);
  CHECK_EQ(syscall(SYS_nanosleep, &req, nullptr), 0);
  int64_t elapsed = vt_mono() - t0;
  printf("  syscall(SYS_nanosleep) slept %lld ns\n", static_cast<long long>(elapsed));
  CHECK_ELAPSED(elapsed, unit);

  // The raw clock_nanosleep system call returns the error number itself (negated by the
  // syscall() wrapper into -1/errno); 0 on success.
  t0 = vt_mono();
  req = vt_ts(vt_real() + unit);
  CHECK_EQ(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &req, nullptr), 0);
  elapsed = vt_mono() - t0;
  printf("  syscall(SYS_clock_nanosleep, REALTIME, ABSTIME) slept %lld ns\n",
         static_cast<long long>(elapsed));
  CHECK_ELAPSED(elapsed, unit);
}

void cpu_clocks() {
  clockid_t process_clock, thread_clock;
  PT(clock_getcpuclockid(getpid(), &process_clock));
  PT(pthread_getcpuclockid(pthread_self(), &thread_clock));
  const int64_t work = 20 * VT_NS_PER_MS;

  // Every other clock's window encloses the thread clock's (started before it, read after it),
  // so each must have seen at least the `work` the loop measured on the thread clock.
  const int64_t mono0 = vt_mono();
  const int64_t real0 = vt_real();
  const clock_t c0 = clock();
  const int64_t pid_clock0 = vt_now(process_clock);
  const int64_t by_id0 = vt_now(thread_clock);
  const int64_t process0 = vt_now(CLOCK_PROCESS_CPUTIME_ID);
  const int64_t thread0 = vt_now(CLOCK_THREAD_CPUTIME_ID);
  // Burn CPU until this thread's CPU clock has advanced by `work` (bounded, in case it never
  // does); reads only CPU clocks, so no spin rule of the virtual clock is involved.
  volatile uint64_t sink = 0;
  long spins = 0;
  while (vt_now(CLOCK_THREAD_CPUTIME_ID) - thread0 < work && spins < 200000000L) {
    for (int i = 0; i < 1000; ++i) sink = sink + static_cast<uint64_t>(i);
    ++spins;
  }
  const int64_t thread_d = vt_now(CLOCK_THREAD_CPUTIME_ID) - thread0;
  const int64_t process_d = vt_now(CLOCK_PROCESS_CPUTIME_ID) - process0;
  const int64_t by_id_d = vt_now(thread_clock) - by_id0;
  const int64_t pid_clock_d = vt_now(process_clock) - pid_clock0;
  const int64_t clock_d = static_cast<int64_t>(clock() - c0) * (VT_NS_PER_SEC / CLOCKS_PER_SEC);
  const int64_t mono_d = vt_mono() - mono0;
  const int64_t real_d = vt_real() - real0;
  printf("  CPU work: thread %lld ns, process %lld ns, clock() %lld ns; MONOTONIC moved %lld ns\n",
         static_cast<long long>(thread_d), static_cast<long long>(process_d),
         static_cast<long long>(clock_d), static_cast<long long>(mono_d));
  CHECK(thread_d >= work);
  CHECK(process_d >= work);
  CHECK(by_id_d >= work);
  CHECK(pid_clock_d >= work);
  CHECK(clock_d >= work - VT_NS_PER_MS);
  if (vt_virtual()) {
    // Time is frozen while threads compute.
    CHECK_EQ(mono_d, 0);
    CHECK_EQ(real_d, 0);
  } else {
    CHECK(mono_d >= thread_d - VT_NS_PER_MS);
  }
}

}  // namespace

int main() {
  vt_begin("clock_reads");
  const int64_t unit = vt_unit(100 * VT_NS_PER_MS);
  clock_ids(unit);
  libc_and_chrono(unit);
  raw_syscalls(unit);
  cpu_clocks();
  return vt_finish();
}
