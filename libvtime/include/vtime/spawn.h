// Starting a command inside a session: the child gets VTIME_SESSION and the shim in LD_PRELOAD,
// dies with its parent, and reports a failed exec through a pipe so the caller can tell "not
// found" (127) from "not runnable" (126) before anything runs.
//
// Example:
//     auto r = vtime::spawn_in_session(session, shim_path, {"sleep", "3600"}, {});
//     if (!r.pid) { fprintf(stderr, "%s\n", r.error.c_str()); return r.exit_code; }
#pragma once

#include <vtime/session.h>

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace vtime {

struct SpawnResult {
  pid_t pid = 0;          // 0 when the command could not be started
  int exit_code = 0;      // 127 not found, 126 not runnable, 125 other failure
  std::string error;      // one line, for the user
};

class TreeWatch;

// With `watch`, the child becomes the root of the watch's tree (vtime/tree_watch.h).
SpawnResult spawn_in_session(const Session& session, const std::string& shim_path,
                             const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& extra_env,
                             TreeWatch* watch = nullptr);

}  // namespace vtime
