#include "vtime/sim/outputs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vtime::sim {

using protocol::Error;

namespace {
std::string fixed(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%Lf", v);
  return buf;
}
long double secs(SimTime t) { return t.seconds(); }
}  // namespace

std::string jobs_csv_header() {
  return "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
         "requested_time,success,final_state,starting_time,execution_time,finish_time,"
         "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n";
}

namespace {

// A text field as RFC 4180 wants it: quoted (inner quotes doubled) only when it holds a comma
// or a quote, so that every id Batsim writes plainly is written the same way.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string jobs_csv_row(const JobRow& r) {
  std::string s = csv_field(r.name) + "," + csv_field(r.workload) + "," + csv_field(r.profile) + "," +
                  format_seconds_6(r.submission) + "," +
                  std::to_string(r.requested_resources) + "," +
                  (r.walltime ? format_seconds_6(*r.walltime) : std::string("-1.000000")) + ",";
  if (!r.run) return s + "0,REJECTED,,,,,,,,,\"\"\n";
  const JobRow::Run& x = *r.run;
  SimTime finish = x.start + x.runtime;
  SimTime waiting = x.start - r.submission;
  SimTime turnaround = finish - r.submission;
  long double stretch = turnaround.seconds() / x.runtime.seconds();
  s += std::string(x.success ? "1" : "0") + "," + x.final_state + "," + format_seconds_6(x.start) + "," +
       format_seconds_6(x.runtime) + "," + format_seconds_6(finish) + "," + format_seconds_6(waiting) + "," +
       format_seconds_6(turnaround) + "," + fixed(stretch) + "," + x.allocation + ",-1.000000,\"\"\n";
  return s;
}

std::string schedule_csv(const ScheduleStats& s) {
  // Batsim writes a std::map, hence alphabetical columns. Means are over all jobs (Batsim
  // divides by nb_jobs, rejected ones included).
  long double n = s.nb_jobs > 0 ? static_cast<long double>(s.nb_jobs) : 1.0L;
  std::string header =
      "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time,"
      "mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,"
      "nb_grouped_switches,nb_jobs,nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,"
      "nb_jobs_success,nb_machine_switches,scheduling_time,simulation_time,success_rate,"
      "time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on,"
      "time_unavailable\n";
  std::string row = "vtime-sim-0.1.0,0.000000," + format_seconds_6(s.makespan) + "," + fixed(s.max_slowdown) + "," +
                    fixed(s.max_turnaround) + "," + fixed(s.max_waiting) + "," + fixed(s.sum_slowdown / n) + "," +
                    fixed(s.sum_turnaround / n) + "," + fixed(s.sum_waiting / n) + "," +
                    std::to_string(s.nb_computing_machines) + ",0," + std::to_string(s.nb_jobs) + "," +
                    std::to_string(s.nb_finished) + "," + std::to_string(s.nb_killed) + "," +
                    std::to_string(s.nb_rejected) + "," + std::to_string(s.nb_success) + ",0," +
                    fixed(s.scheduling_seconds) + "," + fixed(s.simulation_seconds) + "," +
                    fixed(static_cast<long double>(s.nb_success) / n) + "," + fixed(secs(s.time_computing)) + "," +
                    fixed(secs(s.time_idle)) + ",0.000000,0.000000,0.000000,0.000000\n";
  return header + row;
}

Result<std::unique_ptr<Outputs>> Outputs::open(const std::string& prefix) {
  std::unique_ptr<Outputs> o(new Outputs());
  o->jobs_path_ = prefix + "_jobs.csv";
  o->schedule_path_ = prefix + "_schedule.csv";
  // "e": O_CLOEXEC, so the tree vtime run starts after opening it does not inherit it.
  o->jobs_ = std::fopen(o->jobs_path_.c_str(), "we");
  if (o->jobs_ == nullptr)
    return Error{"cannot create output file '" + o->jobs_path_ + "': " + std::strerror(errno)};
  o->append(jobs_csv_header());
  if (!o->error_.empty()) return Error{o->error_};
  return o;
}

Outputs::~Outputs() {
  if (jobs_ != nullptr) std::fclose(jobs_);
}

void Outputs::append(const std::string& line) {
  // One write per row: a run cut short keeps every row written so far.
  bool ok = std::fwrite(line.data(), 1, line.size(), jobs_) == line.size();
  ok = std::fflush(jobs_) == 0 && ok;
  if (!ok && error_.empty()) error_ = "cannot write '" + jobs_path_ + "': " + std::strerror(errno);
}

void Outputs::job_done(const JobRow& row) { append(jobs_csv_row(row)); }

bool Outputs::write_schedule(const ScheduleStats& s) {
  std::FILE* f = std::fopen(schedule_path_.c_str(), "we");
  bool ok = f != nullptr;
  if (ok) {
    std::string text = schedule_csv(s);
    ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fclose(f) == 0 && ok;
  }
  if (!ok && error_.empty()) error_ = "cannot write '" + schedule_path_ + "': " + std::strerror(errno);
  return ok && error_.empty();
}

}  // namespace vtime::sim
