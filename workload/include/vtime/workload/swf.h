// The Standard Workload Format (SWF) of the Parallel Workloads Archive: a header of "; Key: Value"
// comment lines, then one job per line, 18 whitespace-separated numeric fields, -1 for unknown.
// https://www.cs.huji.ac.il/labs/parallel/workload/swf.html
//
// Example:
//     std::ifstream in("KIT-FH2-2016-1.swf");
//     auto t = read_swf([&](std::string& line) { return bool(std::getline(in, line)); }, {});
//     if (!t) die(t.error());              // "line 12: field 4 (run time) 'x' is not a number"
//     for (const SwfJob& j : t->jobs) ... j.submit, j.run, j.procs() ...
#pragma once

#include <vtime/protocol/result.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace vtime::workload {

using protocol::Error;
using protocol::Result;

// One job: the 18 fields, in SWF's order and units (seconds, processors, KB).
struct SwfJob {
  int64_t number = -1;        // 1  job number
  double submit = -1;         // 2  submit time (s from the trace's start)
  double wait = -1;           // 3  wait time (s)
  double run = -1;            // 4  run time (s)
  int64_t alloc_procs = -1;   // 5  number of allocated processors
  double cpu_time = -1;       // 6  average CPU time used (s)
  double memory = -1;         // 7  used memory (KB per processor)
  int64_t req_procs = -1;     // 8  requested number of processors
  double req_time = -1;       // 9  requested time (s)
  double req_memory = -1;     // 10 requested memory (KB per processor)
  int status = -1;            // 11 1 completed, 0 failed, 5 cancelled, 2/3/4 partial, -1 unknown
  int64_t user = -1;          // 12
  int64_t group = -1;         // 13
  int64_t executable = -1;    // 14
  int64_t queue = -1;         // 15
  int64_t partition = -1;     // 16
  int64_t preceding = -1;     // 17 preceding job number
  double think_time = -1;     // 18 think time from preceding job (s)

  // Allocated processors when known, else requested; -1 when neither is.
  int64_t procs() const { return alloc_procs > 0 ? alloc_procs : req_procs > 0 ? req_procs : -1; }
};

struct SwfHeader {
  std::vector<std::pair<std::string, std::string>> fields;  // every "; Key: Value", in order
  std::optional<int64_t> max_nodes, max_procs, unix_start_time;
  std::string time_zone;  // TimeZoneString
};

struct SwfTrace {
  SwfHeader header;
  std::vector<SwfJob> jobs;
  size_t skipped = 0;                // malformed lines skipped (skip_bad)
  std::string first_skipped_error;   // the first of them, for the report
};

struct SwfReadOptions {
  bool skip_bad = false;  // count and skip malformed lines instead of failing on the first
};

// The names of the 18 fields, 1-based ("run time" for 4), for messages.
const char* swf_field_name(int field);

// Reads a trace line by line (`next_line` fills its argument, false at the end). A malformed line
// (not 18 fields, a non-numeric field, a negative value other than -1 where only -1 means
// unknown) is an error naming its line number and field, unless options.skip_bad.
Result<SwfTrace> read_swf(const std::function<bool(std::string&)>& next_line, const SwfReadOptions& options);

// Writes a trace: the header fields, then one line per job.
void write_swf(std::ostream& out, const SwfTrace& trace);

}  // namespace vtime::workload
