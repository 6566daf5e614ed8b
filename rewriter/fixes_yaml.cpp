#include "fixes_yaml.h"

#include <string>

namespace vtime::rewriter {
namespace {

// Double-quoted YAML scalar: the replacement texts hold newlines (the include line).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

void diagnostic(std::ostream& out, const std::string& message, const std::string& file, unsigned offset,
                const std::vector<Edit>& edits) {
  out << "  - DiagnosticName:  vtime-rewrite\n"
      << "    DiagnosticMessage:\n"
      << "      Message:         " << quote(message) << "\n"
      << "      FilePath:        " << quote(file) << "\n"
      << "      FileOffset:      " << offset << "\n"
      << "      Replacements:\n";
  for (const Edit& e : edits)
    out << "        - FilePath:        " << quote(e.file) << "\n"
        << "          Offset:          " << e.offset << "\n"
        << "          Length:          " << e.length << "\n"
        << "          ReplacementText: " << quote(e.text) << "\n";
  out << "    Level:           Warning\n";
}

}  // namespace

void write_fixes_yaml(std::ostream& out, const EditSet& set) {
  out << "---\nMainSourceFile:  \"\"\nDiagnostics:\n";
  bool any = false;
  // Only the edits that made it into the final changes (the edit set refused the others).
  for (const FileChange& c : set.changes()) {
    for (const Site& s : set.sites()) {
      if (s.file != c.path || s.status != SiteStatus::Rewritten || s.edits.empty()) continue;
      diagnostic(out, s.target + " -> " + s.replacement, s.file, s.offset, s.edits);
      any = true;
    }
    for (const Edit& e : c.edits)
      if (e.text.find("#include") != std::string::npos && e.length == 0) {
        diagnostic(out, "vtime include", c.path, e.offset, {e});
        any = true;
      }
  }
  if (!any) out << "  []\n";
  out << "...\n";
}

}  // namespace vtime::rewriter
