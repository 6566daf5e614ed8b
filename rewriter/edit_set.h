// Collects the sites of every translation unit and turns them into one consistent set of
// edits per file.
//
// Sites seen through several translation units (a header included by several files, a macro
// expanded many times) are deduplicated by canonical path and offset. A #define is rewritten
// only when every expansion of that spot resolved to the same rewrite. Edits of different
// sites that overlap are refused (both sites reported). Each file that changes gets the vtime
// include. Nothing is written here: see file_io.h.
//
// Example:
//     EditSet set(root);
//     for (auto& tu : results) set.add(std::move(tu));
//     set.finish();
//     for (const FileChange& c : set.changes()) ...
#pragma once

#include "site.h"

#include <string>
#include <vector>

namespace vtime::rewriter {

struct FileChange {
  std::string path;
  std::string before;
  std::string after;
  std::vector<Edit> edits;  // sorted by offset, the include insertion among them
};

struct FileFailure {
  std::string path;
  std::vector<std::string> errors;
};

class EditSet {
 public:
  explicit EditSet(std::string root) : root_(std::move(root)) {}

  void add(TuResult tu);
  // Resolves duplicates, macro agreement and overlaps, adds includes, computes new texts.
  // Throws std::runtime_error when a file to change cannot be read.
  void finish();

  const std::vector<Site>& sites() const { return sites_; }  // sorted by file, offset
  const std::vector<FileChange>& changes() const { return changes_; }
  const std::vector<FileFailure>& failures() const { return failures_; }
  const std::vector<std::string>& parsed() const { return parsed_; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::vector<Site> sites_;
  std::vector<MacroUse> macro_uses_;
  std::vector<FileChange> changes_;
  std::vector<FileFailure> failures_;
  std::vector<std::string> parsed_;
};

// Applies sorted, non-overlapping edits to a text.
std::string apply_edits(const std::string& text, const std::vector<Edit>& edits);

}  // namespace vtime::rewriter
