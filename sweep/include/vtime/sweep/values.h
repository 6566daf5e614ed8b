// The values one swept parameter takes, from the text of `--param NAME=VALUES`.
//
// Grammar (docs/sweep.md):
//   VALUES   := LIST | RANGE | LOGRANGE
//   LIST     := ITEM ("," ITEM)*            e.g. 1,2,5   exact,timeout   10ms,0.5s
//   RANGE    := NUM ":" NUM ":" NUM          first:last:step, last included   0ms:100ms:1ms
//   LOGRANGE := "log:" NUM ":" NUM ":" COUNT  COUNT points spaced evenly on a log scale
//   NUM      := a decimal number with an optional time unit (ns, us, ms, s, min, h)
//
// What a unit means depends on the parameter: a `vtime run` option that takes a duration in
// milliseconds (--timeout) or seconds (--max-timestep) gets every value converted to that unit;
// a dimensionless option (--backoff-factor) refuses units; a `{name}` placeholder in the
// scheduler's arguments has no unit of its own, so its values are written back with the unit
// they were given in (one unit per range).
//
// Example:
//     ParamKind timeout{ParamKind::kDuration, 1e-3};   // vtime run --timeout is in ms
//     auto v = parse_values("0ms:0.1s:50ms", timeout);  // -> "0", "50", "100"
#pragma once

#include <vtime/protocol/result.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vtime::sweep {

using protocol::Error;
using protocol::Result;

struct ParamKind {
  enum Type {
    kText,         // strings only (--sync exact,timeout): lists, no ranges
    kNumber,       // a dimensionless number (--backoff-factor): no units
    kDuration,     // a duration in `unit_seconds` (1e-3 for ms): units converted
    kPlaceholder,  // a {name} in the scheduler's arguments: anything, units kept as written
  };
  Type type = kText;
  double unit_seconds = 1;  // kDuration: how many seconds one unit of the option is
};

struct SweepValue {
  std::string text;              // what goes on the command line
  std::optional<double> number;  // the value as a number (for ordering and plots), if it is one
};

struct ParamValues {
  std::vector<SweepValue> values;
  bool log_scale = false;  // given as a log range: plots use a log axis
};

// The values of VALUES for a parameter of `kind`; one error line on bad input (empty item,
// empty range, unit mismatch, a range of text, ...).
Result<ParamValues> parse_values(std::string_view spec, const ParamKind& kind);

// A number as the command line should see it: shortest form that reads back the same
// (%.12g, so 0.1 + 0.2 prints 0.3).
std::string format_number(double v);

}  // namespace vtime::sweep
