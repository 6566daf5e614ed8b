#include "summary.h"

#include <cstdio>

#include "trace_input.h"
#include "vtime/protocol/codec.h"

namespace vtime::recorder::tools {

using namespace vtime::protocol;

namespace {

// A message can hold hundreds of events (a burst of submissions): the line shows the first ones.
constexpr size_t kEventsShown = 6;

std::string join_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + ids[i];
  return s;
}

std::string uint_or_dash(const Json& j, const char* key) {
  auto v = int_field(j, key);
  return v ? std::to_string(*v) : "-";
}

std::string msg_summary(const Json& rec) {
  std::string s = str_or(rec, "dir", "?");
  auto bytes = msg_bytes(rec);
  if (bytes && bytes->empty()) return s + " tick (empty message)";
  if (!rec.contains("bytes") && bytes) {
    // Kept as hex because it is not UTF-8: show the hex, not bytes a terminal would garble.
    std::string hex = str_or(rec, "hex");
    return s + " not UTF-8 (" + std::to_string(bytes->size()) + " bytes): hex " + hex.substr(0, 64) +
           (hex.size() > 64 ? "..." : "");
  }
  auto m = parse_msg(rec);
  if (!m) {
    std::string head = bytes ? bytes->substr(0, 60) : std::string();
    for (char& c : head)
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return s + " unparsable (" + m.error() + "): " + head + (bytes && bytes->size() > 60 ? "..." : "");
  }
  s += " now=" + format_seconds(m->now);
  if (m->events.empty()) return s + " (no events)";
  for (size_t i = 0; i < m->events.size() && i < kEventsShown; ++i) s += " " + event_summary(m->events[i]);
  if (m->events.size() > kEventsShown) s += " ... (" + std::to_string(m->events.size()) + " events)";
  return s;
}

std::string decision_summary(const Json& rec) {
  std::string s = str_or(rec, "kind", "?");
  if (auto job = str_field(rec, "job")) s += " " + *job;
  auto ev = rec.find("event");
  if (ev != rec.end() && ev->is_object()) {
    auto data = ev->find("data");
    if (data != ev->end() && data->is_object()) {
      if (auto alloc = str_field(*data, "alloc")) s += " alloc " + *alloc;
      if (str_or(rec, "kind") == "CALL_ME_LATER") {
        auto ts = data->find("timestamp");
        if (ts != data->end() && ts->is_number()) {
          auto n = Nanos::from_seconds(ts->get<double>());
          s += " at " + (n ? format_seconds(*n) : ts->dump());
        }
      }
    }
  }
  return s + " (msg " + uint_or_dash(rec, "msg") + ")";
}

std::string timer_summary(const Json& rec) {
  std::string thread = rec.contains("thread") && rec["thread"].is_null() ? "*" : uint_or_dash(rec, "thread");
  auto deadline = int_field(rec, "deadline");
  return str_or(rec, "op", "?") + " #" + uint_or_dash(rec, "id") + " " + uint_or_dash(rec, "proc") + "." + thread +
         " " + str_or(rec, "wait", "?") + " deadline " + (deadline ? seconds6(*deadline) : "?");
}

std::string advance_summary(const Json& rec) {
  auto from = int_field(rec, "from");
  return (from ? seconds6(*from) : "?") + " -> " + seconds6(int_or(rec, "t")) + " " + str_or(rec, "reason", "?") +
         " woke " + uint_or_dash(rec, "woken");
}

std::string process_summary(const Json& rec) {
  std::string op = str_or(rec, "op", "?");
  std::string s = op + " proc " + uint_or_dash(rec, "proc");
  if (op == "spawn") {
    s += " parent " + (rec.contains("parent") && rec["parent"].is_null() ? std::string("-") : uint_or_dash(rec, "parent"));
  } else {
    s += " " + str_or(rec, "status", "?");
  }
  return s;
}

std::string header_summary(const Json& h) {
  std::string s = str_or(h, "format", "?") + " v" + (h.contains("version") ? h["version"].dump() : "?") + " by " +
                  str_or(h, "tool", "?") + ", command " + str_or(h, "command", "?");
  auto sched = h.find("scheduler");
  if (sched != h.end() && sched->is_array()) {
    s += ", scheduler:";
    for (auto& a : *sched) s += " " + (a.is_string() ? a.get<std::string>() : a.dump());
  }
  return s;
}

}  // namespace

std::string event_summary(const Event& e) {
  std::string name(type_name(e.payload));
  std::string detail = std::visit(
      [](const auto& p) -> std::string {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, SimulationBegins>) {
          return std::to_string(p.nb_compute_resources) + " compute resources";
        } else if constexpr (std::is_same_v<T, JobSubmitted>) {
          return p.job_id;
        } else if constexpr (std::is_same_v<T, JobCompleted>) {
          return p.job_id + " " + std::string(to_string(p.job_state));
        } else if constexpr (std::is_same_v<T, JobKilled>) {
          return join_ids(p.job_ids);
        } else if constexpr (std::is_same_v<T, Notify>) {
          return p.type;
        } else if constexpr (std::is_same_v<T, ExecuteJob>) {
          return p.job_id + " " + p.alloc.to_string();
        } else if constexpr (std::is_same_v<T, RejectJob>) {
          return p.job_id;
        } else if constexpr (std::is_same_v<T, KillJob>) {
          return join_ids(p.job_ids);
        } else if constexpr (std::is_same_v<T, CallMeLater>) {
          return format_seconds(p.target);
        } else {
          return {};
        }
      },
      e.payload);
  return detail.empty() ? name : name + "(" + detail + ")";
}

std::string record_summary(const Json& rec) {
  std::string type = str_or(rec, "type");
  if (type == "header") return header_summary(rec);
  if (type == "msg") return msg_summary(rec);
  if (type == "decision") return decision_summary(rec);
  if (type == "timer") return timer_summary(rec);
  if (type == "advance") return advance_summary(rec);
  if (type == "clock" && str_or(rec, "op") == "set") {
    char buf[96];
    snprintf(buf, sizeof buf, "set: realtime %+.9f s from the start (set %s)",
             static_cast<double>(int_or(rec, "shift")) / 1e9, uint_or_dash(rec, "sets").c_str());
    return buf;
  }
  if (type == "clock") {
    return "proc " + uint_or_dash(rec, "proc") + " reads " + uint_or_dash(rec, "reads") + " digest " +
           str_or(rec, "digest", "?");
  }
  if (type == "process") return process_summary(rec);
  if (type == "error") {
    return str_or(rec, "kind", "?") + " (exit " + uint_or_dash(rec, "code") + "): " + str_or(rec, "message");
  }
  if (type == "trailer") {
    return str_or(rec, "status", "?") + " exit " + uint_or_dash(rec, "exit_code") + ", " + uint_or_dash(rec, "records") +
           " records, digest " + str_or(rec, "digest", "?");
  }
  return rec.dump();
}

std::string record_line(const Json& rec) {
  std::string type = str_or(rec, "type");
  bool header = type == "header";
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "%7lld %16s %-8s ", static_cast<long long>(header ? 0 : int_or(rec, "seq")),
                header ? "-" : seconds6(int_or(rec, "t")).c_str(), type.c_str());
  return prefix + record_summary(rec);
}

}  // namespace vtime::recorder::tools
