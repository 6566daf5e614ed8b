// vtime/workload/from_swf.h
#include <vtime/workload/from_swf.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace vtime::workload {
namespace {

SwfJob job(int64_t n, double submit, double wait, double run, int64_t procs, int status = 1, double req = -1) {
  SwfJob j;
  j.number = n;
  j.submit = submit;
  j.wait = wait;
  j.run = run;
  j.alloc_procs = procs;
  j.req_procs = procs;
  j.status = status;
  j.req_time = req;
  return j;
}

TEST(FromSwf, UtilisationProfileIntegratesBusyProcessors) {
  // 4 procs over [0, 10), 2 over [5, 15): busy 4, 6, 2.
  UtilisationProfile p = utilisation_profile({job(1, 0, 0, 10, 4), job(2, 5, 0, 10, 2)});
  EXPECT_DOUBLE_EQ(p.integral(0), 0);
  EXPECT_DOUBLE_EQ(p.integral(5), 20);
  EXPECT_DOUBLE_EQ(p.integral(10), 50);
  EXPECT_DOUBLE_EQ(p.integral(15), 60);
  EXPECT_DOUBLE_EQ(p.integral(100), 60);
  EXPECT_DOUBLE_EQ(p.mean(0, 10, 8), 50.0 / 80);
}

TEST(FromSwf, DurationsAndStatuses) {
  EXPECT_EQ(*parse_duration("90"), 90);
  EXPECT_EQ(*parse_duration("1.5h"), 5400);
  EXPECT_EQ(*parse_duration("2d"), 172800);
  EXPECT_FALSE(parse_duration("3 weeks"));
  EXPECT_FALSE(parse_duration("h"));
  EXPECT_FALSE(parse_duration("-13"));     // found by fuzz_values
  EXPECT_FALSE(parse_duration("1e308d"));
  EXPECT_EQ(*parse_statuses("completed,cancelled"), (std::set<int>{1, 5}));
  EXPECT_EQ(*parse_statuses("partial,-1"), (std::set<int>{2, 3, 4, -1}));
  EXPECT_FALSE(parse_statuses("done"));
}

TEST(FromSwf, WindowByUtilisationTakesTheClosest) {
  SwfTrace t;
  t.header.max_procs = 4;
  // Windows of 100 s starting at a submission: [0,100) 100% busy, [200,300) 50%, [400,500) 25%.
  t.jobs = {job(1, 0, 0, 100, 4), job(2, 200, 0, 100, 2), job(3, 400, 0, 100, 1), job(4, 600, 0, 1, 1)};
  ConvertOptions o;
  o.window_length = 100;
  o.utilisation = 0.3;
  o.shift = true;
  auto c = convert(t, o);
  ASSERT_TRUE(c) << c.error();
  ASSERT_TRUE(c->window);
  EXPECT_EQ(c->window->start, 400);
  EXPECT_DOUBLE_EQ(c->window->utilisation, 0.25);
  auto w = nlohmann::json::parse(c->json);
  ASSERT_EQ(w["jobs"].size(), 1u);
  EXPECT_EQ(w["jobs"][0]["id"], "3");
  EXPECT_EQ(w["jobs"][0]["subtime"], 0);  // shifted
  o.utilisation = 0.6;
  EXPECT_EQ(convert(t, o)->window->start, 200);
}

TEST(FromSwf, NormalisationCapsAndWalltimes) {
  SwfTrace t;
  t.jobs = {job(1, 0, 0, 7200, 40, 1, 9000), job(2, 10, 0, 60, 3, 1, -1), job(3, 20, 0, 60, 2, 0)};
  ConvertOptions o;
  o.procs_per_host = 4;
  o.hosts = 8;
  o.max_duration = 3600;
  auto c = convert(t, o);
  ASSERT_TRUE(c);
  auto w = nlohmann::json::parse(c->json);
  EXPECT_EQ(w["nb_res"], 8);
  EXPECT_EQ(w["jobs"][0]["res"], 8);  // 40 procs -> 10 hosts, capped to 8
  EXPECT_EQ(w["jobs"][0]["walltime"], 9000);
  EXPECT_EQ(w["jobs"][0]["profile"], "delay3600");
  EXPECT_EQ(w["jobs"][1]["res"], 1);  // ceil(3 / 4)
  EXPECT_FALSE(w["jobs"][1].contains("walltime"));
  EXPECT_EQ(c->capped_duration, 1u);
  EXPECT_EQ(c->capped_size, 1u);
  EXPECT_EQ(w["profiles"]["delay60"]["delay"], 60);
  o.too_big = TooBig::kDrop;
  o.walltime = Walltime::kFactor;
  o.walltime_factor = 2;
  o.statuses = {1};
  auto d = convert(t, o);
  auto wd = nlohmann::json::parse(d->json);
  ASSERT_EQ(wd["jobs"].size(), 1u);  // job 1 too big, job 3 failed
  EXPECT_EQ(wd["jobs"][0]["walltime"], 120);
  o.too_big = TooBig::kKeep;
  EXPECT_EQ(nlohmann::json::parse(convert(t, o)->json)["jobs"][0]["res"], 10);
}

TEST(FromSwf, BadOptionsAreErrors) {
  SwfTrace t;
  t.jobs = {job(1, 0, 0, 10, 1)};
  ConvertOptions o;
  o.window_length = 10;
  EXPECT_FALSE(convert(t, o));  // no utilisation
  o.utilisation = 0.5;
  auto no_capacity = convert(t, o);
  ASSERT_FALSE(no_capacity);
  EXPECT_NE(no_capacity.error().find("MaxProcs"), std::string::npos);
  t.header.max_procs = 1;
  auto too_short = convert(t, o);
  ASSERT_FALSE(too_short);
  EXPECT_NE(too_short.error().find("less than the window"), std::string::npos);
  ConvertOptions dup;
  t.jobs.push_back(job(1, 5, 0, 10, 1));
  EXPECT_FALSE(convert(t, dup));
}

// Found by fuzz_swf: a conversion must give a workload the simulator reads back.
TEST(FromSwf, TimesAndSizesTheSimulatorCannotHoldAreErrors) {
  SwfTrace t;
  t.jobs = {job(1, 0, 0, 10, 1)};
  t.jobs[0].req_time = 9.1e13;
  auto wall = convert(t, ConvertOptions{});
  ASSERT_FALSE(wall);
  EXPECT_NE(wall.error().find("job 1: its walltime (91000000000000 s) is beyond the simulator's time range"),
            std::string::npos) << wall.error();
  t.jobs = {job(2, 0, 0, 10, 2'000'000'000)};
  ConvertOptions keep;
  keep.too_big = TooBig::kKeep;
  auto big = convert(t, keep);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("job 2 asks for 2000000000 hosts"), std::string::npos) << big.error();
  // A job that ran 0 s gets no walltime (Batsim takes -1 or > 0).
  t.jobs = {job(3, 0, 0, 0, 1)};
  ConvertOptions runtime;
  runtime.walltime = Walltime::kRuntime;
  auto zero = convert(t, runtime);
  ASSERT_TRUE(zero) << zero.error();
  EXPECT_EQ(zero->json.find("walltime"), std::string::npos) << zero->json;
}

}  // namespace
}  // namespace vtime::workload
