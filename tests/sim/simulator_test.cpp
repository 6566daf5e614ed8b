// The simulation core driven in-process by scripted schedulers (a fake Peer), for the timing
// rules that are hard to provoke through a real scheduler.
#include "vtime/sim/simulator.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "vtime/protocol/codec.h"

using namespace vtime::sim;
using namespace vtime::protocol;

namespace {

using Decide = std::function<std::vector<Payload>(const Message&)>;

// Replies with the scheduler's decisions stamped at the message's `now`; records every message.
class ScriptedPeer : public Peer {
 public:
  explicit ScriptedPeer(Decide d) : decide_(std::move(d)) {}
  PeerStatus exchange(const std::string& request, std::string& reply) override {
    auto m = parse_message(request, Direction::to_scheduler);
    if (!m) return {PeerStatus::failed, 0, m.error()};
    seen.push_back(*m);
    Message r{m->now, {}, {}};
    for (auto& p : decide_(*m)) r.events.push_back(Event{m->now, std::move(p), {}});
    reply = serialise(r);
    return {};
  }
  std::vector<Message> seen;

 private:
  Decide decide_;
};

std::vector<std::string> types(const Message& m) {
  std::vector<std::string> out;
  for (const auto& e : m.events) out.emplace_back(type_name(e.payload));
  return out;
}

class SimulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vtime-simtest-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunReport run(const std::string& workload_json, int hosts, ScriptedPeer& peer) {
    auto w = parse_workload(workload_json, "wl.json", "w0");
    EXPECT_TRUE(w) << w.error();
    auto p = make_platform(hosts, "master_host");
    auto out = Outputs::open(dir_ + "/out");
    EXPECT_TRUE(out);
    return simulate(*p, *w, **out, peer);
  }
  std::string jobs_csv() {
    std::ifstream in(dir_ + "/out_jobs.csv");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string dir_;
};

// Executes every submitted job on resource 0.. in order; kills job 0 when the call comes.
std::vector<Payload> fcfs_on(const Message& m, int& next_free) {
  std::vector<Payload> out;
  for (const auto& e : m.events)
    if (const auto* s = std::get_if<JobSubmitted>(&e.payload))
      out.push_back(ExecuteJob{s->job_id, ResourceSet::from_ids({next_free++}), {}});
  return out;
}

}  // namespace

TEST_F(SimulatorTest, KillAcknowledgedInTheNextMessageWithProgress) {
  int next = 0;
  ScriptedPeer peer([&](const Message& m) -> std::vector<Payload> {
    auto out = fcfs_on(m, next);
    if (!out.empty()) out.push_back(CallMeLater{m.now + Nanos::seconds(25)});
    for (const auto& e : m.events)
      if (std::holds_alternative<RequestedCall>(e.payload)) out.push_back(KillJob{{"w0!0", "w0!1"}});
    return out;
  });
  RunReport r = run(R"({"jobs":[{"id":"0","subtime":0,"res":1,"profile":"a"},{"id":"1","subtime":0,"res":1,"profile":"b"}],
                        "profiles":{"a":{"type":"delay","delay":100},"b":{"type":"delay","delay":10}}})", 2, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  // begins, submissions, notify, completion of 1 at 10, requested call at 25, kill ack, ends.
  ASSERT_EQ(peer.seen.size(), 7u);
  EXPECT_EQ(types(peer.seen[1]), (std::vector<std::string>{"JOB_SUBMITTED", "JOB_SUBMITTED"}));
  EXPECT_EQ(types(peer.seen[2]), (std::vector<std::string>{"NOTIFY"}));  // same instant, next message
  EXPECT_EQ(types(peer.seen[3]), (std::vector<std::string>{"JOB_COMPLETED"}));
  EXPECT_EQ(types(peer.seen[4]), (std::vector<std::string>{"REQUESTED_CALL"}));
  // Batsim's server_on_killing_done: the killed job's JOB_COMPLETED, then JOB_KILLED for all.
  ASSERT_EQ(types(peer.seen[5]), (std::vector<std::string>{"JOB_COMPLETED", "JOB_KILLED"}));
  EXPECT_EQ(peer.seen[5].now, Nanos::seconds(25));
  const auto& c = std::get<JobCompleted>(peer.seen[5].events[0].payload);
  EXPECT_EQ(c.job_id, "w0!0");
  EXPECT_EQ(c.job_state, JobState::completed_killed);
  EXPECT_EQ(c.return_code, -1);  // a killed delay job keeps Batsim's default return code
  const auto& k = std::get<JobKilled>(peer.seen[5].events[1].payload);
  EXPECT_EQ(k.job_ids, (std::vector<std::string>{"w0!0", "w0!1"}));
  EXPECT_EQ(k.job_progress.text, R"({"w0!0":{"profile_name":"a","progress":0.250000}})");
  EXPECT_EQ(types(peer.seen[6]), (std::vector<std::string>{"SIMULATION_ENDS"}));
  EXPECT_NE(jobs_csv().find("0,w0,a,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,25.000000,25.000000,"), std::string::npos);
}

TEST_F(SimulatorTest, WalltimeEqualToDelayKillsTheJobLikeBatsim) {
  int next = 0;
  ScriptedPeer peer([&](const Message& m) { return fcfs_on(m, next); });
  RunReport r = run(R"({"jobs":[{"id":"0","subtime":0,"walltime":10,"res":1,"profile":"a"}],
                        "profiles":{"a":{"type":"delay","delay":10}}})", 1, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  const auto& c = std::get<JobCompleted>(peer.seen[3].events[0].payload);
  EXPECT_EQ(c.job_state, JobState::completed_walltime_reached);
  EXPECT_EQ(c.return_code, -1);
}

TEST_F(SimulatorTest, ZeroDelayJobEndsInTheNextMessageWithBatsimsEpsilon) {
  int next = 0;
  ScriptedPeer peer([&](const Message& m) { return fcfs_on(m, next); });
  RunReport r = run(R"({"jobs":[{"id":"0","subtime":5,"res":1,"profile":"z"}],
                        "profiles":{"z":{"type":"delay","delay":0}}})", 1, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  EXPECT_EQ(types(peer.seen[2]), (std::vector<std::string>{"NOTIFY", "JOB_COMPLETED"}));
  EXPECT_EQ(peer.seen[2].now, Nanos::seconds(5));
  EXPECT_NE(jobs_csv().find(",5.000000,0.000010,5.000010,"), std::string::npos) << jobs_csv();
}

TEST_F(SimulatorTest, EventsOfOneInstantComeInArmingOrder) {
  // At t=30: the call armed at 0, then the submitter (armed at 20), then job 1's end (armed at
  // 20 after the submission): the order real Batsim shows in nonet_cml_basic. The submitter's
  // goodbye reaches the server's mailbox while job 1's completion is still waiting there, so
  // NOTIFY comes in the same message (in nonet_cml_basic the submission is the last of its
  // instant, the server sends before the goodbye arrives, and NOTIFY comes in the next one).
  int next = 0;
  ScriptedPeer peer([&](const Message& m) -> std::vector<Payload> {
    auto out = fcfs_on(m, next);
    if (std::holds_alternative<SimulationBegins>(m.events[0].payload)) out.push_back(CallMeLater{Nanos::seconds(30)});
    return out;
  });
  RunReport r = run(R"({"jobs":[{"id":"1","subtime":20,"res":1,"profile":"a"},{"id":"2","subtime":30,"res":1,"profile":"a"}],
                        "profiles":{"a":{"type":"delay","delay":10}}})", 2, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  EXPECT_EQ(peer.seen[2].now, Nanos::seconds(30));
  EXPECT_EQ(types(peer.seen[2]),
            (std::vector<std::string>{"REQUESTED_CALL", "JOB_SUBMITTED", "JOB_COMPLETED", "NOTIFY"}));
}

TEST_F(SimulatorTest, DecisionTimeDeliversWhatHappenedMeanwhileWithItsOwnTimestamps) {
  // The reply to SIMULATION_BEGINS claims 12 s of thinking: the submission at 10 arrives at 12.
  class Thinker : public Peer {
   public:
    PeerStatus exchange(const std::string& request, std::string& reply) override {
      auto m = parse_message(request, Direction::to_scheduler);
      seen.push_back(*m);
      reply = seen.size() == 1 ? R"({"now":12.0,"events":[]})" : serialise(Message{m->now, {}, {}});
      for (const auto& e : m->events)
        if (const auto* s = std::get_if<JobSubmitted>(&e.payload))
          reply = serialise(Message{m->now, {Event{m->now, ExecuteJob{s->job_id, ResourceSet::from_ids({0}), {}}, {}}}, {}});
      return {};
    }
    std::vector<Message> seen;
  } peer;
  auto w = parse_workload(R"({"jobs":[{"id":"0","subtime":10,"res":1,"profile":"a"}],"profiles":{"a":{"type":"delay","delay":5}}})", "wl.json", "w0");
  auto out = Outputs::open(dir_ + "/out");
  RunReport r = simulate(*make_platform(1, "master_host"), *w, **out, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  EXPECT_EQ(peer.seen[1].now, Nanos::seconds(12));
  EXPECT_EQ(peer.seen[1].events[0].timestamp, Nanos::seconds(10));
  EXPECT_EQ(peer.seen[3].now, Nanos::seconds(17));  // started at 12, 5 s long
}

TEST_F(SimulatorTest, StallsWhenJobsAreLeftUndecided) {
  ScriptedPeer peer([](const Message&) { return std::vector<Payload>{}; });
  RunReport r = run(R"({"jobs":[{"id":"0","subtime":3,"res":1,"profile":"a"}],"profiles":{"a":{"type":"delay","delay":5}}})", 1, peer);
  EXPECT_EQ(r.outcome, Outcome::stalled);
  EXPECT_EQ(r.error, "simulation stalled at 3.000000: 1 submitted job(s) were neither executed nor rejected (w0!0) "
                     "and no CALL_ME_LATER is pending, so nothing can happen any more");
}

// ---- job profiles beyond delay (--hosts: 1 Gflop/s hosts, no network) ---------------------

TEST_F(SimulatorTest, ParallelTasksLastTheirSlowestHostsComputation) {
  int next = 0;
  ScriptedPeer peer([&](const Message& m) {
    std::vector<Payload> out;
    for (const auto& e : m.events)
      if (const auto* s = std::get_if<JobSubmitted>(&e.payload)) {
        std::vector<int> ids;
        for (int i = 0; i < s->job.res; ++i) ids.push_back(next++);
        out.push_back(ExecuteJob{s->job_id, ResourceSet::from_ids(ids), {}});
      }
    return out;
  });
  RunReport r = run(R"({"jobs":[{"id":"h","subtime":0,"res":2,"profile":"h"},
                                {"id":"t","subtime":0,"res":2,"profile":"t"},
                                {"id":"p","subtime":0,"res":2,"profile":"p"},
                                {"id":"c","subtime":0,"res":1,"profile":"c"},
                                {"id":"w","subtime":0,"walltime":6,"res":1,"profile":"c"},
                                {"id":"e","subtime":0,"walltime":2,"res":2,"profile":"h"}],
                        "profiles":{"h":{"type":"parallel_homogeneous","cpu":2e9,"com":0},
                                    "t":{"type":"parallel_homogeneous_total","cpu":2e9,"com":0},
                                    "p":{"type":"parallel","cpu":[1e9,3e9],"com":[0,0,0,0]},
                                    "d":{"type":"delay","delay":3},
                                    "c":{"type":"composed","repeat":2,"seq":["d","h1"]},
                                    "h1":{"type":"parallel_homogeneous","cpu":1e9,"com":0}}})",
                    11, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  std::string csv = jobs_csv();
  // cpu flops per host at 1 Gflop/s; _total splits them; parallel waits for its slowest host.
  EXPECT_NE(csv.find("h,w0,h,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,2.000000,2.000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("t,w0,t,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,1.000000,1.000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("p,w0,p,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,3.000000,3.000000,"), std::string::npos) << csv;
  // composed: (3 s delay + 1 s computation) twice; with a 6 s walltime, cut in the second delay.
  EXPECT_NE(csv.find("c,w0,c,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,8.000000,8.000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("w,w0,c,0.000000,1,6.000000,0,COMPLETED_WALLTIME_REACHED,0.000000,6.000000,6.000000,"), std::string::npos) << csv;
  // A computation that ends exactly at the walltime succeeds (a delay would not).
  EXPECT_NE(csv.find("e,w0,h,0.000000,2,2.000000,1,COMPLETED_SUCCESSFULLY,0.000000,2.000000,2.000000,"), std::string::npos) << csv;
}

TEST_F(SimulatorTest, KillingAComposedJobReportsItsNestedProgress) {
  ScriptedPeer peer([&](const Message& m) -> std::vector<Payload> {
    std::vector<Payload> out;
    for (const auto& e : m.events)
      if (const auto* s = std::get_if<JobSubmitted>(&e.payload)) {
        out.push_back(ExecuteJob{s->job_id, ResourceSet::from_ids({0}), {}});
        out.push_back(CallMeLater{m.now + Nanos::seconds(5)});
      } else if (std::holds_alternative<RequestedCall>(e.payload)) {
        out.push_back(KillJob{{"w0!0"}});
      }
    return out;
  });
  RunReport r = run(R"({"jobs":[{"id":"0","subtime":0,"res":1,"profile":"c"}],
                        "profiles":{"c":{"type":"composed","repeat":3,"seq":["d","x"]},
                                    "d":{"type":"delay","delay":1},"x":{"type":"parallel_homogeneous","cpu":1e9,"com":0}}})",
                    1, peer);
  ASSERT_EQ(r.outcome, Outcome::completed) << r.error;
  // Rounds of 2 s (d then x): the kill comes at 5 s, when step 4 (round 3's d) has just ended and
  // step 5 (its x) begins: Batsim counts the steps across rounds.
  const JobKilled* k = nullptr;
  const JobCompleted* c = nullptr;
  for (const auto& m : peer.seen)
    for (const auto& e : m.events) {
      if (const auto* p = std::get_if<JobKilled>(&e.payload)) k = p;
      if (const auto* p = std::get_if<JobCompleted>(&e.payload)) c = p;
    }
  ASSERT_TRUE(k && c);
  EXPECT_EQ(k->job_progress.text,
            R"({"w0!0":{"profile_name":"c","current_task_index":5,"current_task":{"profile_name":"x","progress":0.000000}}})");
  // A cancelled computation ends the job with Batsim's -2.
  EXPECT_EQ(c->job_state, JobState::completed_killed);
  EXPECT_EQ(c->return_code, -2);
}

// A caller in the same process may take the messages as they are (Stepper::next_message and
// answer_message: `vtime run`'s broker with the embedded simulator). They must be the text's
// messages: the same run driven both ways sends the same bytes at every step and writes the same
// outputs, with submissions, a composed profile, a CALL_ME_LATER, kills and a rejection.
TEST_F(SimulatorTest, StepperHandsOverTheMessagesItsTextCarries) {
  const std::string wl = dir_ + "/wl.json";
  std::ofstream(wl) << R"({"nb_res":3,"jobs":[{"id":"0","subtime":0,"res":1,"profile":"c"},
      {"id":"1","subtime":0,"res":1,"profile":"b"},{"id":"2","subtime":3,"res":2,"profile":"b"},
      {"id":"3","subtime":4,"res":1,"walltime":5,"profile":"b"}],
      "profiles":{"a":{"type":"delay","delay":100},"b":{"type":"delay","delay":10},
                  "c":{"type":"composed","repeat":2,"seq":["a","b"]}}})";
  auto p = make_platform(3, "master_host");
  auto decide = [](const Message& m, int& next) {
    Message r{m.now, {}, {}};
    for (const auto& e : m.events) {
      if (const auto* s = std::get_if<JobSubmitted>(&e.payload)) {
        if (s->job_id == "w0!2") {
          r.events.push_back(Event{m.now, RejectJob{s->job_id}, {}});
        } else {
          r.events.push_back(Event{m.now, ExecuteJob{s->job_id, ResourceSet::from_ids({next++}), {}}, {}});
          r.events.push_back(Event{m.now, CallMeLater{m.now + Nanos::seconds(25)}, {}});
        }
      }
      if (std::holds_alternative<RequestedCall>(e.payload)) r.events.push_back(Event{m.now, KillJob{{"w0!0"}}, {}});
    }
    return r;
  };
  auto text_src = open_workload(wl, "w0");
  auto typed_src = open_workload(wl, "w0");
  ASSERT_TRUE(text_src && typed_src);
  auto text_out = Outputs::open(dir_ + "/text");
  auto typed_out = Outputs::open(dir_ + "/typed");
  ASSERT_TRUE(text_out && typed_out);
  Stepper text(*p, **text_src, **text_out);
  Stepper typed(*p, **typed_src, **typed_out);
  int text_next = 0, typed_next = 0, steps = 0;
  for (;;) {
    std::optional<std::string> t = text.next();
    std::optional<Message> m = typed.next_message();
    ASSERT_EQ(t.has_value(), m.has_value()) << "at step " << steps;
    if (!t) break;
    ASSERT_EQ(*t, serialise(*m)) << "at step " << steps;
    auto parsed = parse_message(*t, Direction::to_scheduler);
    ASSERT_TRUE(parsed) << parsed.error();
    text.answer(serialise(decide(*parsed, text_next)));
    typed.answer_message(decide(*m, typed_next));
    ++steps;
  }
  EXPECT_GE(steps, 7);
  EXPECT_EQ(text.report().outcome, Outcome::completed) << text.report().error;
  EXPECT_EQ(typed.report().outcome, Outcome::completed) << typed.report().error;
  EXPECT_EQ(text.report().messages, typed.report().messages);
  auto read = [](const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_NE(read(dir_ + "/typed_jobs.csv").find("COMPLETED_KILLED"), std::string::npos);
  EXPECT_NE(read(dir_ + "/typed_jobs.csv").find("REJECTED"), std::string::npos);
  EXPECT_EQ(read(dir_ + "/text_jobs.csv"), read(dir_ + "/typed_jobs.csv"));
}

// A reply handed over as it is gets the checks its text would: an event later than the reply's
// `now` is refused with the words the text's reader uses.
TEST_F(SimulatorTest, AMessageHandedOverIsCheckedLikeItsText) {
  const std::string wl = dir_ + "/wl.json";
  std::ofstream(wl) << R"({"nb_res":1,"jobs":[{"id":"0","subtime":0,"res":1,"profile":"b"}],
      "profiles":{"b":{"type":"delay","delay":10}}})";
  auto p = make_platform(1, "master_host");
  auto src = open_workload(wl, "w0");
  auto out = Outputs::open(dir_ + "/o");
  ASSERT_TRUE(src && out);
  Stepper s(*p, **src, **out);
  std::optional<Message> m = s.next_message();
  ASSERT_TRUE(m);
  Message bad{m->now, {Event{m->now + Nanos::seconds(1), CallMeLater{m->now + Nanos::seconds(2)}, {}}}, {}};
  s.answer_message(bad);
  EXPECT_TRUE(s.ended());
  EXPECT_EQ(s.report().outcome, Outcome::invalid_reply);
  EXPECT_NE(s.report().error.find("is later than the message's now"), std::string::npos) << s.report().error;
  auto text_read = parse_message(serialise(bad), Direction::to_batsim);
  ASSERT_FALSE(text_read);
  EXPECT_NE(text_read.error().find("is later than the message's now"), std::string::npos);
}
