#include "report.h"

#include "scope.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>
#include <vector>

namespace vtime::rewriter {
namespace {

const char* status_name(SiteStatus s) {
  switch (s) {
    case SiteStatus::Rewritten: return "rewritten";
    case SiteStatus::Skipped: return "skipped";
    case SiteStatus::Inactive: return "inactive";
  }
  return "?";
}

const char* macro_name(MacroRole m) {
  switch (m) {
    case MacroRole::None: return "none";
    case MacroRole::Argument: return "argument";
    case MacroRole::Body: return "body";
  }
  return "?";
}

}  // namespace

void write_report(std::ostream& out, const EditSet& set, const std::string& mode) {
  using nlohmann::json;
  const std::string& root = set.root();
  const Scope scope{root, {}};
  std::vector<std::pair<std::string, json>> by_path;
  for (const auto& p : set.parsed()) by_path.push_back({p, {{"path", scope.relative(p)}, {"status", "parsed"}}});
  for (const auto& f : set.failures())
    by_path.push_back({f.path, {{"path", scope.relative(f.path)}, {"status", "failed"}, {"errors", f.errors}}});
  std::sort(by_path.begin(), by_path.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json files = json::array();
  for (auto& [path, j] : by_path) files.push_back(std::move(j));
  int counts[3] = {0, 0, 0};
  json sites = json::array();
  for (const Site& s : set.sites()) {
    ++counts[static_cast<int>(s.status)];
    json j = {{"file", scope.relative(s.file)}, {"line", s.line},           {"column", s.column},
              {"target", s.target},        {"form", s.form},           {"macro", macro_name(s.macro)},
              {"status", status_name(s.status)}};
    if (!s.replacement.empty() && s.status == SiteStatus::Rewritten) j["replacement"] = s.replacement;
    if (!s.reason.empty()) j["reason"] = s.reason;
    sites.push_back(std::move(j));
  }
  json report = {{"version", 1},
                 {"mode", mode},
                 {"root", root},
                 {"files", files},
                 {"sites", sites},
                 {"summary",
                  {{"rewritten", counts[0]},
                   {"skipped", counts[1]},
                   {"inactive", counts[2]},
                   {"failed_files", set.failures().size()},
                   {"changed_files", set.changes().size()}}}};
  out << report.dump(2) << "\n";
}

}  // namespace vtime::rewriter
