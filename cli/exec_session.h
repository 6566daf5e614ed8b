// Running one command tree under a fresh virtual-time session: spawn it with the shim, move the
// clock each time the tree is idle, report a tree blocked forever, and return its exit status.
#pragma once

#include <vtime/cpu_model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vtime::cli {

// Exit status when the tree is blocked forever and --on-deadlock=exit (docs/cli.md).
inline constexpr int kExitDeadlock = 121;
// Time cannot move because a thread waits with a real timeout vtime does not control.
inline constexpr int kExitRealTimeout = 123;

enum class OnDeadlock { kReport, kExit };

struct ExecOptions {
  std::vector<std::string> command;
  int64_t epoch_ns = 0;
  bool stats = false;
  OnDeadlock on_deadlock = OnDeadlock::kExit;
  CpuModelOptions cpu{.model = abi::kCpuZero};
  bool serialize = false;  // one process at a time (Controller::set_serial)
  bool serialize_threads = false;  // and one thread of a traced process at a time
};

int run_exec(const ExecOptions& opts);

}  // namespace vtime::cli
