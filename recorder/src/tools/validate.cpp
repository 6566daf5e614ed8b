// `vtime trace validate`: every problem of a trace with its code, and whether it is complete.
//
// Beyond what the reader checks (header, JSON, sequence, trailer counts and digest), each record
// is checked against its type's schema in docs/trace-format.md, so a trace written by another
// tool or edited by hand is caught before `replay` or `diff` misreads it.
#include <vtime/recorder/tools.h>

#include <set>

#include "trace_input.h"

namespace vtime::recorder::tools {

namespace {

bool is_uint(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned();
}
bool is_int(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer();
}
bool is_str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string();
}
bool is_uint_or_null(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && (it->is_number_unsigned() || it->is_null());
}
bool one_of(const Json& j, const char* key, const std::set<std::string>& allowed) {
  auto s = str_field(j, key);
  return s && allowed.count(*s);
}

// What is wrong with a record's own fields (seq, t and type are the reader's), or "".
std::string schema_problem(const Json& r) {
  const std::string type = str_or(r, "type");
  if (type == "msg") {
    if (!one_of(r, "dir", {"from_batsim", "to_scheduler", "from_scheduler", "to_batsim"}))
      return "a msg record needs \"dir\": from_batsim, to_scheduler, from_scheduler or to_batsim";
    if (is_str(r, "bytes") == r.contains("hex")) return "a msg record needs exactly one of \"bytes\" and \"hex\"";
    if (!msg_bytes(r)) return "a msg record's \"hex\" must be an even number of hex digits";
  } else if (type == "decision") {
    if (!is_uint(r, "msg") || !is_str(r, "kind")) return "a decision record needs integer \"msg\" and string \"kind\"";
    if (r.contains("job") && !is_str(r, "job")) return "a decision record's \"job\" must be a string";
    auto ev = r.find("event");
    if (ev == r.end() || !ev->is_object()) return "a decision record needs an \"event\" object";
  } else if (type == "timer") {
    if (!one_of(r, "op", {"arm", "fire", "cancel"})) return "a timer record needs \"op\": arm, fire or cancel";
    if (!is_uint(r, "id") || !is_uint(r, "proc") || !is_uint_or_null(r, "thread"))
      return "a timer record needs integer \"id\" and \"proc\" and an integer or null \"thread\"";
    if (!is_str(r, "wait") || !is_int(r, "deadline")) return "a timer record needs string \"wait\" and integer \"deadline\"";
  } else if (type == "advance") {
    if (!is_int(r, "from") || !is_uint(r, "woken")) return "an advance record needs integer \"from\" and \"woken\"";
    if (!one_of(r, "reason", {"message", "timer", "decision", "timestep", "end"}))
      return "an advance record needs \"reason\": message, timer, decision, timestep or end";
  } else if (type == "clock" && r.contains("op")) {
    if (!one_of(r, "op", {"set"}) || !is_int(r, "shift") || !is_uint(r, "sets"))
      return "a clock set record needs \"op\": set, integer \"shift\" and \"sets\"";
  } else if (type == "clock") {
    if (!is_uint(r, "proc") || !is_uint(r, "reads") || !is_str(r, "digest"))
      return "a clock record needs integer \"proc\" and \"reads\" and string \"digest\"";
  } else if (type == "process") {
    std::string op = str_or(r, "op");
    if (op != "spawn" && op != "exit") return "a process record needs \"op\": spawn or exit";
    if (!is_uint(r, "proc")) return "a process record needs integer \"proc\"";
    if (op == "spawn" && !is_uint_or_null(r, "parent")) return "a spawn record needs an integer or null \"parent\"";
    if (op == "exit" && !is_str(r, "status")) return "an exit record needs a string \"status\"";
  } else if (type == "error") {
    if (!is_int(r, "code") || !is_str(r, "message")) return "an error record needs integer \"code\" and string \"message\"";
    if (!one_of(r, "kind", {"bad-reply", "crash", "hang", "stuck", "simulator", "internal"}))
      return "an error record needs \"kind\": bad-reply, crash, hang, stuck, simulator or internal";
  }
  return {};
}

}  // namespace

int validate(const std::string& path, std::ostream& out, std::ostream& err) {
  auto reader = open_trace(path, err);
  if (!reader) return kTraceUnreadable;
  std::vector<Problem> schema;
  Json rec;
  while (reader->next(rec)) {
    std::string why = schema_problem(rec);
    // seq is the line number - 1 (the reader checked it).
    if (!why.empty()) schema.push_back({"VT010", static_cast<uint64_t>(int_or(rec, "seq")) + 1, why, false});
  }
  std::vector<Problem> all = reader->problems();
  all.insert(all.end(), schema.begin(), schema.end());
  std::stable_sort(all.begin(), all.end(), [](const Problem& a, const Problem& b) {
    // Problems without a line (VT007, VT009) come last: they are about the end of the trace.
    uint64_t la = a.line ? a.line : UINT64_MAX, lb = b.line ? b.line : UINT64_MAX;
    return la < lb;
  });
  for (const Problem& p : all) out << to_string(p) << "\n";

  std::string records = std::to_string(reader->records_read()) + " records";
  if (all.empty()) {
    const Json& tr = *reader->trailer();
    out << path << ": ok: " << records << ", complete (run status " << str_or(tr, "status", "?") << ", exit code "
        << int_or(tr, "exit_code") << ")\n";
    return kTraceOk;
  }
  std::string problems = std::to_string(all.size()) + " problem" + (all.size() == 1 ? "" : "s");
  if (reader->has_fatal_problem()) {
    out << path << ": damaged: " << records << " recovered before reading stopped, " << problems << "\n";
  } else if (!reader->trailer()) {
    out << path << ": cut short: " << records << " recovered, " << problems << "\n";
  } else {
    out << path << ": " << problems << " in " << records << "\n";
  }
  return kTraceProblems;
}

}  // namespace vtime::recorder::tools
