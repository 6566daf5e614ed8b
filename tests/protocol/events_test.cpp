#include "vtime/protocol/events.h"

#include <gtest/gtest.h>

using namespace vtime::protocol;

TEST(Events, TypeNamesAreBatsims) {
  EXPECT_EQ(type_name(Payload{ExecuteJob{}}), "EXECUTE_JOB");
  EXPECT_EQ(type_name(Payload{CallMeLater{}}), "CALL_ME_LATER");
  EXPECT_EQ(type_name(Payload{JobKilled{}}), "JOB_KILLED");
  EXPECT_EQ(type_name(Payload{OtherEvent{"SET_JOB_METADATA", {}}}), "SET_JOB_METADATA");
}

TEST(Events, JobStatesRoundTrip) {
  for (auto s : {JobState::completed_successfully, JobState::completed_failed,
                 JobState::completed_walltime_reached, JobState::completed_killed})
    EXPECT_EQ(job_state_from_string(to_string(s)), s);
  EXPECT_FALSE(job_state_from_string("RUNNING"));
}
