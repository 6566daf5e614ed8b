// Parses one translation unit with libclang's C API and finds every site to rewrite.
//
// For each reference (DeclRefExpr, MemberRefExpr, unresolved overload sets in templates) the
// referenced declaration is resolved; it is a target only when it comes from a system header and
// its qualified name is in the table (targets.h). Each site carries the edits that rewrite it,
// computed at the spelling location (macro arguments) or in the #define (macro bodies; the edit
// set decides whether every expansion agrees). Dependent calls whose callee cannot be resolved,
// and target-like names in #if branches this parse skipped, are reported, never edited.
//
// Example:
//     SiteFinder finder(resource_dir, scope, vtime_include_dir);
//     TuResult r = finder.run(db.args_for(file).value());
#pragma once

#include "compile_db.h"
#include "scope.h"
#include "site.h"

#include <string>

namespace vtime::rewriter {

class SiteFinder {
 public:
  // `scope`: the files sites may be edited in; `vtime_include_dir`: added to every parse after
  // the build's own include paths (-idirafter), so rewritten files parse again.
  SiteFinder(std::string resource_dir, Scope scope, std::string vtime_include_dir);
  ~SiteFinder();
  SiteFinder(const SiteFinder&) = delete;
  SiteFinder& operator=(const SiteFinder&) = delete;

  TuResult run(const ParseArgs& args);

 private:
  std::string resource_dir_;
  Scope scope_;
  std::string vtime_include_;
  void* index_;  // CXIndex, kept opaque so users of this header need no libclang include
};

}  // namespace vtime::rewriter
