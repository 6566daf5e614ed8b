// The CPU-time model options shared by `vtime exec`, `run` and `replay` (and recorded in a trace
// header by `run`): --cpu-model, --cpu-cost, --cpu-burst, --cpu-scale, --cpu-busy-limit, --sleep-latency, --timer-slack.
#pragma once

#include <vtime/cpu_model.h>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace vtime::cli {

struct CpuOptions {
  std::string model = "calls";
  double cost_ns = static_cast<double>(CpuModelOptions{}.cost_ns);  // --cpu-cost, with a unit: 10us
  int64_t burst_calls = kCpuBurstCalls;  // --cpu-burst
  double scale = 1.0;               // --cpu-scale
  double busy_limit_ns = 500e6;     // --cpu-busy-limit, with a unit: 500ms; 0 never
  double sleep_latency_ns = 0;      // --sleep-latency, with a unit
  double timer_slack_ns = 0;        // --timer-slack, with a unit
};

// `defaults_note`: appended to --cpu-model's help (replay: "default: the recorded model").
void add_cpu_options(CLI::App& app, CpuOptions& o, const std::string& defaults_note = "");
// The model; nullopt and a one-line *error (listing the models) on a bad value.
std::optional<CpuModelOptions> to_cpu_model(const CpuOptions& o, std::string* error);
// The header form (ordered keys) and back; a header without it is a run under `zero` (traces
// recorded before the model existed).
nlohmann::ordered_json to_json(const CpuOptions& o);
CpuOptions cpu_options_from_json(const nlohmann::ordered_json& j);

}  // namespace vtime::cli
