// One recorded run: the trace file with its header, the recorder the broker feeds, and the
// sidecar of volatile facts (docs/trace-format.md).
//
// Example (what `vtime run --record` does):
//     RecordingSetup rs{.path = "run.trace", .command = "run", ...};
//     auto rec = Recording::start(rs, &err);          // header written, sidecar started
//     broker_options.observer = &rec->recorder();
//     broker::run(broker_options);                     // records as it goes, writes the trailer
//     rec->end(wall_seconds, /*compress=*/false);      // sidecar completed
#pragma once

#include <vtime/recorder/recorder.h>
#include <vtime/recorder/trace.h>

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vtime::recorder {

struct RecordingSetup {
  std::string path;
  std::string command;                                     // "run"
  Json options = Json::object();                           // every option that can change the run
  std::vector<std::pair<std::string, std::string>> inputs; // (role, path)
  std::vector<std::string> scheduler;                      // as given, {endpoint} not substituted
  int64_t epoch_ns = 0;
  std::vector<std::pair<std::string, std::string>> endpoints;  // volatile: sidecar only
  // Clock-read patterns left out besides the defaults (thread names, or "proc:NAME" for whole
  // processes; see vtime/observe.h clock_reads).
  std::vector<std::string> ignored_threads;
};

// The header line of a trace (inputs hashed now). nullopt and *error if an input is unreadable.
std::optional<Json> make_header(const RecordingSetup& s, std::string* error);

class Recording {
 public:
  static std::unique_ptr<Recording> start(const RecordingSetup& s, std::string* error);
  Recorder& recorder() { return *recorder_; }
  void set_pid(const std::string& role, pid_t pid);
  // Completes the sidecar and, if asked, replaces TRACE by TRACE.zst. False (reported on
  // stderr) if the trace could not be written completely.
  bool end(double wall_seconds, bool compress);

 private:
  Recording() = default;
  void write_sidecar(double wall_seconds, bool done);
  std::string path_;
  TraceFileSink* sink_ = nullptr;
  std::unique_ptr<TraceFileSink> sink_owner_;
  std::unique_ptr<Recorder> recorder_;
  Json sidecar_;
};

}  // namespace vtime::recorder
