// What `vtime sweep` may sweep: every `vtime run` option that shapes a run (with its unit, and
// whether only the timeout sync policy reads it) and any {name} placeholder in the scheduler's
// arguments.
#pragma once

#include <vtime/sweep/plan.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace vtime::cli {

struct SweepableOption {
  const char* name;  // the long option without dashes
  sweep::ParamKind kind;
  bool sync_only;  // a knob of the timeout policy: the exact reference does not take it
};

// The catalog; nullptr for a name `vtime run` does not take or the sweep sets itself.
const SweepableOption* find_sweepable(const std::string& name);
// Why NAME cannot be swept (an option the sweep sets per run), or empty.
std::string unsweepable_reason(const std::string& name);
// The run options the timeout policy alone reads (dropped from the exact reference's command).
bool is_sync_only(const std::string& name);

// The {name}s in the scheduler's arguments, {endpoint} (the broker's) excepted.
std::set<std::string> placeholders_in(const std::vector<std::string>& args);
// `args` with every {name} of a swept placeholder replaced by its value.
std::vector<std::string> substitute(std::vector<std::string> args, const std::vector<sweep::Param>& params,
                                    const sweep::Values& values);

}  // namespace vtime::cli
