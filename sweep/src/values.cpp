// `--param NAME=VALUES`: lists, linear ranges and log ranges, with time units (values.h).
#include <vtime/sweep/values.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace vtime::sweep {
namespace {

constexpr size_t kMaxValues = 100000;  // a typo like 0:100:1us must not start a million runs

struct Unit {
  const char* name;
  double seconds;
};
constexpr Unit kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}};

struct Num {
  double value = 0;
  std::string unit;  // empty: none given
  double unit_seconds = 1;
};

Result<Num> parse_num(std::string_view text) {
  std::string s(text);
  if (s.empty()) return Error{"empty value"};
  const char* begin = s.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return Error{"'" + s + "' is not a number"};
  if (!std::isfinite(v)) return Error{"'" + s + "' is not a finite number"};
  Num n;
  n.value = v;
  n.unit = end;
  if (n.unit.empty()) return n;
  for (const Unit& u : kUnits) {
    if (n.unit == u.name) {
      n.unit_seconds = u.seconds;
      return n;
    }
  }
  return Error{"'" + s + "': unknown unit '" + n.unit + "' (ns, us, ms, s, min, h)"};
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// Every number of one range or list: all with a unit or all without, and a unit only where the
// parameter has one.
Result<bool> check_units(const std::vector<Num>& nums, const ParamKind& kind, std::string_view spec) {
  bool any = false, all = true;
  for (const Num& n : nums) {
    any = any || !n.unit.empty();
    all = all && !n.unit.empty();
  }
  if (any && kind.type == ParamKind::kNumber)
    return Error{"'" + std::string(spec) + "': this parameter is a plain number and takes no unit"};
  if (any && !all)
    return Error{"unit mismatch in '" + std::string(spec) + "': give every value a unit, or none"};
  if (any && kind.type == ParamKind::kPlaceholder) {
    for (const Num& n : nums)
      if (n.unit != nums.front().unit)
        return Error{"unit mismatch in '" + std::string(spec) + "': a placeholder's values are written back as given, "
                     "so use one unit ('" + nums.front().unit + "' or '" + n.unit + "')"};
  }
  return any;
}

// A value in the parameter's own unit.
double native(const Num& n, const ParamKind& kind) {
  if (kind.type == ParamKind::kDuration && !n.unit.empty()) return n.value * n.unit_seconds / kind.unit_seconds;
  return n.value;
}

SweepValue make_value(double v, const std::string& unit, const ParamKind& kind) {
  SweepValue out;
  // Snap values that are an integer up to rounding noise (0.1 * 3 steps): the command line and
  // the CSV then say 0.3, not 0.30000000000000004.
  out.number = std::stod(format_number(v));
  out.text = format_number(v) + (kind.type == ParamKind::kPlaceholder ? unit : "");
  return out;
}

Result<ParamValues> parse_range(std::string_view spec, const ParamKind& kind) {
  bool log = spec.rfind("log:", 0) == 0;
  auto parts = split(log ? spec.substr(4) : spec, ':');
  if (parts.size() != 3)
    return Error{"'" + std::string(spec) + "': a range is FIRST:LAST:STEP or log:FIRST:LAST:COUNT"};
  std::vector<Num> nums;
  for (size_t i = 0; i < (log ? 2u : 3u); ++i) {
    auto n = parse_num(parts[i]);
    if (!n) return Error{"in '" + std::string(spec) + "': " + n.error()};
    nums.push_back(*n);
  }
  auto units = check_units(nums, kind, spec);
  if (!units) return Error{units.error()};
  const std::string unit = nums.front().unit;
  double first = native(nums[0], kind), last = native(nums[1], kind);
  ParamValues out;
  out.log_scale = log;
  if (log) {
    char* end = nullptr;
    std::string count_text(parts[2]);
    long count = std::strtol(count_text.c_str(), &end, 10);
    if (count_text.empty() || *end) return Error{"'" + std::string(spec) + "': COUNT must be a whole number"};
    if (count < 1) return Error{"empty range '" + std::string(spec) + "': COUNT must be at least 1"};
    if (static_cast<size_t>(count) > kMaxValues) return Error{"'" + std::string(spec) + "' has more than 100000 values"};
    if (!(first > 0) || !(last > 0)) return Error{"'" + std::string(spec) + "': a log range needs positive bounds"};
    if (last < first) return Error{"empty range '" + std::string(spec) + "': LAST is below FIRST"};
    if (count == 1 && last != first) return Error{"'" + std::string(spec) + "': one value cannot span two bounds"};
    for (long i = 0; i < count; ++i) {
      double v = count == 1 ? first : std::exp(std::log(first) + (std::log(last) - std::log(first)) * static_cast<double>(i) /
                                                                  static_cast<double>(count - 1));
      if (i == count - 1) v = last;  // exactly the bound the user wrote
      out.values.push_back(make_value(v, unit, kind));
    }
    return out;
  }
  double step = native(nums[2], kind);
  if (!(step > 0)) return Error{"'" + std::string(spec) + "': STEP must be positive"};
  if (last < first) return Error{"empty range '" + std::string(spec) + "': LAST is below FIRST"};
  double span = (last - first) / step;
  if (span + 1 > static_cast<double>(kMaxValues)) return Error{"'" + std::string(spec) + "' has more than 100000 values"};
  // 1e-9 of a step: 0:0.3:0.1 has four values although 0.3 / 0.1 is 2.9999999999999996.
  auto count = static_cast<size_t>(std::floor(span + 1e-9)) + 1;
  for (size_t i = 0; i < count; ++i) out.values.push_back(make_value(first + static_cast<double>(i) * step, unit, kind));
  return out;
}

Result<ParamValues> parse_list(std::string_view spec, const ParamKind& kind) {
  ParamValues out;
  std::vector<Num> nums;
  for (std::string_view item : split(spec, ',')) {
    if (item.empty()) return Error{"empty value in '" + std::string(spec) + "'"};
    if (kind.type == ParamKind::kText) {
      out.values.push_back({std::string(item), std::nullopt});
      continue;
    }
    auto n = parse_num(item);
    if (!n) {
      // A placeholder may take words (--policy {p} with p=fcfs,easy).
      if (kind.type == ParamKind::kPlaceholder) {
        out.values.push_back({std::string(item), std::nullopt});
        continue;
      }
      return Error{n.error()};
    }
    nums.push_back(*n);
    SweepValue v;
    v.text = kind.type == ParamKind::kPlaceholder ? std::string(item) : format_number(native(*n, kind));
    v.number = native(*n, kind);
    out.values.push_back(v);
  }
  if (kind.type != ParamKind::kPlaceholder) {
    auto units = check_units(nums, kind, spec);
    if (!units) return Error{units.error()};
  } else {
    // Placeholder values are written back verbatim; as numbers they compare only when they are
    // all plain numbers or all in one unit.
    bool comparable = nums.size() == out.values.size() && check_units(nums, kind, spec);
    if (!comparable)
      for (auto& v : out.values) v.number.reset();
  }
  return out;
}

}  // namespace

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  std::string s = buf;
  if (s == "-0") s = "0";
  return s;
}

Result<ParamValues> parse_values(std::string_view spec, const ParamKind& kind) {
  if (spec.empty()) return Error{"no values"};
  bool range = kind.type != ParamKind::kText && spec.find(':') != std::string_view::npos;
  auto out = range ? parse_range(spec, kind) : parse_list(spec, kind);
  if (!out) return out;
  std::set<std::string> seen;
  for (const auto& v : out->values)
    if (!seen.insert(v.text).second) return Error{"'" + std::string(spec) + "' gives the value '" + v.text + "' twice"};
  return out;
}

}  // namespace vtime::sweep
