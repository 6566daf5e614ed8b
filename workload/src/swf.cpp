#include <vtime/workload/swf.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtime::workload {
namespace {

constexpr const char* kNames[18] = {"job number",       "submit time",          "wait time",
                                    "run time",         "allocated processors", "average CPU time",
                                    "used memory",      "requested processors", "requested time",
                                    "requested memory", "status",               "user id",
                                    "group id",         "executable number",    "queue number",
                                    "partition number", "preceding job number", "think time"};
// Fields that hold whole numbers.
constexpr bool kWhole[18] = {true, false, false, false, true, false, false, true, false,
                             false, true, true, true, true, true, true, true, false};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// A header value as an integer; nullopt (as if absent) when it is not one, or not one an
// int64 holds (strtoll would saturate: found by fuzz_swf).
std::optional<int64_t> as_int(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *trim(end).c_str() || errno == ERANGE) return std::nullopt;
  return x;
}

void header_line(const std::string& line, SwfHeader& h) {
  std::string body = trim(line.substr(1));
  size_t colon = body.find(':');
  if (colon == std::string::npos) return;  // a free comment
  std::string key = trim(body.substr(0, colon)), value = trim(body.substr(colon + 1));
  if (key.empty() || key.find(' ') != std::string::npos) return;
  h.fields.emplace_back(key, value);
  if (key == "MaxNodes") h.max_nodes = as_int(value);
  else if (key == "MaxProcs") h.max_procs = as_int(value);
  else if (key == "UnixStartTime") h.unix_start_time = as_int(value);
  else if (key == "TimeZoneString") h.time_zone = value;
}

// One data line; the error (without the line number) or empty.
std::string parse_job(const char* p, SwfJob& j) {
  double v[18];
  int n = 0;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (!*p) break;
    const char* start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r') ++p;
    if (n == 18) return "more than 18 fields";
    std::string text(start, static_cast<size_t>(p - start));
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end || !std::isfinite(x))
      return "field " + std::to_string(n + 1) + " (" + kNames[n] + ") '" + text + "' is not a number";
    if (kWhole[n] && x != std::floor(x))
      return "field " + std::to_string(n + 1) + " (" + kNames[n] + ") '" + text + "' is not a whole number";
    // Whole fields are kept as integers: beyond 2^53 a double is no longer exact, and a cast of
    // one beyond int64 (or int, for the status) is undefined (found by fuzz_swf).
    if (kWhole[n] && std::fabs(x) > (n == 10 ? 2147483647.0 : 9007199254740992.0))
      return "field " + std::to_string(n + 1) + " (" + kNames[n] + ") '" + text + "' is too large";
    if (x < 0 && x != -1)
      return "field " + std::to_string(n + 1) + " (" + kNames[n] + ") is negative (" + text + "; -1 means unknown)";
    v[n++] = x;
  }
  if (n < 18) return std::to_string(n) + " field" + (n == 1 ? "" : "s") + ", SWF has 18";
  auto i = [&](int k) { return static_cast<int64_t>(v[k]); };
  j.number = i(0);
  j.submit = v[1];
  j.wait = v[2];
  j.run = v[3];
  j.alloc_procs = i(4);
  j.cpu_time = v[5];
  j.memory = v[6];
  j.req_procs = i(7);
  j.req_time = v[8];
  j.req_memory = v[9];
  j.status = static_cast<int>(v[10]);
  j.user = i(11);
  j.group = i(12);
  j.executable = i(13);
  j.queue = i(14);
  j.partition = i(15);
  j.preceding = i(16);
  j.think_time = v[17];
  return {};
}

std::string num(double x) {
  char buf[40];
  if (x == std::floor(x) && std::fabs(x) < 1e15) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  else std::snprintf(buf, sizeof buf, "%.6f", x);
  return buf;
}

}  // namespace

const char* swf_field_name(int field) { return field >= 1 && field <= 18 ? kNames[field - 1] : "?"; }

Result<SwfTrace> read_swf(const std::function<bool(std::string&)>& next_line, const SwfReadOptions& o) {
  SwfTrace t;
  std::string line;
  for (size_t n = 1; next_line(line); ++n) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;  // blank
    if (line[first] == ';') {
      header_line(line.substr(first), t.header);
      continue;
    }
    SwfJob j;
    std::string err = parse_job(line.c_str(), j);
    if (err.empty()) {
      t.jobs.push_back(j);
      continue;
    }
    err = "line " + std::to_string(n) + ": " + err;
    if (!o.skip_bad) return Error{err + " (--skip-bad skips such lines)"};
    if (t.skipped++ == 0) t.first_skipped_error = err;
  }
  return t;
}

void write_swf(std::ostream& out, const SwfTrace& t) {
  for (const auto& [k, v] : t.header.fields) out << "; " << k << ": " << v << "\n";
  std::string line;
  for (const SwfJob& j : t.jobs) {
    line.clear();
    const double f[18] = {static_cast<double>(j.number), j.submit, j.wait, j.run, static_cast<double>(j.alloc_procs),
                          j.cpu_time, j.memory, static_cast<double>(j.req_procs), j.req_time, j.req_memory,
                          static_cast<double>(j.status), static_cast<double>(j.user), static_cast<double>(j.group),
                          static_cast<double>(j.executable), static_cast<double>(j.queue),
                          static_cast<double>(j.partition), static_cast<double>(j.preceding), j.think_time};
    for (int k = 0; k < 18; ++k) {
      if (k) line += ' ';
      line += num(f[k]);
    }
    out << line << "\n";
  }
}

}  // namespace vtime::workload
