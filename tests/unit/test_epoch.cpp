// The --epoch parser of `vtime exec` (cli/epoch.h).
#include "epoch.h"

#include <gtest/gtest.h>

using vtime::cli::parse_epoch;

constexpr int64_t kSec = 1000000000LL;

TEST(Epoch, AcceptsIso8601Forms) {
  EXPECT_EQ(parse_epoch("2024-01-01"), 1704067200 * kSec);
  EXPECT_EQ(parse_epoch("2024-01-01T00:00:00Z"), 1704067200 * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04T05:06:07Z"), 1741064767 * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04 05:06:07"), 1741064767 * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04T05:06"), 1741064760 * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04T05:06:07+02:00"), (1741064767 - 7200) * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04T05:06:07-0130"), (1741064767 + 5400) * kSec);
  EXPECT_EQ(parse_epoch("2025-03-04T05:06:07.25Z"), 1741064767 * kSec + 250000000);
  EXPECT_EQ(parse_epoch("2000-02-29"), 951782400 * kSec);
  EXPECT_EQ(parse_epoch("1969-12-31T23:59:59Z"), -1 * kSec);
}

TEST(Epoch, AcceptsUnixSeconds) {
  EXPECT_EQ(parse_epoch("@0"), 0);
  EXPECT_EQ(parse_epoch("@1700000000.5"), 1700000000 * kSec + 500000000);
  EXPECT_EQ(parse_epoch("@-10"), -10 * kSec);
}

TEST(Epoch, RejectsEverythingElse) {
  for (const char* bad : {"", "yesterday", "2024", "2024-13-01", "2023-02-29", "2024-01-32", "2024-01-01T25:00",
                          "2024-01-01T10:61", "2024-01-01Z1", "2024-01-01T10:00:00+", "@", "@abc", "@1.",
                          "2024-01-01T10:00:00 extra",
                          // Beyond int64 nanoseconds (found by fuzz_values: the product overflowed).
                          "4048-05-01 12:00Z", "@99999999999", "1500-01-01"}) {
    EXPECT_FALSE(parse_epoch(bad).has_value()) << bad;
  }
}
