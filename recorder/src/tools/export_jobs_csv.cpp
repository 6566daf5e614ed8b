// jobs-csv export: the simulator's own row writer fed with the jobs rebuilt from the trace, so
// the file is byte-identical to the PREFIX_jobs.csv of the recorded run.
#include "exports.h"
#include "job_tracker.h"

namespace vtime::recorder::tools {

void write_jobs_csv(TraceReader& r, std::ostream& out, std::ostream& err) {
  JobTracker jobs;
  Json rec;
  while (r.next(rec)) jobs.add(rec);
  jobs.finish();
  out << sim::jobs_csv_header();
  for (const sim::JobRow& row : jobs.rows()) out << sim::jobs_csv_row(row);
  for (const std::string& p : jobs.problems()) err << "vtime trace export: skipped an unparsable message at " << p << "\n";
}

}  // namespace vtime::recorder::tools
