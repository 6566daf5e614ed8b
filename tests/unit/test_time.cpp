// vtime/time.h: strong time types, saturation and conversions.
#include <vtime/time.h>

#include <gtest/gtest.h>

#include <limits>

using namespace vtime;

// Everything is constexpr: the arithmetic is checked at compile time too.
static_assert(seconds(1) == milliseconds(1000));
static_assert(minutes(2) + seconds(3) == seconds(123));
static_assert(hours(1).ns() == 3600LL * 1000000000LL);
static_assert((TimePoint::origin() + seconds(5)) - TimePoint::origin() == seconds(5));
static_assert(Duration::infinite() + seconds(1) == Duration::infinite());
static_assert(TimePoint::never().is_never());
static_assert(from_timespec(to_timespec(nanoseconds(1500000001))) == nanoseconds(1500000001));

TEST(Duration, SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(Duration::infinite() + hours(1), Duration::infinite());
  EXPECT_EQ((-Duration::infinite()) - hours(1), Duration::nanoseconds(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(seconds(std::numeric_limits<int64_t>::max() / 2), Duration::infinite());
  EXPECT_EQ(TimePoint::never() + seconds(1), TimePoint::never());
}

TEST(Duration, OrdersAndCompares) {
  EXPECT_LT(milliseconds(999), seconds(1));
  EXPECT_GT(TimePoint::from_ns(2), TimePoint::from_ns(1));
  EXPECT_EQ(microseconds(3).ns(), 3000);
}

TEST(Conversions, NegativeDurationsKeepNanosecondsPositive) {
  timespec ts = to_timespec(nanoseconds(-1));
  EXPECT_EQ(ts.tv_sec, -1);
  EXPECT_EQ(ts.tv_nsec, 999999999);
  EXPECT_EQ(from_timespec(ts), nanoseconds(-1));
}

TEST(Conversions, Timeval) {
  timeval tv = to_timeval(milliseconds(2500));
  EXPECT_EQ(tv.tv_sec, 2);
  EXPECT_EQ(tv.tv_usec, 500000);
  EXPECT_EQ(from_timeval(tv), milliseconds(2500));
}

TEST(Conversions, BatsimDoubleSecondsRoundToNearestNanosecond) {
  EXPECT_EQ(from_seconds_f(170.0), seconds(170));
  EXPECT_EQ(from_seconds_f(0.0006), microseconds(600));
  EXPECT_EQ(from_seconds_f(-0.5), milliseconds(-500));
  EXPECT_EQ(from_seconds_f(1e300), Duration::infinite());
  EXPECT_DOUBLE_EQ(seconds(3).seconds_f(), 3.0);
}
