// serialise: Batsim's byte format. Key order per event type is the order Batsim 4.2.1 writes
// (see the reference transcripts), so messages built from Batsim's round-trip byte-for-byte.
#include <cstdio>
#include <type_traits>

#include "json_text.h"
#include "vtime/protocol/codec.h"

namespace vtime::protocol {

using detail::append_quoted;

namespace {

class Out {
 public:
  explicit Out(std::string& s) : s_(s) {}
  // Opens an object; members are then added with key(); close() ends it.
  void open() { s_ += '{'; first_ = true; }
  void close() { s_ += '}'; first_ = false; }
  void key(std::string_view k) {
    if (!first_) s_ += ',';
    first_ = false;
    append_quoted(s_, k);
    s_ += ':';
  }
  void str(std::string_view k, std::string_view v) { key(k); append_quoted(s_, v); }
  void num(std::string_view k, long long v) { key(k); s_ += std::to_string(v); }
  void boolean(std::string_view k, bool v) { key(k); s_ += v ? "true" : "false"; }
  void time(std::string_view k, Nanos t) { key(k); s_ += format_seconds(t); }
  void raw(std::string_view k, const RawJson& r) { key(k); s_ += r.text.empty() ? "null" : r.text; }
  void strings(std::string_view k, const std::vector<std::string>& v) {
    key(k);
    s_ += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s_ += ',';
      append_quoted(s_, v[i]);
    }
    s_ += ']';
  }
  void string_map(std::string_view k, const StringPairs& m) {
    key(k);
    Out inner(s_);
    inner.open();
    for (const auto& [name, value] : m) inner.str(name, value);
    inner.close();
  }
  void extras(const Extras& e) {
    for (const auto& [k, v] : e) raw(k, v);
  }
  std::string& buf() { return s_; }

 private:
  std::string& s_;
  bool first_ = true;
};

void write_resources(Out& o, std::string_view k, const std::vector<Resource>& rs) {
  o.key(k);
  std::string& s = o.buf();
  s += '[';
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i) s += ',';
    Out r(s);
    r.open();
    r.num("id", rs[i].id);
    r.str("name", rs[i].name);
    r.str("state", rs[i].state);
    r.string_map("properties", rs[i].properties);
    r.string_map("zone_properties", rs[i].zone_properties);
    r.close();
  }
  s += ']';
}

// A job description built from the typed view, for JobSubmitted values made without job_json.
RawJson job_json_from(const JobDescription& j) {
  std::string s;
  Out o(s);
  o.open();
  o.str("id", j.id);
  o.time("subtime", j.subtime);
  if (j.walltime) o.time("walltime", *j.walltime);
  o.num("res", j.res);
  o.str("profile", j.profile);
  o.close();
  return RawJson{s};
}

void write_data(Out& o, const SimulationBegins& b) {
  o.num("nb_resources", b.nb_resources);
  o.num("nb_compute_resources", b.nb_compute_resources);
  o.num("nb_storage_resources", b.nb_storage_resources);
  o.boolean("allow_compute_sharing", b.allow_compute_sharing);
  o.boolean("allow_storage_sharing", b.allow_storage_sharing);
  o.raw("config", b.config);
  write_resources(o, "compute_resources", b.compute_resources);
  write_resources(o, "storage_resources", b.storage_resources);
  o.string_map("workloads", b.workloads);
  o.raw("profiles", b.profiles);
  o.extras(b.extras);
}
void write_data(Out& o, const SimulationEnds& e) { o.extras(e.extras); }
void write_data(Out& o, const JobSubmitted& s) {
  o.str("job_id", s.job_id);
  o.raw("job", s.job_json.text.empty() ? job_json_from(s.job) : s.job_json);
  if (s.profile) o.raw("profile", *s.profile);
  o.extras(s.extras);
}
void write_data(Out& o, const JobCompleted& c) {
  o.str("job_id", c.job_id);
  o.str("job_state", to_string(c.job_state));
  o.num("return_code", c.return_code);
  o.str("alloc", c.alloc.to_string());
  o.extras(c.extras);
}
void write_data(Out& o, const JobKilled& k) {
  o.strings("job_ids", k.job_ids);
  o.raw("job_progress", k.job_progress);
  o.extras(k.extras);
}
void write_data(Out& o, const RequestedCall& r) { o.extras(r.extras); }
void write_data(Out& o, const Notify& n) {
  o.str("type", n.type);
  o.extras(n.extras);
}
void write_data(Out& o, const ExecuteJob& e) {
  o.str("job_id", e.job_id);
  o.str("alloc", e.alloc.to_string());
  o.extras(e.extras);
}
void write_data(Out& o, const RejectJob& r) { o.str("job_id", r.job_id); }
void write_data(Out& o, const KillJob& k) { o.strings("job_ids", k.job_ids); }
void write_data(Out& o, const CallMeLater& c) { o.time("timestamp", c.target); }

void write_event(std::string& s, const Event& e) {
  Out o(s);
  o.open();
  o.time("timestamp", e.timestamp);
  o.str("type", type_name(e.payload));
  if (const auto* other = std::get_if<OtherEvent>(&e.payload)) {
    o.raw("data", other->data);
  } else {
    o.key("data");
    Out d(s);
    d.open();
    std::visit(
        [&](const auto& p) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, OtherEvent>) write_data(d, p);
        },
        e.payload);
    d.close();
  }
  o.extras(e.extras);
  o.close();
}

}  // namespace

RawJson job_progress_json(const std::vector<JobProgress>& jobs) {
  std::string s;
  Out o(s);
  o.open();
  for (const auto& j : jobs) {
    o.key(j.job_id);
    // Batsim's generate_task_tree: one object per composed level, the leaf innermost.
    std::vector<Out> levels;
    levels.reserve(j.within.size() + 1);
    for (const auto& step : j.within) {
      levels.emplace_back(s);
      Out& p = levels.back();
      p.open();
      p.str("profile_name", step.profile_name);
      p.key("current_task_index");
      s += std::to_string(step.current_task_index);
      p.key("current_task");
    }
    Out p(s);
    p.open();
    p.str("profile_name", j.profile_name);
    p.key("progress");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%f", j.progress);
    s += buf;
    p.close();
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) it->close();
  }
  o.close();
  return RawJson{s};
}

std::string serialise(const Event& e) {
  std::string s;
  write_event(s, e);
  return s;
}

std::string serialise(const Message& m) {
  std::string s;
  s.reserve(64 + 128 * m.events.size());
  Out o(s);
  o.open();
  o.time("now", m.now);
  o.key("events");
  s += '[';
  for (size_t i = 0; i < m.events.size(); ++i) {
    if (i) s += ',';
    write_event(s, m.events[i]);
  }
  s += ']';
  o.extras(m.extras);
  o.close();
  return s;
}

}  // namespace vtime::protocol
