// The jobs of a run, rebuilt from the Batsim messages of its trace (msg records from_batsim and
// to_batsim): what was submitted, when each job started and ended, on which resources, and the
// rows of `_jobs.csv` in the order the simulator wrote them.
//
// Why it replays the simulator's order: vtime sim appends a row when a job ends (its end timer
// fires), when it is rejected and when it is killed, the last two while it applies the reply.
// Applying a decision stamped later than the clock first fires the timers due by then, so job
// ends reported in the NEXT message can come before a rejection or a kill of this reply. The
// tracker therefore holds each reply until the next Batsim message is known and interleaves
// them by the same rule (sim/src/simulator.cpp, Simulation::apply).
#pragma once

#include <vtime/recorder/trace.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vtime/protocol/events.h"
#include "vtime/sim/outputs.h"

namespace vtime::recorder::tools {

struct TrackedJob {
  std::string id;                   // "w0!3"
  protocol::JobDescription desc;
  std::optional<protocol::Nanos> start, end;
  protocol::ResourceSet alloc;
  std::string final_state;          // "" until it ends; COMPLETED_..., REJECTED
};

struct TrackedResource {
  int id = 0;
  std::string name;
};

class JobTracker {
 public:
  // Feeds one record; only msg records from_batsim and to_batsim matter.
  void add(const Json& rec);
  // The end of the trace: applies the reply still held (no job ended after it).
  void finish();

  const std::vector<TrackedJob>& jobs() const { return jobs_; }  // in submission order
  const TrackedJob* find(const std::string& id) const;
  const std::vector<sim::JobRow>& rows() const { return rows_; }
  const std::vector<TrackedResource>& resources() const { return resources_; }
  // Messages that could not be parsed: "seq 12: ...". Their content is ignored.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void on_batsim(const protocol::Message& m);
  void apply(const protocol::Message& reply, const std::vector<const protocol::Event*>& ends);
  void complete(const protocol::Event& job_completed);
  void row(TrackedJob& j);
  TrackedJob* lookup(const std::string& id);

  std::vector<TrackedJob> jobs_;
  std::map<std::string, size_t> index_;
  std::vector<sim::JobRow> rows_;
  std::vector<TrackedResource> resources_;
  std::vector<std::string> problems_;
  std::optional<protocol::Message> held_reply_;
  protocol::Nanos now_;  // the simulator's clock when it sent its last message
};

}  // namespace vtime::recorder::tools
