// vtime: the command-line entry point. Parses the subcommand and runs its action.
#include "command.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

// `vtime --help` lists each subcommand on one line, as git, kubectl and cargo do: the first
// sentence of its description (cut at a colon or semicolon if that sentence is long). The whole
// description stays in `vtime SUB --help`.
class BriefSubcommands : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    std::ostringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), brief(sub->get_description()), column_width_);
    return out.str();
  }

 private:
  static std::string brief(const std::string& d) {
    // The first sentence: up to a full stop that ends a line or comes before a capital
    // ("vtime run ... -- x" is not a sentence's end), or a blank line.
    size_t end = d.size();
    for (size_t i = 0; i + 1 < d.size() && end == d.size(); ++i) {
      if (d[i] == '\n' && d[i + 1] == '\n') end = i;
      if (d[i] != '.') continue;
      if (d[i + 1] == '\n' || (d[i + 1] == ' ' && i + 2 < d.size() && std::isupper(static_cast<unsigned char>(d[i + 2])))) end = i;
    }
    std::string s = d.substr(0, end);
    if (s.size() > 80) {
      size_t cut = std::string::npos;
      for (const char* stop : {": ", "; ", ", ", " ("}) {
        if (size_t at = s.find(stop); at != std::string::npos && at >= 20) cut = std::min(cut, at);
      }
      if (cut != std::string::npos) s.resize(cut);
    }
    for (char& c : s) {
      if (c == '\n') c = ' ';
    }
    return s;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App root{
      "vtime: run real, unmodified programs and schedulers under a virtual clock.\n"
      "Exit codes: see docs/cli.md (2 usage error, 125 internal error, 126/127 command not\n"
      "runnable/not found; otherwise the wrapped command's own status)."};
  root.formatter(std::make_shared<BriefSubcommands>());
  root.require_subcommand(1);
  root.set_version_flag("--version", "vtime " VTIME_VERSION);

  std::vector<vtime::cli::Subcommand> commands;
  commands.push_back(vtime::cli::register_exec(root));
#ifdef VTIME_WITH_SIM
  commands.push_back(vtime::cli::register_sim(root));
#endif
#ifdef VTIME_WITH_RUN
  commands.push_back(vtime::cli::register_run(root));
  commands.push_back(vtime::cli::register_replay(root));
#endif
#ifdef VTIME_WITH_WORKLOAD
  commands.push_back(vtime::cli::register_workload(root));
#endif
#ifdef VTIME_WITH_SWEEP
  commands.push_back(vtime::cli::register_sweep(root));
  commands.push_back(vtime::cli::register_sweep_task(root));
#endif
#ifdef VTIME_WITH_SLURM
  commands.push_back(vtime::cli::register_slurm(root));
  commands.push_back(vtime::cli::register_validate(root));
#endif
#ifdef VTIME_WITH_K8S
  commands.push_back(vtime::cli::register_k8s(root));
#endif
#ifdef VTIME_WITH_REWRITE
  commands.push_back(vtime::cli::register_rewrite(root));
#endif
#ifdef VTIME_WITH_TRACE
  commands.push_back(vtime::cli::register_trace(root));
#endif
  commands.push_back(vtime::cli::register_completion(root));  // last: it reads the others' tables

  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = root.exit(e);
    return code == 0 ? 0 : vtime::cli::kExitUsage;
  }
  for (auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return vtime::cli::kExitUsage;
}
