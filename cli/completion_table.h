// The command tree of a CLI11 application as a plain table: every (sub)command path, its
// subcommands, its options (whether each takes a value, the values it accepts) and a one-line
// summary. `vtime completion` turns it into the bash completion script and the list of man
// pages, so both follow the option tables and never drift from `--help`. Header-only because
// vtime-rewrite (which links no vtime library) prints its own table for `vtime rewrite`.
//
// Text form, one record per line, fields separated by tabs (`vtime completion table`):
//     cmd   PATH  SUMMARY            PATH is "" for the program itself, else "trace show"
//     sub   PATH  NAME
//     opt   PATH  NAME  value|flag  [CHOICE ...]
//
// Example:
//     std::vector<CommandEntry> t;
//     collect_commands(root, "", t);
//     write_table(std::cout, t);
#pragma once

#include <CLI/CLI.hpp>

#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace vtime::cli {

struct OptionEntry {
  std::string name;                  // "--epoch" or "-p"
  bool takes_value = false;
  std::vector<std::string> choices;  // from an IsMember check: "TEXT:{report,exit}"
};

struct CommandEntry {
  std::string path;     // "" (the program), "exec", "trace show"
  std::string summary;  // first sentence of the description
  std::vector<std::string> subcommands;
  std::vector<OptionEntry> options;
};

// A one-line summary of a description (a man page's NAME line): its lines joined, without a
// leading "program: ", up to the first ": " or ". " outside `backquotes` (not an ellipsis).
inline std::string first_sentence(const std::string& text) {
  std::string s;
  for (char c : text) s += c == '\n' ? ' ' : c;
  const auto colon = s.find(": ");
  if (colon != std::string::npos && s.find(' ') > colon) s.erase(0, colon + 2);
  bool quoted = false;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '`') quoted = !quoted;
    if (quoted || s[i + 1] != ' ') continue;
    const bool stop = s[i] == '.' && (i == 0 || s[i - 1] != '.');
    if (stop || s[i] == ':') return s.substr(0, i);
  }
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// "TEXT:{report,exit}=exact" -> {"report", "exit"}; nothing when the type names no set.
inline std::vector<std::string> choices_of(const std::string& type_name) {
  std::vector<std::string> out;
  const auto open = type_name.find(":{");
  const auto close = open == std::string::npos ? open : type_name.find('}', open);
  if (close == std::string::npos) return out;
  std::stringstream list(type_name.substr(open + 2, close - open - 2));
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

inline void collect_commands(const CLI::App& app, const std::string& path, std::vector<CommandEntry>& out) {
  CommandEntry e;
  e.path = path;
  e.summary = first_sentence(app.get_description());
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    const bool value = o->get_expected_max() != 0 && o->get_type_size_max() != 0;
    std::vector<std::string> names;
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
    for (auto& n : names) e.options.push_back({n, value, value ? choices_of(o->get_type_name()) : std::vector<std::string>{}});
  }
  std::vector<const CLI::App*> subs = app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); });
  for (const CLI::App* s : subs) e.subcommands.push_back(s->get_name());
  out.push_back(std::move(e));
  for (const CLI::App* s : subs) collect_commands(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

inline void write_table(std::ostream& os, const std::vector<CommandEntry>& table) {
  for (const CommandEntry& e : table) {
    os << "cmd\t" << e.path << "\t" << e.summary << "\n";
    for (const auto& s : e.subcommands) os << "sub\t" << e.path << "\t" << s << "\n";
    for (const auto& o : e.options) {
      os << "opt\t" << e.path << "\t" << o.name << "\t" << (o.takes_value ? "value" : "flag");
      for (const auto& c : o.choices) os << "\t" << c;
      os << "\n";
    }
  }
}

// Reads what write_table wrote.
inline std::vector<CommandEntry> read_table(std::istream& is) {
  std::vector<CommandEntry> out;
  for (std::string line; std::getline(is, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
    if (!line.empty() && line.back() == '\t') f.emplace_back();  // getline drops a last empty field
    if (f.size() < 3) continue;
    if (f[0] == "cmd") {
      out.push_back({f[1], f[2], {}, {}});
    } else if (!out.empty() && out.back().path == f[1]) {
      if (f[0] == "sub") out.back().subcommands.push_back(f[2]);
      if (f[0] == "opt" && f.size() >= 4) out.back().options.push_back({f[2], f[3] == "value", {f.begin() + 4, f.end()}});
    }
  }
  return out;
}

}  // namespace vtime::cli
