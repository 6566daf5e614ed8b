// sleep_order: eight threads sleep for eight different durations through eight different sleep
// calls, started in an order unrelated to their deadlines. They must wake in deadline order, each
// at its deadline (exactly, under virtual time).
//
// The calls covered: usleep, nanosleep, clock_nanosleep relative and TIMER_ABSTIME (on
// CLOCK_MONOTONIC and CLOCK_REALTIME), std::this_thread::sleep_for, and sleep_until on
// steady_clock and system_clock (libstdc++ turns both into relative nanosleep calls).
#include "check.h"

#include <pthread.h>

#include <array>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace {

enum class Kind {
  kUsleep,
  kNanosleep,
  kClockNanosleepMonoRelative,
  kClockNanosleepMonoAbsolute,
  kClockNanosleepRealAbsolute,
  kSleepFor,
  kSleepUntilSteady,
  kSleepUntilSystem,
};

struct Sleeper {
  const char* name;
  Kind kind;
  int units;  // deadline = start + units * unit; distinct, so the wake order is defined
};

// usleep has the shortest deadline because it takes a 32-bit count of microseconds: one virtual
// unit (an hour, 3.6e9 us) still fits below 2^32.
constexpr std::array<Sleeper, 8> kSleepers{{
    {"usleep", Kind::kUsleep, 1},
    {"sleep_until(system_clock)", Kind::kSleepUntilSystem, 2},
    {"nanosleep", Kind::kNanosleep, 3},
    {"clock_nanosleep(REALTIME, ABSTIME)", Kind::kClockNanosleepRealAbsolute, 4},
    {"sleep_for", Kind::kSleepFor, 5},
    {"clock_nanosleep(MONOTONIC, ABSTIME)", Kind::kClockNanosleepMonoAbsolute, 6},
    {"sleep_until(steady_clock)", Kind::kSleepUntilSteady, 7},
    {"clock_nanosleep(MONOTONIC, relative)", Kind::kClockNanosleepMonoRelative, 8},
}};

// Indices into kSleepers, in the order the threads are started.
constexpr std::array<int, 8> kStartOrder{5, 2, 7, 0, 3, 6, 1, 4};

// The common origin of every deadline, read before any thread starts. The monotonic clocks are
// read before the realtime ones so that natively a realtime deadline is never early with
// respect to the monotonic origin.
struct Origin {
  int64_t mono;
  std::chrono::steady_clock::time_point steady;
  int64_t real;
  std::chrono::system_clock::time_point system;
};

struct Wake {
  int index;
  int64_t mono;
};

std::mutex g_mutex;
std::vector<Wake> g_wakes;

void sleep_one(const Origin& origin, int index, int64_t unit) {
  const Sleeper& s = kSleepers[static_cast<size_t>(index)];
  const int64_t d = s.units * unit;
  const std::chrono::nanoseconds dur{d};
  switch (s.kind) {
    case Kind::kUsleep:
      SYS(usleep(static_cast<useconds_t>(d / VT_NS_PER_US)));
      break;
    case Kind::kNanosleep: {
      const struct timespec req = vt_ts(d);
      SYS(nanosleep(&req, nullptr));
      break;
    }
    case Kind::kClockNanosleepMonoRelative: {
      const struct timespec req = vt_ts(d);
      PT(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, nullptr));
      break;
    }
    case Kind::kClockNanosleepMonoAbsolute: {
      const struct timespec req = vt_ts(origin.mono + d);
      PT(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, nullptr));
      break;
    }
    case Kind::kClockNanosleepRealAbsolute: {
      const struct timespec req = vt_ts(origin.real + d);
      PT(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &req, nullptr));
      CHECK(vt_real() >= origin.real + d);
      break;
    }
    case Kind::kSleepFor:
      std::this_thread::sleep_for(dur);
      break;
    case Kind::kSleepUntilSteady:
      std::this_thread::sleep_until(origin.steady + dur);
      CHECK(std::chrono::steady_clock::now() >= origin.steady + dur);
      break;
    case Kind::kSleepUntilSystem:
      std::this_thread::sleep_until(origin.system + dur);
      CHECK(std::chrono::system_clock::now() >= origin.system + dur);
      break;
  }
  const int64_t woke = vt_mono();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_wakes.push_back(Wake{index, woke});
}

}  // namespace

int main() {
  vt_begin("sleep_order");
  const int64_t unit = vt_unit(100 * VT_NS_PER_MS);

  Origin origin{};
  origin.mono = vt_mono();
  origin.steady = std::chrono::steady_clock::now();
  origin.real = vt_real();
  origin.system = std::chrono::system_clock::now();
  if (vt_virtual()) {
    // Frozen clock: the C and C++ views of it agree to the nanosecond.
    CHECK_EQ(origin.steady.time_since_epoch().count(), origin.mono);
    CHECK_EQ(std::chrono::nanoseconds(origin.system.time_since_epoch()).count(), origin.real);
  }

  std::vector<std::thread> threads;
  for (const int index : kStartOrder) {
    threads.emplace_back(sleep_one, std::cref(origin), index, unit);
  }
  for (auto& t : threads) t.join();

  CHECK_EQ(g_wakes.size(), kSleepers.size());
  for (size_t i = 0; i < g_wakes.size(); ++i) {
    const Wake& w = g_wakes[i];
    const Sleeper& s = kSleepers[static_cast<size_t>(w.index)];
    printf("  woke #%zu: %-38s after %lld ns\n", i, s.name,
           static_cast<long long>(w.mono - origin.mono));
    // kSleepers is sorted by deadline, so the i-th wake must be the i-th sleeper.
    CHECK_EQ(w.index, static_cast<int>(i));
    CHECK_ELAPSED(w.mono - origin.mono, s.units * unit);
  }
  return vt_finish();
}
