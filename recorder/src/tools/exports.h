// The three export formats of `vtime trace export`, each reading the whole trace from `r`.
// export.cpp opens the trace and the output and reports the trace's problems.
#pragma once

#include <vtime/recorder/trace.h>

#include <ostream>
#include <string>

namespace vtime::recorder::tools {

// Exactly the PREFIX_jobs.csv that vtime sim wrote for the recorded run.
void write_jobs_csv(TraceReader& r, std::ostream& out, std::ostream& err);

// Chrome trace-event JSON for ui.perfetto.dev / chrome://tracing.
void write_perfetto(TraceReader& r, const std::string& trace_name, std::ostream& out, std::ostream& err);

// A Gantt chart of the jobs over the resources, drawn by gnuplot into `image` (.png or .svg).
// Returns an exit code (kTraceOutputFailed when gnuplot is missing or fails).
int write_gantt(TraceReader& r, const std::string& trace_name, const std::string& image, std::ostream& err);

}  // namespace vtime::recorder::tools
