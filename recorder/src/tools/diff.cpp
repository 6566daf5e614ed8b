// `vtime trace diff A B`: where two runs part ways.
//
// Records are compared in order (seq for seq) only to find the first divergence: after it, a
// run that diverged shifts every later seq, so the decisions are aligned by what they decide,
// (kind, job, n-th such decision), and the jobs by id, to count and list real differences.
#include <vtime/recorder/tools.h>

#include <cstdio>
#include <map>

#include "job_tracker.h"
#include "json_diff.h"
#include "summary.h"
#include "trace_input.h"

namespace vtime::recorder::tools {

namespace {

struct Decision {
  int64_t t = 0;
  uint64_t seq = 0;
  Json event;
};
using DecisionKey = std::tuple<std::string, std::string, int>;  // kind, job ("" if none), n-th

struct Side {
  std::string path;
  std::unique_ptr<TraceReader> reader;
  JobTracker jobs;
  std::map<DecisionKey, Decision> decisions;
  std::vector<DecisionKey> decision_order;
  std::map<std::pair<std::string, std::string>, int> seen;

  void feed(const Json& rec) {
    jobs.add(rec);
    if (str_or(rec, "type") != "decision") return;
    std::string kind = str_or(rec, "kind"), job = str_or(rec, "job");
    DecisionKey key{kind, job, seen[{kind, job}]++};
    auto ev = rec.find("event");
    decisions[key] = Decision{int_or(rec, "t"), static_cast<uint64_t>(int_or(rec, "seq")), ev != rec.end() ? *ev : Json()};
    decision_order.push_back(key);
  }
};

struct FirstDifference {
  uint64_t seq = 0;
  std::optional<Json> a, b;  // absent: that trace has no such record
  std::optional<JsonDifference> where;
};

// Every difference of the headers, member by member (options, inputs by role, clock).
std::vector<JsonDifference> header_differences(const Json& a, const Json& b) {
  std::vector<JsonDifference> out;
  auto by_role = [](const Json& inputs) {
    Json m = Json::object();
    if (inputs.is_array())
      for (const Json& i : inputs) m[i.is_object() ? str_or(i, "role", "?") : "?"] = i;
    return m;
  };
  std::vector<std::string> keys;
  for (auto& [k, v] : a.items()) keys.push_back(k);
  for (auto& [k, v] : b.items())
    if (!a.contains(k)) keys.push_back(k);
  for (const std::string& k : keys) {
    Json va = a.contains(k) ? a[k] : Json(), vb = b.contains(k) ? b[k] : Json();
    if (va == vb) continue;
    if (k == "inputs") {
      va = by_role(va);
      vb = by_role(vb);
    }
    if (va.is_object() && vb.is_object()) {
      std::vector<std::string> sub;
      for (auto& [s, v] : va.items()) sub.push_back(s);
      for (auto& [s, v] : vb.items())
        if (!va.contains(s)) sub.push_back(s);
      for (const std::string& s : sub) {
        Json sa = va.contains(s) ? va[s] : Json(), sb = vb.contains(s) ? vb[s] : Json();
        std::string path = "$." + k + "." + s;
        if (!va.contains(s)) out.push_back({path, "(absent)", sb.dump()});
        else if (!vb.contains(s)) out.push_back({path, sa.dump(), "(absent)"});
        else if (auto d = first_difference(sa, sb, path)) out.push_back(*d);
      }
    } else if (auto d = first_difference(va, vb, "$." + k)) {
      out.push_back(*d);
    }
  }
  return out;
}

std::string ending(const TraceReader& r) {
  if (!r.trailer()) return "cut short (no trailer)";
  return str_or(*r.trailer(), "status", "?") + " (exit code " + std::to_string(int_or(*r.trailer(), "exit_code")) + ")";
}

Json event_without_time(const Json& ev) {
  if (!ev.is_object()) return ev;
  Json e = ev;
  e.erase("timestamp");
  return e;
}

struct DecisionReport {
  size_t same = 0, differ = 0, time = 0, content = 0, only_a = 0, only_b = 0;
  std::vector<std::string> lines;  // the first differing decisions, in A's order then B's extras
  Json list = Json::array();
};

DecisionReport compare_decisions(const Side& a, const Side& b, size_t max_listed) {
  DecisionReport r;
  auto name = [](const DecisionKey& k) {
    std::string s = std::get<0>(k);
    if (!std::get<1>(k).empty()) s += " " + std::get<1>(k);
    if (std::get<2>(k) > 0 || std::get<1>(k).empty()) s += " #" + std::to_string(std::get<2>(k) + 1);
    return s;
  };
  auto note = [&](const DecisionKey& k, const std::string& text, Json j) {
    if (r.lines.size() < max_listed) r.lines.push_back(name(k) + ": " + text);
    if (r.list.size() < max_listed) {
      j["kind"] = std::get<0>(k);
      j["job"] = std::get<1>(k);
      j["n"] = std::get<2>(k);
      r.list.push_back(j);
    }
  };
  for (const DecisionKey& k : a.decision_order) {
    const Decision& da = a.decisions.at(k);
    auto it = b.decisions.find(k);
    if (it == b.decisions.end()) {
      ++r.only_a;
      note(k, "only in A (at " + seconds6(da.t) + ")", {{"only_in", "A"}, {"t_a", da.t}});
      continue;
    }
    const Decision& db = it->second;
    auto content = first_difference(event_without_time(da.event), event_without_time(db.event), "$.event");
    bool time = da.t != db.t;
    if (!time && !content) {
      ++r.same;
      continue;
    }
    ++r.differ;
    std::string text;
    Json j = {{"t_a", da.t}, {"t_b", db.t}};
    if (time) {
      ++r.time;
      text = "at " + seconds6(da.t) + " vs " + seconds6(db.t);
    }
    if (content) {
      ++r.content;
      text += (text.empty() ? "" : "; ") + content->path + " " + content->a + " vs " + content->b;
      j["path"] = content->path;
      j["a"] = content->a;
      j["b"] = content->b;
    }
    note(k, text, j);
  }
  for (const DecisionKey& k : b.decision_order) {
    if (a.decisions.count(k)) continue;
    ++r.only_b;
    note(k, "only in B (at " + seconds6(b.decisions.at(k).t) + ")", {{"only_in", "B"}, {"t_b", b.decisions.at(k).t}});
  }
  return r;
}

struct JobRowDiff {
  std::string id;
  const TrackedJob* a = nullptr;
  const TrackedJob* b = nullptr;
  bool differs = false;
};

std::vector<JobRowDiff> compare_jobs(const JobTracker& a, const JobTracker& b) {
  std::vector<JobRowDiff> out;
  auto same = [](const TrackedJob* x, const TrackedJob* y) {
    return x && y && x->start == y->start && x->end == y->end && x->alloc == y->alloc && x->final_state == y->final_state;
  };
  for (const TrackedJob& j : a.jobs()) {
    const TrackedJob* other = b.find(j.id);
    out.push_back({j.id, &j, other, !same(&j, other)});
  }
  for (const TrackedJob& j : b.jobs())
    if (!a.find(j.id)) out.push_back({j.id, nullptr, &j, true});
  return out;
}

std::string opt_time(const std::optional<protocol::Nanos>& t) { return t ? seconds6(t->ns()) : "-"; }

std::string delta(const std::optional<protocol::Nanos>& a, const std::optional<protocol::Nanos>& b) {
  if (!a || !b) return "-";
  int64_t d = b->ns() - a->ns();
  if (d == 0) return "0";
  return (d > 0 ? "+" : "-") + seconds6(d > 0 ? d : -d);
}

std::string alloc_of(const TrackedJob* j) {
  if (!j) return "(absent)";
  if (j->final_state == "REJECTED") return "rejected";
  return j->alloc.empty() ? "-" : j->alloc.to_string();
}

void print_job_table(const std::vector<JobRowDiff>& rows, bool all, std::ostream& out) {
  size_t w = 3;
  for (auto& r : rows) w = std::max(w, r.id.size());
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %14s %14s %14s %14s %14s %14s  %-12s %s\n", static_cast<int>(w), "job",
                "start A", "start B", "delta", "finish A", "finish B", "delta", "alloc A", "alloc B");
  out << buf;
  for (auto& r : rows) {
    if (!all && !r.differs) continue;
    auto start = [](const TrackedJob* j) { return j ? j->start : std::nullopt; };
    auto end = [](const TrackedJob* j) { return j ? j->end : std::nullopt; };
    std::snprintf(buf, sizeof buf, "%-*s %14s %14s %14s %14s %14s %14s  %-12s %s\n", static_cast<int>(w), r.id.c_str(),
                  opt_time(start(r.a)).c_str(), opt_time(start(r.b)).c_str(), delta(start(r.a), start(r.b)).c_str(),
                  opt_time(end(r.a)).c_str(), opt_time(end(r.b)).c_str(), delta(end(r.a), end(r.b)).c_str(),
                  alloc_of(r.a).c_str(), alloc_of(r.b).c_str());
    out << buf;
  }
}

Json job_json(const TrackedJob* j) {
  if (!j) return Json();
  return {{"start_ns", j->start ? Json(j->start->ns()) : Json()},
          {"finish_ns", j->end ? Json(j->end->ns()) : Json()},
          {"alloc", j->alloc.to_string()},
          {"state", j->final_state}};
}

}  // namespace

int diff(const std::string& path_a, const std::string& path_b, const DiffOptions& o, std::ostream& out,
         std::ostream& err) {
  Side a, b;
  a.path = path_a;
  b.path = path_b;
  a.reader = open_trace(path_a, err);
  b.reader = open_trace(path_b, err);
  if (!a.reader || !b.reader) return kTraceUnreadable;

  // Lockstep reading finds the first record that differs; both traces are read to the end.
  FirstDifference first;
  bool found = false, more_a = true, more_b = true;
  uint64_t count_a = 0, count_b = 0;
  Json ra, rb;
  while (more_a || more_b) {
    bool ga = more_a && a.reader->next(ra);
    bool gb = more_b && b.reader->next(rb);
    more_a = ga;
    more_b = gb;
    if (ga) {
      ++count_a;
      a.feed(ra);
    }
    if (gb) {
      ++count_b;
      b.feed(rb);
    }
    if (found || (!ga && !gb)) continue;
    if (ga && gb) {
      if (ra == rb) continue;
      first = {static_cast<uint64_t>(int_or(ra, "seq")), ra, rb, record_difference(ra, rb)};
    } else {
      first = {static_cast<uint64_t>(int_or(ga ? ra : rb, "seq")), ga ? std::optional<Json>(ra) : std::nullopt,
               gb ? std::optional<Json>(rb) : std::nullopt, std::nullopt};
    }
    found = true;
  }
  a.jobs.finish();
  b.jobs.finish();
  report_problems(*a.reader, path_a, err, true);
  report_problems(*b.reader, path_b, err, true);

  auto header = header_differences(a.reader->header(), b.reader->header());
  bool same_end = a.reader->trailer() == b.reader->trailer();
  bool identical = header.empty() && !found && same_end;
  DecisionReport dec = compare_decisions(a, b, o.max_listed);
  auto jobs = compare_jobs(a.jobs, b.jobs);
  size_t jobs_differ = 0;
  for (auto& j : jobs) jobs_differ += j.differs;

  if (o.json) {
    Json j;
    j["identical"] = identical;
    Json h = Json::array();
    for (auto& d : header) h.push_back({{"path", d.path}, {"a", d.a}, {"b", d.b}});
    j["header"] = h;
    Json recs = {{"a", count_a}, {"b", count_b}};
    if (found) {
      Json f = {{"seq", first.seq},
                {"type_a", first.a ? Json(str_or(*first.a, "type")) : Json()},
                {"type_b", first.b ? Json(str_or(*first.b, "type")) : Json()}};
      if (first.where) {
        f["path"] = first.where->path;
        f["a"] = first.where->a;
        f["b"] = first.where->b;
      }
      recs["first_difference"] = f;
    }
    j["records"] = recs;
    j["decisions"] = {{"a", a.decision_order.size()}, {"b", b.decision_order.size()}, {"same", dec.same}, {"differ", dec.differ},
                      {"differ_in_time", dec.time}, {"differ_in_content", dec.content}, {"only_a", dec.only_a},
                      {"only_b", dec.only_b}, {"listed", dec.list}};
    Json js = {{"a", a.jobs.jobs().size()}, {"b", b.jobs.jobs().size()}, {"differ", jobs_differ}};
    if (o.jobs) {
      Json table = Json::array();
      for (auto& r : jobs)
        if (o.all_jobs || r.differs) table.push_back({{"job", r.id}, {"differs", r.differs}, {"a", job_json(r.a)}, {"b", job_json(r.b)}});
      js["table"] = table;
    }
    j["jobs"] = js;
    j["end"] = {{"a", ending(*a.reader)}, {"b", ending(*b.reader)}};
    out << j.dump(2) << "\n";
    return identical ? kTraceOk : kTraceProblems;
  }

  if (identical) {
    out << "identical: " << count_a << " records, same header and ending (" << ending(*a.reader) << ")\n";
    if (o.jobs && o.all_jobs) print_job_table(jobs, true, out);
    return kTraceOk;
  }
  out << "A: " << path_a << "\nB: " << path_b << "\n";
  if (header.empty()) {
    out << "header: same\n";
  } else {
    out << "header: " << header.size() << " difference" << (header.size() == 1 ? "" : "s") << "\n";
    for (auto& d : header) out << "  " << d.path << ": " << d.a << " vs " << d.b << "\n";
  }
  out << "records: " << count_a << " vs " << count_b;
  if (!found) {
    out << ", all the same\n";
  } else {
    out << "; first difference at seq " << first.seq << ":\n";
    out << "  A " << (first.a ? record_line(*first.a) : std::string("(no such record)")) << "\n";
    out << "  B " << (first.b ? record_line(*first.b) : std::string("(no such record)")) << "\n";
    if (first.where) out << "  at " << first.where->path << ": " << first.where->a << " vs " << first.where->b << "\n";
  }
  out << "decisions: " << a.decision_order.size() << " vs " << b.decision_order.size() << ": " << dec.same << " same, "
      << dec.differ << " differ (" << dec.time << " in time, " << dec.content << " in content), " << dec.only_a << " only in A, "
      << dec.only_b << " only in B\n";
  for (auto& l : dec.lines) out << "  " << l << "\n";
  size_t listed_total = dec.differ + dec.only_a + dec.only_b;
  if (listed_total > dec.lines.size())
    out << "  ... and " << listed_total - dec.lines.size() << " more (--max N lists more)\n";
  out << "jobs: " << a.jobs.jobs().size() << " vs " << b.jobs.jobs().size() << ", " << jobs_differ
      << " with another start, finish or allocation\n";
  if (o.jobs) print_job_table(jobs, o.all_jobs, out);
  out << "end: " << ending(*a.reader) << " vs " << ending(*b.reader) << "\n";
  return kTraceProblems;
}

}  // namespace vtime::recorder::tools
