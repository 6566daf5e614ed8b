// Deduplication, macro agreement, overlap refusal and include insertion.
#include "edit_set.h"

#include "file_io.h"
#include "include_inserter.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace vtime::rewriter {
namespace {

std::string signature(const Site& s) {
  std::string sig = s.form + "|" + s.reason + "|";
  for (const Edit& e : s.edits) sig += std::to_string(e.offset) + "+" + std::to_string(e.length) + "=" + e.text + ";";
  return sig;
}

void refuse(Site& s, const std::string& reason) {
  s.status = SiteStatus::Skipped;
  s.reason = reason;
  s.edits.clear();
}

unsigned end_of(const Edit& e) { return e.offset + e.length; }

// Two edits conflict when their ranges overlap, or when both insert at the same offset (the
// order of the two insertions would be arbitrary).
bool conflict(const Edit& a, const Edit& b) {
  if (a.length == 0 && b.length == 0) return a.offset == b.offset;
  if (a.length == 0) return a.offset > b.offset && a.offset < end_of(b);
  if (b.length == 0) return b.offset > a.offset && b.offset < end_of(a);
  return a.offset < end_of(b) && b.offset < end_of(a);
}

}  // namespace

void EditSet::add(TuResult tu) {
  if (!tu.ok) {
    failures_.push_back({tu.file, std::move(tu.errors)});
    return;
  }
  parsed_.push_back(tu.file);
  for (auto& s : tu.sites) sites_.push_back(std::move(s));
  for (auto& m : tu.macro_uses) macro_uses_.push_back(std::move(m));
}

void EditSet::finish() {
  // A file that failed to parse is never edited, even through another translation unit.
  std::set<std::string> failed;
  for (const auto& f : failures_) failed.insert(f.path);

  // 1. Deduplicate sites seen through several translation units or expansions.
  std::vector<Site> unique;
  std::set<std::tuple<std::string, unsigned, std::string>> seen;
  std::set<std::pair<std::string, unsigned>> active;  // spots some parse did see as code
  for (auto& s : sites_)
    if (s.status != SiteStatus::Inactive) active.insert({s.file, s.offset});
  for (auto& s : sites_) {
    if (s.status == SiteStatus::Inactive && active.count({s.file, s.offset})) continue;
    if (!seen.insert({s.file, s.offset, s.status == SiteStatus::Inactive ? "" : signature(s)}).second) continue;
    unique.push_back(std::move(s));
  }

  // 2. A #define is rewritten only when every expansion of the spot agrees.
  std::map<std::pair<std::string, unsigned>, std::set<std::string>> outcomes;
  for (const auto& m : macro_uses_) outcomes[{m.file, m.offset}].insert(m.outcome);
  std::map<std::pair<std::string, unsigned>, int> rewrites_at;
  for (const auto& s : unique)
    if (s.status == SiteStatus::Rewritten) ++rewrites_at[{s.file, s.offset}];
  for (auto& s : unique) {
    if (s.status != SiteStatus::Rewritten) continue;
    if (failed.count(s.file)) refuse(s, "the file has parse errors (see files)");
    if (s.macro == MacroRole::Body &&
        (outcomes[{s.file, s.offset}].size() > 1 || rewrites_at[{s.file, s.offset}] > 1))
      refuse(s, "macro body: the expansions of this #define do not all call the library function; rewrite it by hand");
  }
  // The same spot rewritten two different ways (two expansions, two configurations) is refused.
  for (auto& s : unique)
    if (s.status == SiteStatus::Rewritten && rewrites_at[{s.file, s.offset}] > 1)
      refuse(s, "rewritten differently by different translation units or expansions");

  // 3. Overlapping edits of different sites: refuse both.
  std::map<std::string, std::vector<size_t>> by_file;
  for (size_t i = 0; i < unique.size(); ++i)
    if (unique[i].status == SiteStatus::Rewritten) by_file[unique[i].file].push_back(i);
  std::set<size_t> overlapping;
  for (auto& [file, idx] : by_file)
    for (size_t a = 0; a < idx.size(); ++a)
      for (size_t b = a + 1; b < idx.size(); ++b)
        for (const Edit& ea : unique[idx[a]].edits)
          for (const Edit& eb : unique[idx[b]].edits)
            if (conflict(ea, eb)) {
              overlapping.insert(idx[a]);
              overlapping.insert(idx[b]);
            }
  for (size_t i : overlapping) refuse(unique[i], "overlaps the rewrite of another site; rewrite it by hand");

  std::sort(unique.begin(), unique.end(), [](const Site& a, const Site& b) {
    return std::tie(a.file, a.offset, a.form) < std::tie(b.file, b.offset, b.form);
  });
  sites_ = std::move(unique);

  // 4. Per file: the edits, the include, the new text.
  std::map<std::string, FileChange> files;
  std::map<std::string, bool> needs_cxx;
  for (const auto& s : sites_) {
    if (s.status != SiteStatus::Rewritten || s.edits.empty()) continue;
    FileChange& c = files[s.file];
    c.path = s.file;
    c.edits.insert(c.edits.end(), s.edits.begin(), s.edits.end());
    needs_cxx[s.file] = needs_cxx[s.file] || s.header == Header::Cxx;
  }
  for (auto& [path, c] : files) {
    c.before = read_file(path);
    unsigned first = c.edits.front().offset;
    for (const Edit& e : c.edits) first = std::min(first, e.offset);
    if (auto inc = include_edit(path, c.before, needs_cxx[path] ? Header::Cxx : Header::C, first))
      c.edits.push_back(*inc);
    // The include goes first when it lands where an edit starts.
    std::stable_sort(c.edits.begin(), c.edits.end(), [](const Edit& a, const Edit& b) {
      const bool ia = a.text.rfind("#include", 0) == 0, ib = b.text.rfind("#include", 0) == 0;
      return a.offset < b.offset || (a.offset == b.offset && ia && !ib);
    });
    c.after = apply_edits(c.before, c.edits);
    changes_.push_back(std::move(c));
  }
}

std::string apply_edits(const std::string& text, const std::vector<Edit>& edits) {
  std::string out;
  out.reserve(text.size() + 64);
  unsigned pos = 0;
  for (const Edit& e : edits) {
    if (e.offset < pos || end_of(e) > text.size()) throw std::runtime_error("internal: edits overlap in " + e.file);
    out.append(text, pos, e.offset - pos);
    out += e.text;
    pos = end_of(e);
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace vtime::rewriter
