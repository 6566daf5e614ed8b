#include "vtime/protocol/nanos.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using vtime::protocol::format_seconds;
using vtime::protocol::format_seconds_6;
using vtime::protocol::Nanos;

static_assert(Nanos::seconds(2) - Nanos::from_ns(1) == Nanos::from_ns(1'999'999'999));
static_assert(Nanos::zero() < Nanos::from_ns(1));

TEST(Nanos, FromSecondsRoundsToNearestNanosecond) {
  EXPECT_EQ(Nanos::from_seconds(10.0006)->ns(), 10'000'600'000);
  EXPECT_EQ(Nanos::from_seconds(10.001100000000001)->ns(), 10'001'100'000);
  EXPECT_EQ(Nanos::from_seconds(10.000600001)->ns(), 10'000'600'001);
  EXPECT_EQ(Nanos::from_seconds(0.0)->ns(), 0);
  EXPECT_EQ(Nanos::from_seconds(-1.5)->ns(), -1'500'000'000);
}

TEST(Nanos, FromSecondsRejectsWhatInt64CannotHold) {
  EXPECT_FALSE(Nanos::from_seconds(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(Nanos::from_seconds(std::nan("")));
  EXPECT_FALSE(Nanos::from_seconds(1e10));
  EXPECT_TRUE(Nanos::from_seconds(9e9));
}

TEST(Nanos, FormatsLikeBatsimPercentF) {
  EXPECT_EQ(format_seconds(Nanos::zero()), "0.000000");
  EXPECT_EQ(format_seconds(Nanos::from_ns(10'000'600'000)), "10.000600");
  EXPECT_EQ(format_seconds(Nanos::seconds(32554)), "32554.000000");
  EXPECT_EQ(format_seconds(Nanos::from_ns(-1'000'000'000)), "-1.000000");
}

TEST(Nanos, KeepsSubMicrosecondPrecisionInMessages) {
  // Rounding 10.000600001 to "10.000600" would move a CALL_ME_LATER onto Batsim's clock.
  EXPECT_EQ(format_seconds(Nanos::from_ns(10'000'600'001)), "10.000600001");
  EXPECT_EQ(format_seconds_6(Nanos::from_ns(10'000'600'001)), "10.000600");
  EXPECT_EQ(format_seconds_6(Nanos::from_ns(10'000'600'500)), "10.000601");
}
