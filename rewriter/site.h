// What the finder produces and the edit set consumes: sites (one reference to a target) with
// the text edits that rewrite them, and the outcome of parsing each translation unit.
#pragma once

#include "targets.h"

#include <string>
#include <vector>

namespace vtime::rewriter {

// One text replacement in one file; offsets are bytes into the file as read from disk.
struct Edit {
  std::string file;  // canonical absolute path
  unsigned offset = 0;
  unsigned length = 0;
  std::string text;

  bool operator==(const Edit&) const = default;
};

enum class SiteStatus { Rewritten, Skipped, Inactive };
enum class MacroRole { None, Argument, Body };

// One reference to a target function (or something that may be one).
struct Site {
  std::string file;  // canonical path of the file holding the name token
  unsigned offset = 0, line = 0, column = 0;
  std::string target;       // qualified name found ("sleep", "std::this_thread::sleep_for")
  std::string replacement;  // what it becomes, empty when skipped
  std::string form;         // call, address, member-call, syscall, dependent, inactive...
  MacroRole macro = MacroRole::None;
  SiteStatus status = SiteStatus::Rewritten;
  std::string reason;       // why it was skipped (or a note)
  Header header = Header::C;
  std::vector<Edit> edits;  // applied together or not at all
  std::string via;          // the translation unit it was found through
};

// A reference spelled in a macro body, whatever it resolved to: the edit set refuses to
// rewrite a #define unless every expansion of that spot resolved to the same rewrite.
struct MacroUse {
  std::string file;
  unsigned offset = 0;
  std::string outcome;  // the joined edit texts, or "" when this expansion is not a target
};

struct TuResult {
  std::string file;  // canonical path of the main file
  bool ok = false;
  std::vector<std::string> errors;  // parse errors (first few), or why it could not be parsed
  std::vector<Site> sites;
  std::vector<MacroUse> macro_uses;
};

}  // namespace vtime::rewriter
