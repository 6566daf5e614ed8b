// vtime/sweep/statistics.h
#include <vtime/sweep/statistics.h>

#include <gtest/gtest.h>

#include <cmath>

namespace vtime::sweep {
namespace {

TEST(Statistics, MeanSampleDeviationAndStudentInterval) {
  Stats s = describe({10, 12, 11});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 11);
  EXPECT_DOUBLE_EQ(s.sd, 1);
  EXPECT_NEAR(s.ci95, 4.303 / std::sqrt(3.0), 1e-9);
}

TEST(Statistics, OneOrNoSampleHasNoSpread) {
  EXPECT_EQ(describe({}).n, 0u);
  Stats one = describe({7});
  EXPECT_DOUBLE_EQ(one.mean, 7);
  EXPECT_EQ(one.sd, 0);
  EXPECT_EQ(one.ci95, 0);
}

TEST(Statistics, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(student_t975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t975(30), 2.042);
  EXPECT_NEAR(student_t975(60), 2.000, 0.003);
  EXPECT_NEAR(student_t975(120), 1.980, 0.003);
  EXPECT_NEAR(student_t975(100000), 1.960, 0.001);
}

}  // namespace
}  // namespace vtime::sweep
