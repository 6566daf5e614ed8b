// The options of a brokered run that `vtime run` takes on its command line, records in a trace
// header, and `vtime replay` reads back from there: one struct, one conversion to the broker's
// options, one JSON form, so a replay runs the broker exactly as the recording did.
#pragma once

#include "cpu_options.h"

#include <vtime/broker/broker.h>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace vtime::cli {

struct BrokerOptions {
  std::string sync = "exact";
  std::string decision_time = "zero";
  double timeout_ms = 50;
  double min_delay_ms = 0;
  double base_timestep = 0.1;
  double max_timestep = 10;
  double backoff_factor = 2;
  bool fast_forward = true;
  double crash_timeout = 30;
  double start_timeout = 0;  // real seconds for the scheduler's start-up; 0 = crash_timeout
  double cml_lead = 1e-6;
  double max_sim_time = 0;  // simulated seconds; 0 = none
  bool keep_timers = false;
  std::string epoch;  // ISO-8601; empty = the default epoch
  CpuOptions cpu;
};

// Adds --sync, --decision-time, the timeout-policy options, --crash-timeout, --start-timeout, --cml-lead,
// --keep-timers and --epoch to `app`.
void add_broker_options(CLI::App& app, BrokerOptions& o);
// Fills the broker's options; false and a one-line *error on a bad value.
bool to_broker(const BrokerOptions& o, broker::Options& b, std::string* error);
// The header form (ordered keys, so traces stay byte-identical), and back.
nlohmann::ordered_json to_json(const BrokerOptions& o);
BrokerOptions broker_options_from_json(const nlohmann::ordered_json& j);

}  // namespace vtime::cli
