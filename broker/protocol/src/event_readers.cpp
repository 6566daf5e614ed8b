// One reader per Batsim 4.2.1 event type. Each shows the message it expects; the checks mirror
// Batsim's JsonProtocolReader (member counts included) so that what passes here is accepted by
// a real Batsim.
#include "event_readers.h"

#include <array>

namespace vtime::protocol::detail {
namespace {

// ---- Batsim -> scheduler ---------------------------------------------------------------------

Resource read_resource(const Json& j, const Fields& parent, std::string_view list, size_t i) {
  std::string where = parent.where();
  std::string prefix = "data." + std::string(list) + "[" + std::to_string(i) + "].";
  if (!j.is_object()) parent.fail_here("field '" + prefix.substr(0, prefix.size() - 1) + "' must be an object");
  Fields f(j, where, prefix);
  Resource r;
  r.id = f.integer("id");
  r.name = f.string("name");
  r.state = f.string("state");
  if (f.has("properties")) r.properties = f.string_map("properties");
  if (f.has("zone_properties")) r.zone_properties = f.string_map("zone_properties");
  return r;
}

std::vector<Resource> read_resources(const Fields& f, std::string_view key) {
  const Json& v = f.require(key);
  if (!v.is_array()) f.fail_field(key, "must be an array of resources");
  std::vector<Resource> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(read_resource(v[i], f, key, i));
  return out;
}

// {"nb_resources":16,"nb_compute_resources":16,"nb_storage_resources":0,
//  "allow_compute_sharing":false,"allow_storage_sharing":true,"config":{...},
//  "compute_resources":[{"id":0,"name":"host0","state":"idle","properties":{"role":""},
//  "zone_properties":{}}],"storage_resources":[],"workloads":{"w0":"wl.json"},
//  "profiles":{"w0":{"delay10":{"type":"delay","delay":10}}}}
Payload read_simulation_begins(const Fields& f) {
  SimulationBegins b;
  b.nb_resources = f.integer("nb_resources");
  b.nb_compute_resources = f.integer("nb_compute_resources");
  b.nb_storage_resources = f.integer("nb_storage_resources");
  b.allow_compute_sharing = f.boolean("allow_compute_sharing");
  b.allow_storage_sharing = f.boolean("allow_storage_sharing");
  b.config = f.object_raw("config");
  b.compute_resources = read_resources(f, "compute_resources");
  b.storage_resources = read_resources(f, "storage_resources");
  b.workloads = f.string_map("workloads");
  b.profiles = f.object_raw("profiles");
  b.extras = f.extras({"nb_resources", "nb_compute_resources", "nb_storage_resources",
                       "allow_compute_sharing", "allow_storage_sharing", "config",
                       "compute_resources", "storage_resources", "workloads", "profiles"});
  return b;
}

// {}
Payload read_simulation_ends(const Fields& f) { return SimulationEnds{f.extras({})}; }

// {"job_id":"w0!0","job":{"id":"w0!0","subtime":10,"walltime":5.000000,"res":1,
//  "profile":"delay10"}}   (+ "profile":{...} with profiles-forwarded-on-submission)
Payload read_job_submitted(const Fields& f) {
  JobSubmitted s;
  s.job_id = f.job_id("job_id");
  const Json& job = f.require("job");
  if (!job.is_object()) f.fail_field("job", "must be an object (got " + describe(job) + ")");
  Fields jf(job, f.where(), "data.job.");
  s.job.id = jf.string("id");
  s.job.res = jf.integer("res");
  s.job.subtime = jf.seconds("subtime");
  s.job.profile = jf.string("profile");
  if (jf.has("walltime")) {
    Nanos w = jf.seconds("walltime");
    if (w >= Nanos::zero()) s.job.walltime = w;
  }
  s.job_json = RawJson{dump_batsim(job)};
  if (f.has("profile")) s.profile = f.raw("profile");
  s.extras = f.extras({"job_id", "job", "profile"});
  return s;
}

// {"job_id":"w0!0","job_state":"COMPLETED_SUCCESSFULLY","return_code":0,"alloc":"0"}
Payload read_job_completed(const Fields& f) {
  JobCompleted c;
  c.job_id = f.job_id("job_id");
  std::string state = f.string("job_state");
  auto s = job_state_from_string(state);
  if (!s)
    f.fail_field("job_state", "must be one of COMPLETED_SUCCESSFULLY, COMPLETED_FAILED, "
                              "COMPLETED_WALLTIME_REACHED, COMPLETED_KILLED (got '" + state + "')");
  c.job_state = *s;
  c.return_code = f.integer("return_code");
  c.alloc = f.resources("alloc");
  c.extras = f.extras({"job_id", "job_state", "return_code", "alloc"});
  return c;
}

// {"job_ids":["w0!1"],"job_progress":{"w0!1":{"profile_name":"delay10","progress":0.5}}}
Payload read_job_killed(const Fields& f) {
  JobKilled k;
  k.job_ids = f.string_array("job_ids", false);
  if (f.has("job_progress")) k.job_progress = f.object_raw("job_progress");
  k.extras = f.extras({"job_ids", "job_progress"});
  return k;
}

// {}
Payload read_requested_call(const Fields& f) { return RequestedCall{f.extras({})}; }

// {"type":"no_more_static_job_to_submit"}   (both directions)
Payload read_notify(const Fields& f) {
  Notify n;
  n.type = f.string("type");
  n.extras = f.extras({"type"});
  return n;
}

// ---- scheduler -> Batsim ---------------------------------------------------------------------

// {"job_id":"w0!0","alloc":"0-3 5"}   (+ one optional member: "mapping", ...)
Payload read_execute_job(const Fields& f) {
  f.expect_members(2, 3);
  ExecuteJob e;
  e.job_id = f.job_id("job_id");
  e.alloc = f.resources("alloc");
  if (e.alloc.empty()) f.fail_field("alloc", "must name at least one resource, like '0-3 5'");
  e.extras = f.extras({"job_id", "alloc"});
  return e;
}

// {"job_id":"w0!0"}
Payload read_reject_job(const Fields& f) {
  f.expect_members(1, 1);
  return RejectJob{f.job_id("job_id")};
}

// {"job_ids":["w0!0","w0!1"]}
Payload read_kill_job(const Fields& f) {
  f.expect_members(1, 1);
  KillJob k;
  k.job_ids = f.string_array("job_ids", true);
  for (const auto& id : k.job_ids) {
    std::string why = check_job_id(id);
    if (!why.empty()) f.fail_field("job_ids", "element " + why);
  }
  return k;
}

// {"timestamp":25.5}
Payload read_call_me_later(const Fields& f) {
  f.expect_members(1, 1);
  return CallMeLater{f.seconds("timestamp")};
}

constexpr std::array kTypes{
    EventType{"SIMULATION_BEGINS", read_simulation_begins, true, false},
    EventType{"SIMULATION_ENDS", read_simulation_ends, true, false},
    EventType{"JOB_SUBMITTED", read_job_submitted, true, false},
    EventType{"JOB_COMPLETED", read_job_completed, true, false},
    EventType{"JOB_KILLED", read_job_killed, true, false},
    EventType{"REQUESTED_CALL", read_requested_call, true, false},
    EventType{"NOTIFY", read_notify, true, true},
    EventType{"EXECUTE_JOB", read_execute_job, false, true},
    EventType{"REJECT_JOB", read_reject_job, false, true},
    EventType{"KILL_JOB", read_kill_job, false, true},
    EventType{"CALL_ME_LATER", read_call_me_later, false, true},
    // Known to Batsim 4.2.1, not modelled by vtime: kept as OtherEvent.
    EventType{"QUERY", nullptr, true, true},
    EventType{"ANSWER", nullptr, true, true},
    EventType{"RESOURCE_STATE_CHANGED", nullptr, true, false},
    EventType{"FROM_JOB_MSG", nullptr, true, false},
    EventType{"CHANGE_JOB_STATE", nullptr, false, true},
    EventType{"REGISTER_JOB", nullptr, false, true},
    EventType{"REGISTER_PROFILE", nullptr, false, true},
    EventType{"SET_RESOURCE_STATE", nullptr, false, true},
    EventType{"SET_JOB_METADATA", nullptr, false, true},
    EventType{"TO_JOB_MSG", nullptr, false, true},
};

}  // namespace

const EventType* find_event_type(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return &t;
  return nullptr;
}

std::string accepted_types(Direction dir) {
  std::string out;
  for (const auto& t : kTypes) {
    if (dir == Direction::to_scheduler ? !t.from_batsim : !t.from_scheduler) continue;
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace vtime::protocol::detail
