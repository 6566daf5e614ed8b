// The charged calls a traced program's environment names (libvtime trace_request.h): how
// VTIME_WRITE_COST, VTIME_WRITE_MATCH and VTIME_SYNC_COST are read, and which writes a match
// charges. The tracer's side (the charges paid in virtual time) is tracer.write_cost.
#include <vtime/internal/trace_request.h>

#include <gtest/gtest.h>

#include <cstring>

namespace {

using vtime::detail::charged_calls;
using vtime::detail::write_matches;

bool matches(const char* match, const char* line) { return write_matches(match, line, std::strlen(line)); }

TEST(ChargedCalls, ReadsTheCostsAndTheMatchFromTheEnvironment) {
  const char* env[] = {"PATH=/bin", "VTIME_WRITE_COST=2:100000", "VTIME_WRITE_MATCH=Unable to schedule|bound",
                       "VTIME_SYNC_COST=2000000", nullptr};
  auto c = charged_calls(env);
  EXPECT_EQ(c.write_fd, 2);
  EXPECT_EQ(c.write_ns, 100000);
  EXPECT_EQ(c.sync_ns, 2000000);
  ASSERT_NE(c.write_match, nullptr);
  EXPECT_STREQ(c.write_match, "Unable to schedule|bound");
}

TEST(ChargedCalls, AMatchWithoutACostChargesNothing) {
  const char* env[] = {"VTIME_WRITE_MATCH=x", nullptr};
  auto c = charged_calls(env);
  EXPECT_FALSE(c.writes());
  EXPECT_EQ(c.write_match, nullptr);
  const char* bad[] = {"VTIME_WRITE_COST=2:0", "VTIME_WRITE_MATCH=x", nullptr};
  EXPECT_FALSE(charged_calls(bad).writes());
}

TEST(ChargedCalls, AWriteMatchesWhenItContainsOneOfTheTexts) {
  const char* m = "Unable to schedule|Successfully bound pod";
  EXPECT_TRUE(matches(m, "I0101 00:00:52.661600 8186 factory.go:321] \"Unable to schedule pod; no fit; waiting\"\n"));
  EXPECT_TRUE(matches(m, "I0101 scheduler.go:592] \"Successfully bound pod to node\" pod=\"default/job-1\"\n"));
  EXPECT_FALSE(matches(m, "I0101 scheduler.go:447] Attempting to schedule pod: default/job-21\n"));
  EXPECT_FALSE(matches(m, "Unable to sched"));  // cut short: the whole text is needed
  EXPECT_TRUE(matches(m, "Unable to schedule"));
  EXPECT_FALSE(matches(m, ""));
}

TEST(ChargedCalls, EmptyTextsMatchNothing) {
  EXPECT_FALSE(matches("", "anything"));
  EXPECT_FALSE(matches("|", "anything"));
  EXPECT_TRUE(matches("||thing|", "anything"));
  EXPECT_FALSE(matches("||other|", "anything"));
}

}  // namespace
