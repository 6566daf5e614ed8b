// parse_message / serialise on hand-written messages: every error names the event, the field
// and the reason.
#include "vtime/protocol/codec.h"

#include <gtest/gtest.h>

using namespace vtime::protocol;

namespace {
std::string reply_error(const std::string& bytes) {
  auto r = parse_message(bytes, Direction::to_batsim);
  return r ? std::string("(accepted)") : r.error();
}
}  // namespace

TEST(Codec, ParsesADecisionMessage) {
  auto r = parse_message(
      R"({"now":10.0006,"events":[{"timestamp":10.0006,"type":"EXECUTE_JOB","data":{"job_id":"w0!0","alloc":"0-1 4"}},)"
      R"({"timestamp":10.0006,"type":"CALL_ME_LATER","data":{"timestamp":25}}]})",
      Direction::to_batsim);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->now, Nanos::from_ns(10'000'600'000));
  ASSERT_EQ(r->events.size(), 2u);
  const auto& ex = std::get<ExecuteJob>(r->events[0].payload);
  EXPECT_EQ(ex.job_id, "w0!0");
  EXPECT_EQ(ex.alloc.to_string(), "0-1 4");
  EXPECT_EQ(std::get<CallMeLater>(r->events[1].payload).target, Nanos::seconds(25));
}

TEST(Codec, MessageLevelErrors) {
  EXPECT_EQ(reply_error(""), "message is empty (0 bytes); expected a JSON object like {\"now\": 12.5, \"events\": [...]}");
  EXPECT_NE(reply_error(R"({"now": 10.0006, "events": [ {"timestamp": 10.0006)").find("message is not valid JSON: parse error"), std::string::npos);
  EXPECT_EQ(reply_error("[]"), "message must be a JSON object (got an array); expected a JSON object like {\"now\": 12.5, \"events\": [...]}");
  EXPECT_EQ(reply_error(R"({"now":10.0006})"), "message: missing field 'events'");
  EXPECT_EQ(reply_error(R"({"events":[]})"), "message: missing field 'now'");
  EXPECT_EQ(reply_error(R"({"now":"10.0006","events":[]})"),
            "message: field 'now' must be a number of seconds (got string \"10.0006\")");
  EXPECT_EQ(reply_error(R"({"now":1,"events":{}})"), "message: field 'events' must be an array (got an object)");
}

TEST(Codec, EventLevelErrors) {
  EXPECT_EQ(reply_error(R"({"now":1,"events":[3]})"), "event 0 must be an object (got number 3)");
  EXPECT_EQ(reply_error(R"({"now":1,"events":[{"type":"CALL_ME_LATER","data":{"timestamp":2}}]})"),
            "event 0 (CALL_ME_LATER): missing field 'timestamp'");
  EXPECT_EQ(reply_error(R"({"now":10.0006,"events":[{"timestamp":11.0006,"type":"EXECUTE_JOB","data":{"job_id":"w0!0","alloc":"0"}}]})"),
            "event 0 (EXECUTE_JOB): timestamp 11.000600 is later than the message's now 10.000600 (Batsim requires timestamp <= now)");
  EXPECT_EQ(reply_error(R"({"now":1,"events":[{"timestamp":1,"type":"FOO","data":{}}]})").substr(0, 43),
            "event 0 (FOO): unknown event type 'FOO' (ex");
  EXPECT_EQ(reply_error(R"({"now":1,"events":[{"timestamp":1,"type":"JOB_SUBMITTED","data":{}}]})"),
            "event 0 (JOB_SUBMITTED): JOB_SUBMITTED is sent by Batsim, a scheduler cannot send it");
  EXPECT_EQ(reply_error(R"({"now":1,"events":[{"timestamp":1,"type":"REJECT_JOB"}]})"),
            "event 0 (REJECT_JOB): missing field 'data'");
  EXPECT_EQ(reply_error(R"({"now":1,"events":[{"timestamp":1,"type":"REJECT_JOB","data":[]}]})"),
            "event 0 (REJECT_JOB): field 'data' must be an object (got an array)");
}

TEST(Codec, DecisionFieldErrors) {
  auto ev = [](const std::string& type, const std::string& data) {
    return reply_error(R"({"now":5,"events":[{"timestamp":1,"type":"CALL_ME_LATER","data":{"timestamp":9}},{"timestamp":2,"type":")" +
                       type + R"(","data":)" + data + "}]}");
  };
  EXPECT_EQ(ev("EXECUTE_JOB", R"({"job_id":"w0!0","alloc":3})"),
            "event 1 (EXECUTE_JOB): field 'data.alloc' must be a string like '0-3 5' (got number 3)");
  EXPECT_EQ(ev("EXECUTE_JOB", R"({"job_id":"w0!0","alloc":"0-"})"),
            "event 1 (EXECUTE_JOB): field 'data.alloc' must be a string like '0-3 5' ('0-' is not a range like '0-3')");
  EXPECT_EQ(ev("EXECUTE_JOB", R"({"job_id":"w0!0","alloc":""})"),
            "event 1 (EXECUTE_JOB): field 'data.alloc' must name at least one resource, like '0-3 5'");
  EXPECT_EQ(ev("EXECUTE_JOB", R"({"job_id":"7","alloc":"0"})"),
            "event 1 (EXECUTE_JOB): field 'data.job_id' must look like 'WORKLOAD!JOB', e.g. 'w0!42' (got '7')");
  EXPECT_EQ(ev("EXECUTE_JOB", R"({"job_id":"w0!0","alloc":"0","a":1,"b":2})"),
            "event 1 (EXECUTE_JOB): 'data' must have 2 to 3 members (Batsim 4.2.1 aborts otherwise), got 4: 'job_id', 'alloc', 'a', 'b'");
  EXPECT_EQ(ev("CALL_ME_LATER", R"({"timestamp":5.0,"id":1})"),
            "event 1 (CALL_ME_LATER): 'data' must have exactly 1 member (Batsim 4.2.1 aborts otherwise), got 2: 'timestamp', 'id'");
  EXPECT_EQ(ev("CALL_ME_LATER", R"({"when":5.0})"), "event 1 (CALL_ME_LATER): missing field 'data.timestamp'");
  EXPECT_EQ(ev("KILL_JOB", R"({"job_ids":[]})"), "event 1 (KILL_JOB): field 'data.job_ids' must not be empty");
  EXPECT_EQ(ev("KILL_JOB", R"({"job_ids":["w0!1",2]})"),
            "event 1 (KILL_JOB): field 'data.job_ids' must be an array of strings (element 1 is number 2)");
  EXPECT_EQ(ev("REJECT_JOB", R"({"job_id":5})"), "event 1 (REJECT_JOB): field 'data.job_id' must be a string (got number 5)");
  EXPECT_EQ(ev("NOTIFY", R"({"type":"no_more_static_job_to_submit"})"),
            "event 1 (NOTIFY): field 'data.type' must be 'registration_finished' or 'continue_registration' "
            "(Batsim 4.2.1 aborts on any other NOTIFY from a scheduler; got 'no_more_static_job_to_submit')");
}

TEST(Codec, ToleratesExtraMembersAndKeepsThem) {
  std::string in =
      R"({"now":10.0006,"events":[{"timestamp":10.0006,"type":"EXECUTE_JOB","data":{"job_id":"w0!0","alloc":"0","extra":"x"},"extra_ev":1}],"extra_top":42})";
  auto r = parse_message(in, Direction::to_batsim);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(serialise(*r),
            R"({"now":10.000600,"events":[{"timestamp":10.000600,"type":"EXECUTE_JOB","data":{"job_id":"w0!0","alloc":"0","extra":"x"},"extra_ev":1}],"extra_top":42})");
}

TEST(Codec, KnownButUnmodelledTypesAreKeptOpaque) {
  auto r = parse_message(R"({"now":3,"events":[{"timestamp":3,"type":"SET_JOB_METADATA","data":{"job_id":"w0!1","metadata":"m"}}]})",
                         Direction::to_batsim);
  ASSERT_TRUE(r) << r.error();
  const auto& o = std::get<OtherEvent>(r->events[0].payload);
  EXPECT_EQ(o.type, "SET_JOB_METADATA");
  EXPECT_EQ(o.data.text, R"({"job_id":"w0!1","metadata":"m"})");
}

TEST(Codec, SerialisesTypedEventsInBatsimOrder) {
  Message m;
  m.now = Nanos::seconds(15);
  m.events.push_back(Event{Nanos::seconds(15), JobCompleted{"w0!0", JobState::completed_walltime_reached, -1,
                                                            ResourceSet::from_ids({0, 1, 3}), {}}, {}});
  m.events.push_back(Event{Nanos::seconds(15), RequestedCall{}, {}});
  m.events.push_back(Event{Nanos::seconds(15), JobKilled{{"w0!2"}, RawJson{R"({"w0!2":{"profile_name":"d","progress":0.500000}})"}, {}}, {}});
  EXPECT_EQ(serialise(m),
            R"({"now":15.000000,"events":[{"timestamp":15.000000,"type":"JOB_COMPLETED","data":{"job_id":"w0!0","job_state":"COMPLETED_WALLTIME_REACHED","return_code":-1,"alloc":"0-1 3"}},)"
            R"({"timestamp":15.000000,"type":"REQUESTED_CALL","data":{}},)"
            R"({"timestamp":15.000000,"type":"JOB_KILLED","data":{"job_ids":["w0!2"],"job_progress":{"w0!2":{"profile_name":"d","progress":0.500000}}}}]})");
}

TEST(Codec, BuildsAJobDescriptionWhenNoneWasGiven) {
  JobSubmitted s;
  s.job_id = "w0!3";
  s.job = JobDescription{"w0!3", 2, Nanos::seconds(30), Nanos::seconds(100), "delay50"};
  EXPECT_EQ(serialise(Event{Nanos::seconds(30), s, {}}),
            R"({"timestamp":30.000000,"type":"JOB_SUBMITTED","data":{"job_id":"w0!3","job":{"id":"w0!3","subtime":30.000000,"walltime":100.000000,"res":2,"profile":"delay50"}}})");
}

TEST(Codec, CanonicalJsonUsesBatsimNumberFormat) {
  auto r = canonical_json(R"({"id":"w0!0", "subtime":10, "walltime":5.0, "cpu":3.516, "s":"a\"b"})");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->text, R"({"id":"w0!0","subtime":10,"walltime":5.000000,"cpu":3.516000,"s":"a\"b"})");
  EXPECT_FALSE(canonical_json("{"));
}
