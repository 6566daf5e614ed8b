// The catalog of sweepable `vtime run` options and the scheduler's {placeholders} (sweep_params.h).
#include "sweep_params.h"

#include <regex>

namespace vtime::cli {
namespace {

using sweep::ParamKind;

constexpr ParamKind kText{ParamKind::kText, 1};
constexpr ParamKind kNumber{ParamKind::kNumber, 1};
constexpr ParamKind kMs{ParamKind::kDuration, 1e-3};
constexpr ParamKind kSeconds{ParamKind::kDuration, 1};
constexpr ParamKind kNs{ParamKind::kDuration, 1e-9};

// Every option add_run_options declares, but those the sweep sets per run.
const SweepableOption kOptions[] = {
    {"sync", kText, true},
    {"timeout", kMs, true},
    {"min-delay", kMs, true},
    {"base-timestep", kSeconds, true},
    {"max-timestep", kSeconds, true},
    {"backoff-factor", kNumber, true},
    {"fast-forward-when-idle", kText, true},
    {"decision-time", kText, false},
    {"crash-timeout", kSeconds, false},
    {"start-timeout", kSeconds, false},
    {"cml-lead", kSeconds, false},
    {"keep-timers", kText, false},
    {"epoch", kText, false},
    {"cpu-model", kText, false},
    {"cpu-cost", kNs, false},
    {"cpu-burst", kNumber, false},
    {"cpu-scale", kNumber, false},
    {"cpu-busy-limit", kNs, false},
    {"sleep-latency", kNs, false},
    {"platform", kText, false},
    {"hosts", kNumber, false},
};

}  // namespace

const SweepableOption* find_sweepable(const std::string& name) {
  for (const auto& o : kOptions)
    if (name == o.name) return &o;
  return nullptr;
}

std::string unsweepable_reason(const std::string& name) {
  if (name == "workload" || name == "w") return "workloads are given with -w (each one is its own axis)";
  if (name == "export" || name == "e") return "the sweep writes each run's outputs into its own folder";
  if (name == "record" || name == "compress" || name == "clock-ignore")
    return "the sweep does not record traces; record one configuration with vtime run --record";
  if (name == "batsim") return "the sweep runs the embedded simulator";
  if (name == "quiet" || name == "q") return "the sweep runs every run quietly";
  return {};
}

bool is_sync_only(const std::string& name) {
  const SweepableOption* o = find_sweepable(name);
  return o && o->sync_only;
}

std::set<std::string> placeholders_in(const std::vector<std::string>& args) {
  static const std::regex kPlaceholder(R"(\{([A-Za-z_][A-Za-z0-9_-]*)\})");
  std::set<std::string> out;
  for (const auto& a : args)
    for (auto it = std::sregex_iterator(a.begin(), a.end(), kPlaceholder); it != std::sregex_iterator(); ++it)
      if ((*it)[1] != "endpoint") out.insert((*it)[1]);
  return out;
}

std::vector<std::string> substitute(std::vector<std::string> args, const std::vector<sweep::Param>& params,
                                    const sweep::Values& values) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (values[i] == sweep::kUnused) continue;
    const std::string key = "{" + params[i].name + "}";
    const std::string& value = params[i].values.values[static_cast<size_t>(values[i])].text;
    for (auto& a : args)
      for (size_t at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size())) a.replace(at, key.size(), value);
  }
  return args;
}

}  // namespace vtime::cli
