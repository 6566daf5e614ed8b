// SWF -> Batsim JSON with the trimming the Batkube thesis did by hand (section 4.1.2): a window of
// the trace (given, or the one of a given length whose utilisation is closest to a target, as
// evalys picks it), capped durations, requests normalised to the platform's hosts, a walltime
// policy, the job statuses kept, and a shift so the first submission is at 0. The output is
// deterministic byte for byte: same trace and options, same file.
//
// Example:
//     ConvertOptions o;
//     o.window_length = 36000; o.utilisation = 0.8; o.max_duration = 3600; o.shift = true;
//     o.procs_per_host = 20; o.hosts = 16;
//     auto c = convert(trace, o);
//     if (c) write(c->json); else die(c.error());  // c->report says which window was taken
#pragma once

#include <vtime/workload/swf.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace vtime::workload {

enum class TooBig { kCap, kDrop, kKeep };  // a request for more hosts than the platform has
enum class Walltime { kRequested, kRuntime, kFactor, kNone };

struct ConvertOptions {
  std::optional<double> window_start, window_end;  // --window START:END (trace seconds)
  std::optional<double> window_length;             // --window-length D, with utilisation
  std::optional<double> utilisation;               // --utilisation U (0..1]
  std::optional<double> max_duration;              // --max-duration D
  std::optional<int64_t> procs_per_host;           // --procs-per-host N
  std::optional<int64_t> hosts;                    // --hosts N
  TooBig too_big = TooBig::kCap;
  Walltime walltime = Walltime::kRequested;
  double walltime_factor = 1;
  // SWF statuses kept: 1 completed, 0 failed, 5 cancelled (only if it ran), 2/3/4 partial
  // executions, -1 unknown.
  std::set<int> statuses = {1, 0, 5, -1};
  bool shift = false;
};

// The window --window-length/--utilisation took, and why.
struct ChosenWindow {
  double start = 0, end = 0;
  double utilisation = 0;  // of the chosen window
  int64_t capacity = 0;    // processors the utilisation is relative to
};

struct Conversion {
  std::string json;  // the Batsim workload
  size_t jobs = 0;
  int64_t nb_res = 0;
  std::optional<ChosenWindow> window;
  // Jobs left out, by reason (in the report): status, no size, no run time, outside the
  // window, too big (with TooBig::kDrop).
  std::vector<std::pair<std::string, size_t>> dropped;
  size_t capped_duration = 0, capped_size = 0;
  double shift = 0;  // seconds subtracted from every submission
};

Result<Conversion> convert(const SwfTrace& trace, const ConvertOptions& options);

// Parsers for the command line's values: a duration with an optional unit (s, min, h, d; bare =
// seconds), a status list (completed,failed,cancelled,partial,unknown or numbers).
Result<double> parse_duration(const std::string& text);
Result<std::set<int>> parse_statuses(const std::string& text);

// The mean utilisation of [start, start + length) by the jobs' executions (submit + wait to
// + run), relative to `capacity` processors.
struct UtilisationProfile {
  std::vector<double> times;   // breakpoints, increasing
  std::vector<double> area;    // integral of busy processors from times[0] to times[i]
  std::vector<double> busy;    // busy processors on [times[i], times[i+1])
  double integral(double t) const;  // from times[0] to t
  double mean(double start, double length, int64_t capacity) const {
    return (integral(start + length) - integral(start)) / (length * static_cast<double>(capacity));
  }
};
UtilisationProfile utilisation_profile(const std::vector<SwfJob>& jobs);

}  // namespace vtime::workload
