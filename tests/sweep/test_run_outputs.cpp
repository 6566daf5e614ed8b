// vtime/sweep/run_outputs.h (and csv.h, which it reads with).
#include <vtime/sweep/csv.h>
#include <vtime/sweep/run_outputs.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vtime::sweep {
namespace {

const char* kHeader =
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,"
    "starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,"
    "metadata\n";

std::string row(const char* id, double start, double finish, const char* alloc) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s,w0,p,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,%f,%f,%f,0,0,1,%s,-1.000000,\"\"\n",
                id, start, finish - start, finish, alloc);
  return buf;
}

class RunOutputsTest : public ::testing::Test {
 protected:
  std::string dir = ::testing::TempDir() + "/run_outputs_test";
  void SetUp() override { std::filesystem::create_directories(dir); }
  std::string write(const std::string& name, const std::string& jobs, const std::string& schedule = "") {
    std::ofstream(dir + "/" + name + "_jobs.csv") << jobs;
    if (!schedule.empty()) std::ofstream(dir + "/" + name + "_schedule.csv") << schedule;
    return dir + "/" + name;
  }
};

TEST_F(RunOutputsTest, ReadsJobsAndSchedule) {
  auto p = write("a", std::string(kHeader) + row("0", 1, 11, "0-1 3") + "1,w0,p,0,9,-1,0,REJECTED,,,,,,,,,\"\"\n",
                 "makespan,mean_waiting_time\n11.000000,0.5\n");
  auto o = read_outputs(p);
  ASSERT_TRUE(o) << o.error();
  ASSERT_EQ(o->jobs.size(), 2u);
  EXPECT_EQ(o->jobs[0].id, "w0!0");
  EXPECT_EQ(o->jobs[0].resources, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(*o->jobs[0].start, 1);
  EXPECT_EQ(o->jobs[1].final_state, "REJECTED");
  EXPECT_FALSE(o->jobs[1].start);
  EXPECT_EQ(o->schedule.at("makespan"), "11.000000");
}

TEST_F(RunOutputsTest, ErrorsNameTheFile) {
  auto missing = read_outputs(dir + "/none");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("none_jobs.csv"), std::string::npos);
  auto bad = read_outputs(write("b", "x,y\n1,2\n"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("header"), std::string::npos);
  auto short_row = read_outputs(write("c", std::string(kHeader) + "0,w0\n"));
  ASSERT_FALSE(short_row);
  EXPECT_NE(short_row.error().find("row 2"), std::string::npos);
}

TEST_F(RunOutputsTest, DeviationJobByJob) {
  auto ref = read_outputs(write("ref", std::string(kHeader) + row("0", 0, 10, "0") + row("1", 10, 20, "0") + row("2", 5, 9, "1")));
  auto run = read_outputs(write("run", std::string(kHeader) + row("1", 12, 22, "0") + row("0", 0, 10, "0") + row("2", 4, 8, "1")));
  ASSERT_TRUE(ref && run);
  Deviation d = deviation(*ref, *run);
  EXPECT_DOUBLE_EQ(d.mean_abs_start_delta, 1);  // (0 + 2 + 1) / 3
  EXPECT_DOUBLE_EQ(d.max_abs_start_delta, 2);
  EXPECT_EQ(d.jobs_late, 1);
  EXPECT_EQ(d.jobs_early, 1);
  EXPECT_EQ(d.jobs_differ, 0);
  Deviation self = deviation(*ref, *ref);
  EXPECT_EQ(self.mean_abs_start_delta, 0);
  EXPECT_EQ(self.jobs_late + self.jobs_early + self.jobs_differ, 0);
  auto cut = read_outputs(write("cut", std::string(kHeader) + row("0", 0, 10, "0")));
  EXPECT_EQ(deviation(*ref, *cut).jobs_differ, 2);
}

TEST_F(RunOutputsTest, OverlapsAreJobsOnABusyResource) {
  auto o = read_outputs(write("ov", std::string(kHeader) + row("0", 0, 10, "0-1") + row("1", 10, 20, "1") +
                                        row("2", 5, 15, "1-2") + row("3", 0, 30, "3") + row("4", 29, 31, "3")));
  ASSERT_TRUE(o);
  // Job 2 starts on 1 while job 0 runs there; job 1 starts on 1 as job 0 ends but while job 2
  // runs; job 4 on 3 while job 3 runs. Job 0 and job 3 came first.
  EXPECT_EQ(overlapping_allocations(*o), 3);
}

TEST(Csv, QuotesAndSplitsRoundTrip) {
  Row r = {"a", "b,c", "say \"hi\"", ""};
  std::string line = csv_line(r);
  EXPECT_EQ(line, "a,\"b,c\",\"say \"\"hi\"\"\",\n");
  Row back;
  ASSERT_TRUE(split_csv_line(line.substr(0, line.size() - 1), back));
  EXPECT_EQ(back, r);
  EXPECT_FALSE(split_csv_line("\"open", back));
}

}  // namespace
}  // namespace vtime::sweep
