// Running a helper program to its end and keeping what it printed: `vtime completion` reads the
// rewriter's option table this way, `vtime validate` the verdict of `vtime slurm|k8s --check`.
#pragma once

#include <string>
#include <vector>

namespace vtime::cli {

struct ChildOutput {
  bool ran = false;  // false: no pipe or no fork (a program that cannot be executed exits 127)
  int status = 0;    // as waitpid gives it
  std::string out;   // its standard output, and its standard error with `with_stderr`
  bool ok() const;   // ran and exited 0
};

// Runs `exe` with `args` (argv[0] is `exe`) and waits for it.
ChildOutput run_capturing(const std::string& exe, const std::vector<std::string>& args, bool with_stderr);

}  // namespace vtime::cli
