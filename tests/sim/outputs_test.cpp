#include "vtime/sim/outputs.h"

#include <gtest/gtest.h>

using namespace vtime::sim;

namespace {
SimTime at(Nanos n) { return SimTime::from_nanos(n); }
}  // namespace

TEST(Outputs, JobRowsUseBatsimColumnsAndFormats) {
  JobRow r{"10", "w0", "delay10", at(Nanos::seconds(42)), 2, at(Nanos::seconds(5)), std::nullopt};
  r.run = JobRow::Run{"COMPLETED_WALLTIME_REACHED", false, at(Nanos::from_ns(130'005'200'000)), at(Nanos::seconds(5)), "10-11"};
  // A row of real Batsim's py_fcfs_wl20 output, verbatim.
  EXPECT_EQ(jobs_csv_row(r),
            "10,w0,delay10,42.000000,2,5.000000,0,COMPLETED_WALLTIME_REACHED,130.005200,5.000000,135.005200,"
            "88.005200,93.005200,18.601040,10-11,-1.000000,\"\"\n");
  JobRow rejected{"0", "w0", "delay170", at(Nanos::zero()), 1, std::nullopt, std::nullopt};
  EXPECT_EQ(jobs_csv_row(rejected), "0,w0,delay170,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,\"\"\n");
  EXPECT_EQ(jobs_csv_header().substr(0, 40), "job_id,workload_name,profile,submission_");
}

TEST(Outputs, ScheduleRowIsAlphabeticalAndAveragesOverAllJobs) {
  ScheduleStats s;
  s.nb_jobs = 4;
  s.nb_finished = 2;
  s.nb_success = 2;
  s.nb_rejected = 2;
  s.nb_computing_machines = 16;
  s.makespan = at(Nanos::seconds(100));
  s.sum_waiting = 10;
  s.max_waiting = 10;
  s.time_computing = at(Nanos::seconds(30));
  std::string csv = schedule_csv(s);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time,"
            "mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,"
            "nb_jobs,nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,"
            "scheduling_time,simulation_time,success_rate,time_computing,time_idle,time_sleeping,"
            "time_switching_off,time_switching_on,time_unavailable");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1),
            "vtime-sim-0.1.0,0.000000,100.000000,0.000000,0.000000,10.000000,0.000000,0.000000,2.500000,16,0,4,2,0,2,2,0,"
            "0.000000,0.000000,0.500000,30.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n");
}
