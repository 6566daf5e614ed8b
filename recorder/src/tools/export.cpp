// `vtime trace export`: opens the trace and the output, runs one format, reports problems.
#include <vtime/recorder/tools.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "exports.h"
#include "trace_input.h"

namespace vtime::recorder::tools {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// run.trace.zst -> run.trace.png: beside the trace, so a default never overwrites an input.
std::string default_image(const std::string& trace) {
  std::string base = trace;
  if (ends_with(base, ".zst")) base.resize(base.size() - 4);
  return base + ".png";
}

}  // namespace

int export_trace(const std::string& path, const ExportOptions& o, std::ostream& out, std::ostream& err) {
  std::string output = o.output;
  if (o.format == ExportFormat::gantt) {
    if (output.empty()) output = default_image(path);
    if (output == "-") {
      err << "vtime trace export: a gantt chart is an image: give -o FILE.png or FILE.svg\n";
      return kTraceUsage;
    }
    if (!ends_with(output, ".png") && !ends_with(output, ".svg")) {
      err << "vtime trace export: -o " << output << ": the gantt chart is written as .png or .svg\n";
      return kTraceUsage;
    }
  }
  auto reader = open_trace(path, err);
  if (!reader) return kTraceUnreadable;

  int rc = kTraceOk;
  if (o.format == ExportFormat::gantt) {
    rc = write_gantt(*reader, path, output, err);
  } else {
    std::ofstream file;
    bool to_stdout = output.empty() || output == "-";
    if (!to_stdout) {
      file.open(output, std::ios::binary | std::ios::trunc);
      if (!file) {
        err << "vtime trace export: cannot create " << output << ": " << std::strerror(errno) << "\n";
        return kTraceOutputFailed;
      }
    }
    std::ostream& dest = to_stdout ? out : file;
    if (o.format == ExportFormat::jobs_csv) write_jobs_csv(*reader, dest, err);
    else write_perfetto(*reader, path, dest, err);
    dest.flush();
    if (!dest) {
      err << "vtime trace export: cannot write " << (to_stdout ? std::string("the output") : output) << "\n";
      return kTraceOutputFailed;
    }
  }
  size_t problems = report_problems(*reader, path, err);
  if (rc != kTraceOk) return rc;
  return problems > 0 ? kTraceProblems : kTraceOk;
}

}  // namespace vtime::recorder::tools
