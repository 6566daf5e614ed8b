// bridges/job_order.h: the order in which bridges submit jobs due at one instant.
#include "job_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vtime::bridges {
namespace {

std::vector<std::string> sorted(std::vector<std::string> ids) {
  std::stable_sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) { return natural_id_less(a, b); });
  return ids;
}

TEST(JobOrder, NumberedJobsGoInNumericOrderAsATraceListsThem) {
  // Batsim's own order is the string order: w0!10, w0!11, w0!9.
  EXPECT_EQ(sorted({"w0!10", "w0!9", "w0!11", "w0!100"}), (std::vector<std::string>{"w0!9", "w0!10", "w0!11", "w0!100"}));
}

TEST(JobOrder, WorkloadsFirstThenNamesAsText) {
  EXPECT_EQ(sorted({"w1!2", "w0!10", "w0!b", "w0!a", "w0!3"}),
            (std::vector<std::string>{"w0!3", "w0!10", "w0!a", "w0!b", "w1!2"}));
  // Ids without a workload part, and numbers with leading zeros: a strict order all the same.
  EXPECT_TRUE(natural_id_less("7", "12"));
  EXPECT_FALSE(natural_id_less("12", "7"));
  EXPECT_TRUE(natural_id_less("007", "7"));
  EXPECT_FALSE(natural_id_less("7", "007"));
  EXPECT_FALSE(natural_id_less("w0!5", "w0!5"));
}

}  // namespace
}  // namespace vtime::bridges
