#include "site_edits.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace vtime::rewriter {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view short_name(const Target& t) {
  const auto colon = t.qualified.rfind(':');
  return colon == std::string_view::npos ? t.qualified : t.qualified.substr(colon + 1);
}

// The name really is spelled at `name` (and is a whole identifier).
bool name_at(const std::string& src, unsigned name, std::string_view n) {
  return src.compare(name, n.size(), n) == 0 && (name + n.size() >= src.size() || !is_ident_char(src[name + n.size()]));
}

SiteEdits refused(std::string why) {
  SiteEdits e;
  e.refusal = std::move(why);
  return e;
}

}  // namespace

SiteEdits name_edits(const std::string& file, const std::string& src, const Target& t, unsigned start,
                     unsigned name, bool through_object) {
  const std::string_view n = short_name(t);
  if (start > name || name >= src.size() || !name_at(src, name, n))
    return refused("the name and its qualifier are not spelled together (macro); rewrite it by hand");
  const std::string qual = src.substr(start, name - start);
  if (!through_object && qual.find_first_of("();{}\"'") != std::string::npos)
    return refused("unexpected text before the name; rewrite it by hand");
  SiteEdits e;
  e.replacement = std::string(t.replacement);
  // high_resolution_clock is an alias of system_clock in libstdc++: keep the clock as spelled.
  if (e.replacement == "vtime::chrono::system_clock::now" && qual.find("high_resolution_clock") != std::string::npos)
    e.replacement = "vtime::chrono::high_resolution_clock::now";
  e.edits.push_back({file, start, static_cast<unsigned>(name + n.size() - start), e.replacement});
  return e;
}

SiteEdits member_edits(const std::string& file, const std::string& src, const Target& t, unsigned base,
                       unsigned name) {
  const std::string_view n = short_name(t);
  size_t paren = name + n.size();
  while (paren < src.size() && is_space(src[paren])) ++paren;
  if (base > name || name >= src.size() || !name_at(src, name, n) || paren >= src.size() || src[paren] != '(')
    return refused("the call is not spelled in one place (macro); rewrite it by hand");
  const std::string repl(t.replacement);
  const auto paren_end = static_cast<unsigned>(paren + 1);
  SiteEdits e;
  e.replacement = repl;
  if (base == name) {  // implicit this
    e.edits.push_back({file, name, paren_end - name, repl + "(*this, "});
    return e;
  }
  size_t op = name;
  while (op > base && is_space(src[op - 1])) --op;
  bool arrow = false;
  if (op >= base + 2 && src.compare(op - 2, 2, "->") == 0) {
    arrow = true;
    op -= 2;
  } else if (op >= base + 1 && src[op - 1] == '.') {
    op -= 1;
  } else {
    return refused("qualified member call; rewrite it by hand");
  }
  const std::string obj = src.substr(base, op - base);
  const bool simple = !obj.empty() && std::all_of(obj.begin(), obj.end(), is_ident_char);
  // `*p` needs no parentheses for a plain name; `*(a ? p : q)` does.
  const std::string open = repl + (arrow ? (simple ? "(*" : "(*(") : "(");
  const std::string sep = arrow && !simple ? "), " : ", ";
  e.edits.push_back({file, base, 0, open});
  e.edits.push_back({file, static_cast<unsigned>(op), static_cast<unsigned>(paren_end - op), sep});
  return e;
}

}  // namespace vtime::rewriter
