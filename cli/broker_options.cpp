// Shared options of `vtime run` and `vtime replay` (see broker_options.h).
#include "broker_options.h"

#include "epoch.h"

#include <vtime/session.h>

#include <cstdlib>

namespace vtime::cli {

void add_broker_options(CLI::App& app, BrokerOptions& o) {
  app.add_option("--sync", o.sync, "exact (idle detection, default) or timeout (Batkube's real-time budget)")
      ->check(CLI::IsMember({"exact", "timeout"}))->capture_default_str();
  app.add_option("--decision-time", o.decision_time,
                 "zero (clock frozen while the scheduler works) or wall[:FACTOR] (clock runs with real time)")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_ms, "timeout policy: real milliseconds to wait per step")->capture_default_str();
  app.add_option("--min-delay", o.min_delay_ms, "timeout policy: minimum real milliseconds per step")->capture_default_str();
  app.add_option("--base-timestep", o.base_timestep, "timeout policy: first virtual step in seconds")->capture_default_str();
  app.add_option("--max-timestep", o.max_timestep, "timeout policy: largest virtual step in seconds")->capture_default_str();
  app.add_option("--backoff-factor", o.backoff_factor, "timeout policy: step growth when nothing happens")->capture_default_str();
  app.add_option("--fast-forward-when-idle", o.fast_forward, "timeout policy: jump to the next deadline")->capture_default_str();
  app.add_option("--crash-timeout", o.crash_timeout, "real seconds a scheduler may stay busy without replying")
      ->capture_default_str();
  app.add_option("--start-timeout", o.start_timeout,
                 "real seconds the scheduler may take to start: to bind, answer the first message and settle "
                 "after it; 0: the crash timeout")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--cml-lead", o.cml_lead, "smallest distance in seconds from now of a CALL_ME_LATER")->capture_default_str();
  app.add_option("--max-sim-time", o.max_sim_time,
                 "end the run (exit 8) once the simulation passes this many simulated seconds; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--keep-timers", o.keep_timers,
               "keep turning timers into CALL_ME_LATER after every job is done (the simulation may never end)");
  app.add_option("--epoch", o.epoch, "wall-clock time at simulation time 0 (ISO-8601)");
  add_cpu_options(app, o.cpu);
}

bool to_broker(const BrokerOptions& o, broker::Options& b, std::string* error) {
  b.sync = o.sync == "timeout" ? broker::SyncPolicy::kTimeout : broker::SyncPolicy::kExact;
  if (o.sync != "exact" && o.sync != "timeout") {
    *error = "--sync must be exact or timeout";
    return false;
  }
  b.wall_factor = 0;
  if (o.decision_time != "zero") {
    if (o.decision_time == "wall") {
      b.wall_factor = 1.0;
    } else if (o.decision_time.rfind("wall:", 0) == 0) {
      char* end = nullptr;
      b.wall_factor = strtod(o.decision_time.c_str() + 5, &end);
      if (*end || b.wall_factor <= 0) {
        *error = "--decision-time: bad factor in '" + o.decision_time + "'";
        return false;
      }
    } else {
      *error = "--decision-time must be zero, wall or wall:FACTOR";
      return false;
    }
  }
  auto cpu = to_cpu_model(o.cpu, error);
  if (!cpu) return false;
  b.cpu = *cpu;
  // Decision time is real time under `real`: the broker's wall factor carries it into replies.
  if (cpu->model == abi::kCpuReal && b.wall_factor == 0) b.wall_factor = cpu->scale;
  b.epoch_ns = kDefaultEpochNs;
  if (!o.epoch.empty()) {
    auto e = parse_epoch(o.epoch);
    if (!e) {
      *error = "--epoch: cannot parse '" + o.epoch + "'";
      return false;
    }
    b.epoch_ns = *e;
  }
  b.timeout = from_seconds_f(o.timeout_ms / 1000);
  b.min_delay = from_seconds_f(o.min_delay_ms / 1000);
  b.base_timestep = from_seconds_f(o.base_timestep);
  b.max_timestep = from_seconds_f(o.max_timestep);
  b.backoff_factor = o.backoff_factor;
  b.fast_forward_when_idle = o.fast_forward;
  b.crash_timeout = from_seconds_f(o.crash_timeout);
  b.start_timeout = from_seconds_f(o.start_timeout);
  b.cml_lead = from_seconds_f(o.cml_lead);
  b.stop_timers_when_done = !o.keep_timers;
  b.max_sim_time = from_seconds_f(o.max_sim_time);
  return true;
}

nlohmann::ordered_json to_json(const BrokerOptions& o) {
  nlohmann::ordered_json j;
  j["sync"] = o.sync;
  j["decision_time"] = o.decision_time;
  j["timeout_ms"] = o.timeout_ms;
  j["min_delay_ms"] = o.min_delay_ms;
  j["base_timestep"] = o.base_timestep;
  j["max_timestep"] = o.max_timestep;
  j["backoff_factor"] = o.backoff_factor;
  j["fast_forward_when_idle"] = o.fast_forward;
  j["crash_timeout"] = o.crash_timeout;
  j["start_timeout"] = o.start_timeout;
  j["cml_lead"] = o.cml_lead;
  j["keep_timers"] = o.keep_timers;
  j["max_sim_time"] = o.max_sim_time;
  j["epoch"] = o.epoch;
  j["cpu"] = to_json(o.cpu);
  return j;
}

BrokerOptions broker_options_from_json(const nlohmann::ordered_json& j) {
  BrokerOptions o;
  if (!j.is_object()) return o;
  o.sync = j.value("sync", o.sync);
  o.decision_time = j.value("decision_time", o.decision_time);
  o.timeout_ms = j.value("timeout_ms", o.timeout_ms);
  o.min_delay_ms = j.value("min_delay_ms", o.min_delay_ms);
  o.base_timestep = j.value("base_timestep", o.base_timestep);
  o.max_timestep = j.value("max_timestep", o.max_timestep);
  o.backoff_factor = j.value("backoff_factor", o.backoff_factor);
  o.fast_forward = j.value("fast_forward_when_idle", o.fast_forward);
  o.crash_timeout = j.value("crash_timeout", o.crash_timeout);
  o.start_timeout = j.value("start_timeout", o.start_timeout);
  o.cml_lead = j.value("cml_lead", o.cml_lead);
  o.keep_timers = j.value("keep_timers", o.keep_timers);
  o.max_sim_time = j.value("max_sim_time", o.max_sim_time);
  o.epoch = j.value("epoch", o.epoch);
  o.cpu = cpu_options_from_json(j.contains("cpu") ? j["cpu"] : nlohmann::ordered_json());
  return o;
}

}  // namespace vtime::cli
