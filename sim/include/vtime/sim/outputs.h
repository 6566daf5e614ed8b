// Batsim-compatible outputs: PREFIX_jobs.csv (one row per finished or rejected job, appended
// and flushed as it happens, so a cut-short run keeps what happened) and PREFIX_schedule.csv
// (one row of aggregate metrics, written at the end). Columns, order and number formats are
// Batsim 4.2.1's ("%f" times, -1.000000 for "none", "" metadata), so evalys reads them.
//
// Example:
//     auto out = Outputs::open("runs/out");       // runs/out_jobs.csv, runs/out_schedule.csv
//     out->job_finished(row);
//     out->write_schedule(stats);
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "vtime/protocol/events.h"
#include "vtime/protocol/nanos.h"
#include "vtime/protocol/result.h"
#include "vtime/sim/sim_time.h"

namespace vtime::sim {

using protocol::Nanos;
using protocol::Result;

struct JobRow {
  std::string name;               // job id without the workload prefix
  std::string workload;
  std::string profile;
  SimTime submission;
  int requested_resources = 0;
  std::optional<SimTime> walltime;
  // Absent for rejected jobs (their columns stay empty, as in Batsim).
  struct Run {
    std::string final_state;      // COMPLETED_SUCCESSFULLY, COMPLETED_KILLED, ...
    bool success = false;
    SimTime start;
    SimTime runtime;              // Batsim puts 10 us instead of a zero runtime
    std::string allocation;       // "0-3 5"
  };
  std::optional<Run> run;
};

// Aggregates of schedule.csv, computed by the caller.
struct ScheduleStats {
  long nb_jobs = 0, nb_finished = 0, nb_success = 0, nb_killed = 0, nb_rejected = 0;
  int nb_computing_machines = 0;
  SimTime makespan;
  long double sum_waiting = 0, sum_turnaround = 0, sum_slowdown = 0;    // seconds
  long double max_waiting = 0, max_turnaround = 0, max_slowdown = 0;
  SimTime time_computing, time_idle;
  double scheduling_seconds = 0, simulation_seconds = 0;               // wall clock
};

class Outputs {
 public:
  // Creates PREFIX_jobs.csv with its header right away (so its presence shows the run began).
  static Result<std::unique_ptr<Outputs>> open(const std::string& prefix);
  ~Outputs();
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;

  void job_done(const JobRow& row);
  // false when the file cannot be written, or a row of PREFIX_jobs.csv could not be (disk full).
  bool write_schedule(const ScheduleStats& s);
  const std::string& schedule_path() const { return schedule_path_; }
  // The first write that failed, with the file and the reason; "" while all went well.
  const std::string& error() const { return error_; }

 private:
  Outputs() = default;
  void append(const std::string& line);
  std::FILE* jobs_ = nullptr;
  std::string jobs_path_;
  std::string schedule_path_;
  std::string error_;
};

// Row and header text, exposed for tests.
std::string jobs_csv_header();
std::string jobs_csv_row(const JobRow& row);
std::string schedule_csv(const ScheduleStats& s);

}  // namespace vtime::sim
