#include "vtime/protocol/resource_set.h"

#include <gtest/gtest.h>

using vtime::protocol::ResourceSet;

// Found by fuzz_protocol: a range ending at INT_MAX overflowed its loop counter and never ended.
TEST(ResourceSet, RangeEndingAtIntMax) {
  auto r = ResourceSet::parse("2147483640-2147483647");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->size(), 8u);
  EXPECT_EQ(r->to_string(), "2147483640-2147483647");
}

TEST(ResourceSet, ParsesBatsimIntervals) {
  auto r = ResourceSet::parse("0-3 5 7-8");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->size(), 7u);
  EXPECT_EQ(r->to_string(), "0-3 5 7-8");
}

TEST(ResourceSet, MergesAndSortsLikeASet) {
  EXPECT_EQ(ResourceSet::parse("5 0-1 1-2 3")->to_string(), "0-3 5");
  EXPECT_EQ(ResourceSet::from_ids({9, 2, 15, 10, 11, 12, 13, 14}).to_string(), "2 9-15");
  EXPECT_EQ(ResourceSet::parse("")->size(), 0u);
  EXPECT_EQ(ResourceSet::parse("  4  ")->to_string(), "4");
}

TEST(ResourceSet, RejectsMalformedTokensWithTheToken) {
  auto bad = ResourceSet::parse("0-");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "'0-' is not a range like '0-3'");
  EXPECT_EQ(ResourceSet::parse("3-1").error(), "'3-1' is a decreasing range");
  EXPECT_EQ(ResourceSet::parse("a").error(), "'a' is not a resource id");
  EXPECT_EQ(ResourceSet::parse("-1").error(), "'-1' is not a range like '0-3'");
  EXPECT_EQ(ResourceSet::parse("1,2").error(), "'1,2' is not a resource id");
}
