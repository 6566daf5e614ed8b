// CPU-time model options (see cpu_options.h).
#include "cpu_options.h"

#include <cmath>
#include <map>

namespace vtime::cli {

namespace {
const std::map<std::string, double> kDurationUnits{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
// A default duration for --help: "0" or whole microseconds.
std::string micros_str(double ns) { return ns == 0 ? "0" : std::to_string(std::llround(ns / 1e3)) + "us"; }
}

void add_cpu_options(CLI::App& app, CpuOptions& o, const std::string& defaults_note) {
  app.add_option("--cpu-model", o.model,
                 "What computation costs in virtual time: zero (nothing: exact event semantics, a busy-wait "
                 "hangs), calls (each clock read and each call that does not block costs --cpu-cost; spin loops "
                 "and strict timeout checks progress, deterministically), real (the clock runs at --cpu-scale x "
                 "real time while the tree is busy; not deterministic)" + defaults_note)
      ->capture_default_str();
  app.add_option("--cpu-cost", o.cost_ns, "calls: virtual time one charged call costs (ns, us, ms, s)")
      ->transform(CLI::AsNumberWithUnit(kDurationUnits, CLI::AsNumberWithUnit::CASE_SENSITIVE))
      ->default_str(std::to_string(std::llround(o.cost_ns / 1e3)) + "us");
  app.add_option("--cpu-burst", o.burst_calls,
                 "calls: charged calls a thread makes free at one virtual instant before it counts as "
                 "busy-waiting (a program that is not busy-waiting makes up to a few thousand)")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  app.add_option("--cpu-scale", o.scale, "real: virtual seconds per real second while the tree is busy")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--cpu-busy-limit", o.busy_limit_ns,
                 "calls: real time the tree may compute without any charged call while timed waits are pending "
                 "before the clock runs with real time until it is idle (a CPU-bound thread holding what a timed "
                 "waiter needs, such as CPython's GIL); 0 never")
      ->transform(CLI::AsNumberWithUnit(kDurationUnits, CLI::AsNumberWithUnit::CASE_SENSITIVE))
      ->default_str("500ms");
  app.add_option("--sleep-latency", o.sleep_latency_ns,
                 "How long after its deadline each sleep of the wrapped programs ends (nanosleep, usleep, ...): "
                 "a real kernel's wake-up latency, which makes loops of sleeps drift as on a real machine; "
                 "deterministic (ns, us, ms, s)")
      ->transform(CLI::AsNumberWithUnit(kDurationUnits, CLI::AsNumberWithUnit::CASE_SENSITIVE))
      ->default_str(micros_str(o.sleep_latency_ns));
  app.add_option("--timer-slack", o.timer_slack_ns,
                 "Linux's timer slack on every timed wait of the wrapped programs: a futex, condition or "
                 "semaphore wait ends this long after its deadline, poll/select/epoll 0.1% of their timeout "
                 "when that is more (at most 100 ms), a sleep too unless --sleep-latency is set; timers none. "
                 "Makes periodic loops drift as on a real machine; deterministic (ns, us, ms, s)")
      ->transform(CLI::AsNumberWithUnit(kDurationUnits, CLI::AsNumberWithUnit::CASE_SENSITIVE))
      ->default_str(micros_str(o.timer_slack_ns));
}

std::optional<CpuModelOptions> to_cpu_model(const CpuOptions& o, std::string* error) {
  auto m = parse_cpu_model(o.model);
  if (!m) {
    *error = cpu_model_error(o.model);
    return std::nullopt;
  }
  if (!(o.cost_ns >= 1) || o.cost_ns > 1e12) {
    *error = "--cpu-cost must be between 1ns and 1000s";
    return std::nullopt;
  }
  if (!(o.scale > 0) || !std::isfinite(o.scale)) {
    *error = "--cpu-scale must be a positive number";
    return std::nullopt;
  }
  if (!(o.sleep_latency_ns >= 0) || o.sleep_latency_ns > 1e12) {
    *error = "--sleep-latency must be a duration between 0 and 1000s";
    return std::nullopt;
  }
  if (!(o.timer_slack_ns >= 0) || o.timer_slack_ns > 1e12) {
    *error = "--timer-slack must be a duration between 0 and 1000s";
    return std::nullopt;
  }
  if (!(o.busy_limit_ns >= 0) || !std::isfinite(o.busy_limit_ns)) {
    *error = "--cpu-busy-limit must be a duration of 0 or more";
    return std::nullopt;
  }
  CpuModelOptions c;
  c.model = *m;
  c.cost_ns = static_cast<int64_t>(std::llround(o.cost_ns));
  c.burst_calls = o.burst_calls;
  c.scale = o.scale;
  c.busy_limit_ns = static_cast<int64_t>(std::llround(o.busy_limit_ns));
  c.sleep_latency_ns = static_cast<int64_t>(std::llround(o.sleep_latency_ns));
  c.timer_slack_ns = static_cast<int64_t>(std::llround(o.timer_slack_ns));
  return c;
}

nlohmann::ordered_json to_json(const CpuOptions& o) {
  nlohmann::ordered_json j;
  j["model"] = o.model;
  j["cost_ns"] = o.cost_ns;
  j["burst_calls"] = o.burst_calls;
  j["scale"] = o.scale;
  j["busy_limit_ns"] = o.busy_limit_ns;
  if (o.sleep_latency_ns != 0) j["sleep_latency_ns"] = o.sleep_latency_ns;  // older traces: none
  if (o.timer_slack_ns != 0) j["timer_slack_ns"] = o.timer_slack_ns;
  return j;
}

CpuOptions cpu_options_from_json(const nlohmann::ordered_json& j) {
  CpuOptions o;
  if (!j.is_object()) {
    o.model = "zero";
    return o;
  }
  o.model = j.value("model", std::string("zero"));
  o.cost_ns = j.value("cost_ns", o.cost_ns);
  o.burst_calls = j.value("burst_calls", kCpuBurstCallsBefore);  // recorded before it was an option
  o.scale = j.value("scale", o.scale);
  o.busy_limit_ns = j.value("busy_limit_ns", o.busy_limit_ns);
  o.sleep_latency_ns = j.value("sleep_latency_ns", 0.0);
  o.timer_slack_ns = j.value("timer_slack_ns", 0.0);
  return o;
}

}  // namespace vtime::cli
