// Line-based scan of preprocessor directives; enough for placing one #include.
#include "include_inserter.h"

#include <regex>
#include <vector>

namespace vtime::rewriter {
namespace {

struct Line {
  unsigned begin, end;  // [begin, end) without the newline; end+1 starts the next line
  std::string directive;  // "include", "if", "endif", "define", "pragma"... or empty
  std::string rest;
};

std::vector<Line> split(const std::string& text) {
  static const std::regex kDirective(R"(^\s*#\s*([a-z]+)\s*(.*)$)");
  std::vector<Line> lines;
  unsigned begin = 0;
  while (begin < text.size()) {
    size_t nl = text.find('\n', begin);
    unsigned end = nl == std::string::npos ? static_cast<unsigned>(text.size()) : static_cast<unsigned>(nl);
    Line l{begin, end, {}, {}};
    std::smatch m;
    std::string s = text.substr(begin, end - begin);
    if (std::regex_match(s, m, kDirective)) {
      l.directive = m[1];
      l.rest = m[2];
    }
    lines.push_back(std::move(l));
    begin = end + 1;
  }
  return lines;
}

}  // namespace

std::optional<Edit> include_edit(const std::string& path, const std::string& text, Header h,
                                 unsigned first_edit_offset) {
  static const std::regex kStd(R"(^\s*#\s*include\s*[<"]vtime/std\.h[>"])", std::regex::multiline);
  static const std::regex kC(R"(^\s*#\s*include\s*[<"]vtime/(vtime|std)\.h[>"])", std::regex::multiline);
  if (std::regex_search(text, h == Header::Cxx ? kStd : kC)) return std::nullopt;
  const std::string line = h == Header::Cxx ? "#include <vtime/std.h>\n" : "#include <vtime/vtime.h>\n";

  const std::vector<Line> lines = split(text);
  // An include guard: the first directive is #ifndef X and the next one #define X.
  int guard_depth = 0;
  size_t guard_define = lines.size();
  std::vector<size_t> dirs;
  for (size_t i = 0; i < lines.size(); ++i)
    if (!lines[i].directive.empty()) dirs.push_back(i);
  if (dirs.size() >= 2 && lines[dirs[0]].directive == "ifndef" && lines[dirs[1]].directive == "define" &&
      lines[dirs[1]].rest.rfind(lines[dirs[0]].rest, 0) == 0) {
    guard_depth = 1;
    guard_define = dirs[1];
  }
  std::optional<unsigned> after;  // offset just past the chosen line
  int depth = 0;
  for (size_t i = 0; i < lines.size() && lines[i].begin < first_edit_offset; ++i) {
    const std::string& d = lines[i].directive;
    if (d == "if" || d == "ifdef" || d == "ifndef") ++depth;
    else if (d == "endif") --depth;
    else if (d == "include" && depth == guard_depth) after = lines[i].end + 1;
    else if (d == "pragma" && lines[i].rest.rfind("once", 0) == 0 && !after) after = lines[i].end + 1;
    if (i == guard_define && !after) after = lines[i].end + 1;
  }
  unsigned at = after.value_or(0);
  if (at > text.size()) {  // the chosen line is the last one and has no newline
    return Edit{path, static_cast<unsigned>(text.size()), 0, "\n" + line.substr(0, line.size() - 1)};
  }
  return Edit{path, at, 0, line};
}

}  // namespace vtime::rewriter
