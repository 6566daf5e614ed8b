#include "vtime/sim/sim_time.h"

#include <gtest/gtest.h>

using namespace vtime::sim;

TEST(SimTime, ADoubleIsItsExactBinaryValueToTheAttosecond) {
  using Rep = SimTime::Rep;
  EXPECT_EQ(SimTime::from_double(0.0).attos(), 0);
  EXPECT_EQ(SimTime::from_double(10.0).attos(), static_cast<Rep>(10) * SimTime::kPerSecond);
  // 0.1 is 0.1000000000000000055511151231257827... in binary.
  EXPECT_EQ(SimTime::from_double(0.1).attos(), static_cast<Rep>(100000000000000006LL));
  EXPECT_EQ(SimTime::from_double(-0.1).attos(), -static_cast<Rep>(100000000000000006LL));
  // SimGrid's 50us, 50 * 1e-6, is 4.4e-22 s short of 50 us: nothing at this resolution.
  EXPECT_EQ(SimTime::from_double(50 * 1e-6).attos(), static_cast<Rep>(50000000000000LL));
  EXPECT_EQ(SimTime::from_double(2280.000600008).attos(), static_cast<Rep>(2280000600008000219LL) * 1000 + 532);
  EXPECT_EQ(SimTime::from_double(2280.000600008).to_micros(), Nanos::from_ns(2'280'000'600'000));
  EXPECT_EQ(format_seconds_6(SimTime::from_double(63.0012000080)), "63.001200");
  EXPECT_EQ(SimTime::from_double(1e-30).attos(), 0);
}
