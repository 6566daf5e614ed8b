// `vtime rewrite`: runs the rewriter's own executable (vtime-rewrite, docs/rewriter.md) with the
// same arguments. The rewriter links libclang and LLVM; keeping them out of `vtime` saves every
// other subcommand about 80 ms of start-up (dynamic relocation of LLVM) and 50 MB of memory.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "command.h"
#include "companions.h"

namespace vtime::cli {

Subcommand register_rewrite(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "rewrite",
      "Rewrite calls of time functions into libvtime's API, for programs LD_PRELOAD cannot reach\n"
      "(static binaries, raw syscalls). `vtime rewrite --help` lists its options; see\n"
      "docs/rewriter.md. Runs vtime-rewrite ($VTIME_REWRITE overrides where it is looked for).");
  // Everything after `rewrite`, --help included, belongs to the rewriter: it parses and checks it.
  app->set_help_flag();
  app->prefix_command();
  return {app, [app]() {
            std::string why;
            std::string exe = find_rewriter(why);
            if (exe.empty()) {
              std::fprintf(stderr, "vtime rewrite: %s\n", why.c_str());
              return kExitNotFound;
            }
            std::vector<std::string> args{"vtime", "rewrite"};
            for (const std::string& a : app->remaining()) args.push_back(a);
            std::vector<char*> argv;
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            std::fflush(nullptr);
            execv(exe.c_str(), argv.data());
            int err = errno;
            std::fprintf(stderr, "vtime rewrite: cannot run %s: %s\n", exe.c_str(), std::strerror(err));
            return err == ENOENT ? kExitNotFound : kExitCannotRun;
          }};
}

}  // namespace vtime::cli
