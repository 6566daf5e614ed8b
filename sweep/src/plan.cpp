#include <vtime/sweep/plan.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace vtime::sweep {
namespace {

// Folder names: readable, and safe in a path whatever a placeholder's value holds.
std::string sanitise(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '=' || c == '_' || c == '+';
    out += ok ? c : '_';
  }
  if (out.size() > 100) out.resize(100);
  return out;
}

std::string run_id(size_t seq, const Plan& p, const PlannedRun& r) {
  char num[16];
  std::snprintf(num, sizeof num, "%04zu", seq);
  std::string name = std::string(num) + "_" + p.workloads[r.workload].name;
  if (r.reference) name += "_exact";
  for (size_t i = 0; i < p.params.size(); ++i)
    if (r.values[i] != kUnused) name += "_" + p.params[i].name + "=" + p.params[i].values.values[static_cast<size_t>(r.values[i])].text;
  if (!r.reference) name += "_r" + std::to_string(r.repeat);
  return sanitise(name);
}

// Every combination of values, the last parameter varying fastest.
std::vector<Values> cross_product(const std::vector<Param>& params) {
  std::vector<Values> out{Values{}};
  for (const Param& p : params) {
    std::vector<Values> next;
    for (const Values& v : out)
      for (size_t k = 0; k < p.values.values.size(); ++k) {
        Values w = v;
        w.push_back(static_cast<int>(k));
        next.push_back(std::move(w));
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<Workload> name_workloads(const std::vector<std::string>& paths) {
  std::vector<Workload> out;
  std::map<std::string, int> seen;
  for (const auto& path : paths) {
    std::string stem = std::filesystem::path(path).filename().string();
    if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".json") stem.resize(stem.size() - 5);
    int n = ++seen[stem];
    out.push_back({path, n == 1 ? stem : stem + "-" + std::to_string(n)});
  }
  return out;
}

Plan make_plan(std::vector<Param> params, std::vector<Workload> workloads, int repeat,
               const std::function<bool(const Values&)>& is_exact) {
  Plan p;
  p.params = std::move(params);
  p.workloads = std::move(workloads);
  const std::vector<Values> combos = cross_product(p.params);
  for (size_t w = 0; w < p.workloads.size(); ++w) {
    // The references first: the exact run of each combination of the parameters it depends on.
    std::map<Values, size_t> reference_of;
    for (const Values& v : combos) {
      Values ref = v;
      for (size_t i = 0; i < p.params.size(); ++i)
        if (p.params[i].sync_only) ref[i] = kUnused;
      if (reference_of.count(ref)) continue;
      PlannedRun r;
      r.workload = w;
      r.values = ref;
      r.reference = true;
      r.exact = true;
      reference_of[ref] = p.runs.size();
      r.id = run_id(p.runs.size(), p, r);
      p.runs.push_back(r);
      Configuration c;
      c.workload = w;
      c.values = ref;
      c.reference = true;
      c.exact = true;
      c.runs = {reference_of[ref]};
      c.reference_run = reference_of[ref];
      p.configurations.push_back(c);
    }
    for (const Values& v : combos) {
      Values ref = v;
      for (size_t i = 0; i < p.params.size(); ++i)
        if (p.params[i].sync_only) ref[i] = kUnused;
      const bool exact = is_exact(v);
      if (exact && ref == v) continue;  // that combination is a reference row already
      Configuration c;
      c.workload = w;
      c.values = v;
      c.exact = exact;
      c.reference_run = reference_of.at(ref);
      if (exact) {
        // Exact sync is deterministic and ignores the timeout knobs: its run is the reference.
        c.runs = {c.reference_run};
      } else {
        for (int k = 1; k <= repeat; ++k) {
          PlannedRun r;
          r.workload = w;
          r.values = v;
          r.repeat = k;
          r.id = run_id(p.runs.size(), p, r);
          c.runs.push_back(p.runs.size());
          p.runs.push_back(r);
        }
      }
      p.configurations.push_back(c);
    }
  }
  return p;
}

}  // namespace vtime::sweep
