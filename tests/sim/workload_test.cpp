#include "vtime/sim/workload.h"

#include <gtest/gtest.h>

using namespace vtime::sim;

TEST(Workload, ReadsJobsAndKeepsTheirDescriptionsInBatsimFormat) {
  auto w = parse_workload(R"({"nb_res": 4, "jobs": [
      {"id": "0", "subtime": 10, "walltime": 5.0, "res": 1, "profile": "d10"},
      {"id": 7, "subtime": 20.5, "res": 2, "profile": "d10", "custom": [1, 2.5]}],
    "profiles": {"d10": {"type": "delay", "delay": 10}, "p": {"type": "parallel", "cpu": [1e9], "com": [0]}}})",
                          "wl.json", "w0");
  ASSERT_TRUE(w) << w.error();
  ASSERT_EQ(w->jobs.size(), 2u);
  EXPECT_EQ(w->jobs[0].id, "w0!0");
  EXPECT_EQ(w->jobs[0].json.text, R"({"id":"w0!0","subtime":10,"walltime":5.000000,"res":1,"profile":"d10"})");
  EXPECT_EQ(w->jobs[0].walltime, Nanos::seconds(5));
  EXPECT_EQ(w->jobs[1].name, "7");
  EXPECT_EQ(w->jobs[1].subtime, Nanos::from_ns(20'500'000'000));
  EXPECT_FALSE(w->jobs[1].walltime);
  EXPECT_EQ(w->jobs[1].json.text, R"({"id":"w0!7","subtime":20.500000,"res":2,"profile":"d10","custom":[1,2.500000]})");
  EXPECT_EQ(w->profiles[w->jobs[0].profile].delay, Nanos::seconds(10));
  // Every profile is kept for SIMULATION_BEGINS, used or not.
  EXPECT_EQ(w->profiles_json.text,
            R"({"d10":{"type":"delay","delay":10},"p":{"type":"parallel","cpu":[1000000000.000000],"com":[0]}})");
}

TEST(Workload, RefusesWhatItCannotSimulateWithAClearReason) {
  auto err = [](const std::string& text) {
    auto w = parse_workload(text, "wl.json", "w0");
    return w ? std::string("(accepted)") : w.error();
  };
  const std::string profiles = R"("profiles": {"d": {"type": "delay", "delay": 1}, "p": {"type": "parallel_homogeneous", "cpu": 1, "com": 8},
                                               "s": {"type": "composed", "seq": ["d", "p"]}, "m": {"type": "smpi", "trace": "t"}})";
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): profile 'p': a parallel task that communicates needs SimGrid's "
            "flow-level network sharing, which vtime sim does not model (com = 8 bytes); use --batsim with real Batsim");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "s"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): profile 's': its step 'p': a parallel task that communicates needs "
            "SimGrid's flow-level network sharing, which vtime sim does not model (com = 8 bytes); use --batsim with real Batsim");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "m"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): profile 'm': profile type 'smpi' is not simulated by vtime sim (it "
            "simulates delay, parallel, parallel_homogeneous, parallel_homogeneous_total without communication, and "
            "composed); use --batsim with real Batsim");
  EXPECT_EQ(err(R"({"jobs": [], "profiles": {"a": {"type": "composed", "seq": ["b"]}, "b": {"type": "composed", "seq": ["a"]}}})"),
            "workload 'wl.json': profile 'a' contains itself (composed profiles form a cycle)");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "q"}], "profiles": {"q": {"type": "parallel", "cpu": [1, 2, 3], "com": [0,0,0,0,0,0,0,0,0]}}})"),
            "workload 'wl.json': job 0 (id '1'): requests 2 resources but its profile 'q' is a parallel task of 3 executors");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 0, "profile": "d"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): field 'res' must be a positive integer (got number 0)");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "x"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): profile 'x' is not defined in 'profiles'");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d"}, {"id": "1", "subtime": 0, "res": 1, "profile": "d"}], )" + profiles + "}"),
            "workload 'wl.json': job 1 (id '1'): duplicate job id");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": "0", "res": 1, "profile": "d"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): field 'subtime' must be a number of seconds (got string \"0\")");
  EXPECT_EQ(err(R"({"jobs": [{"id": "1", "subtime": 0, "walltime": 0, "res": 1, "profile": "d"}], )" + profiles + "}"),
            "workload 'wl.json': job 0 (id '1'): field 'walltime' must be -1 (none) or strictly positive (got number 0)");
  EXPECT_EQ(err(R"({"jobs": []})"), "workload 'wl.json': missing object 'profiles'");
  EXPECT_EQ(err("{"), "workload 'wl.json' is not valid JSON: parse error at line 1, column 2: syntax error while parsing object key - unexpected end of input; expected string literal");
  EXPECT_FALSE(load_workload("/nonexistent.json", "w0"));
}
