// vtime/workload/swf.h
#include <vtime/workload/swf.h>

#include <gtest/gtest.h>

#include <sstream>

namespace vtime::workload {
namespace {

Result<SwfTrace> parse(const std::string& text, bool skip_bad = false) {
  std::istringstream in(text);
  return read_swf([&](std::string& line) { return bool(std::getline(in, line)); }, SwfReadOptions{skip_bad});
}

const char* kLine = "1 10 5 100 4 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1";

TEST(Swf, HeaderFieldsAndJobs) {
  auto t = parse("; MaxProcs: 64\n; MaxNodes: 8\n; UnixStartTime: 1451606400\n; TimeZoneString: Europe/Berlin\n"
                 "; a free comment\n\n" + std::string(kLine) + "\n  \t\n" + "2 20 0 50 -1 -1 -1 2 -1 -1 0 7 1 1 1 1 -1 -1\n");
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(*t->header.max_procs, 64);
  EXPECT_EQ(*t->header.max_nodes, 8);
  EXPECT_EQ(*t->header.unix_start_time, 1451606400);
  EXPECT_EQ(t->header.time_zone, "Europe/Berlin");
  EXPECT_EQ(t->header.fields.size(), 4u);  // the free comment is not a field
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].number, 1);
  EXPECT_EQ(t->jobs[0].submit, 10);
  EXPECT_EQ(t->jobs[0].run, 100);
  EXPECT_EQ(t->jobs[0].procs(), 4);
  EXPECT_EQ(t->jobs[1].procs(), 2);  // allocated unknown: requested
  EXPECT_EQ(t->jobs[1].status, 0);
}

TEST(Swf, MalformedLinesNameLineAndField) {
  auto short_line = parse("; x: y\n1 2 3\n");
  ASSERT_FALSE(short_line);
  EXPECT_NE(short_line.error().find("line 2: 3 fields, SWF has 18"), std::string::npos) << short_line.error();
  auto word = parse(std::string(kLine) + "\n1 10 5 abc 4 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n");
  ASSERT_FALSE(word);
  EXPECT_NE(word.error().find("line 2: field 4 (run time) 'abc' is not a number"), std::string::npos) << word.error();
  auto negative = parse("1 10 5 100 -4 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().find("field 5 (allocated processors) is negative"), std::string::npos) << negative.error();
  auto fraction = parse("1 10 5 100 2.5 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n");
  ASSERT_FALSE(fraction);
  EXPECT_NE(fraction.error().find("not a whole number"), std::string::npos);
  auto extra = parse(std::string(kLine) + " 9\n");
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.error().find("more than 18"), std::string::npos);
  // Found by fuzz_swf: whole fields beyond what an integer holds exactly (their cast was undefined).
  auto huge = parse("1 10 5 100 1e51 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().find("field 5 (allocated processors) '1e51' is too large"), std::string::npos) << huge.error();
  EXPECT_FALSE(parse("1 10 5 100 4 -1 -1 4 200 -1 4294967297 7 1 1 1 1 -1 -1\n"));
}

TEST(Swf, SkipBadCountsAndKeepsTheRest) {
  auto t = parse("1 2 3\n" + std::string(kLine) + "\nx\n", true);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->skipped, 2u);
  EXPECT_NE(t->first_skipped_error.find("line 1"), std::string::npos);
}

TEST(Swf, WriteReadsBack) {
  auto t = parse("; MaxProcs: 64\n" + std::string(kLine) + "\n2 20.5 0 50 -1 -1 -1 2 -1 -1 0 7 1 1 1 1 -1 -1\n");
  ASSERT_TRUE(t);
  std::ostringstream out;
  write_swf(out, *t);
  EXPECT_EQ(out.str(), "; MaxProcs: 64\n" + std::string(kLine) + "\n2 20.500000 0 50 -1 -1 -1 2 -1 -1 0 7 1 1 1 1 -1 -1\n");
  auto back = parse(out.str());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->jobs[1].submit, 20.5);
}

}  // namespace
}  // namespace vtime::workload
