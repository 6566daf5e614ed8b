// vtime/workload/synth.h (and stats.h, which measures what it makes)
#include <vtime/workload/stats.h>
#include <vtime/workload/synth.h>

#include <gtest/gtest.h>

#include <sstream>

namespace vtime::workload {
namespace {

std::string text(const SynthOptions& o) {
  std::ostringstream out;
  write_swf(out, synthesise(o));
  return out.str();
}

TEST(Synth, SameSeedSameTraceOtherSeedOtherTrace) {
  SynthOptions o;
  o.jobs = 500;
  EXPECT_EQ(text(o), text(o));
  SynthOptions p = o;
  p.seed = 2;
  EXPECT_NE(text(o), text(p));
}

TEST(Synth, FollowsTheModel) {
  SynthOptions o;
  o.jobs = 20000;
  o.procs = 256;
  o.utilisation = 0.6;
  o.min_runtime = 10;
  o.max_runtime = 3600;
  SwfTrace t = synthesise(o);
  ASSERT_EQ(t.jobs.size(), 20000u);
  ASSERT_TRUE(t.header.max_procs);
  EXPECT_EQ(*t.header.max_procs, 256);
  std::vector<JobShape> shapes;
  size_t serial = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const SwfJob& j = t.jobs[i];
    EXPECT_EQ(j.number, static_cast<int64_t>(i + 1));
    if (i) {
      EXPECT_GE(j.submit, t.jobs[i - 1].submit);
    }
    EXPECT_GE(j.run, 10);
    EXPECT_LE(j.run, 3600);
    EXPECT_GE(j.req_time, j.run);
    EXPECT_TRUE(j.procs() >= 1 && j.procs() <= 256 && (j.procs() & (j.procs() - 1)) == 0) << j.procs();
    serial += j.procs() == 1;
    shapes.push_back({j.submit, j.procs(), j.run});
  }
  EXPECT_NEAR(static_cast<double>(serial) / 20000, 0.25, 0.02);
  EXPECT_NEAR(describe_jobs(shapes).offered_utilisation(256), 0.6, 0.06);
}

TEST(Stats, DistributionsUseValuesThatOccur) {
  WorkloadStats s = describe_jobs({{0, 1, 10}, {10, 2, 20}, {30, 4, 30}, {60, 8, 40}});
  EXPECT_EQ(s.jobs, 4u);
  EXPECT_EQ(s.size.min, 1);
  EXPECT_EQ(s.size.median, 2);
  EXPECT_EQ(s.size.max, 8);
  EXPECT_DOUBLE_EQ(s.size.mean, 3.75);
  EXPECT_EQ(s.interarrival.max, 30);
  EXPECT_EQ(s.last_end, 100);
  EXPECT_DOUBLE_EQ(s.work, 10 + 40 + 120 + 320);
  EXPECT_DOUBLE_EQ(s.offered_utilisation(8), 490.0 / 800);
}

}  // namespace
}  // namespace vtime::workload
