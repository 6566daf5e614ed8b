// The environment the Kubernetes components of a run are started with.
//
// Why a defined one, not the bridge's: a Go component's tie-breaking depends on its environment.
// Its runtime keeps the variables' names in a map, and a different set of names changes, through
// the allocations and collections that follow, which runtime thread runs which goroutine and so
// its random draws (docs/k8s.md "Determinism"): the informers of kube-scheduler started in
// another order when one variable more was set (XYZ=1, or VTIME_LOG to debug vtime itself), and
// the burst workload's schedule changed with it; so did it with the length of one variable's
// value (VTIME_OUTPUT_PREFIX, set by `vtime run -e`). A user's shell, a CI job and a debugging
// session then got different schedules from the same inputs. And etcd reads ETCD_* variables as
// flags. For the same reason the components run in the run's directory, with relative paths in
// their arguments, and learn its name as /proc/self/cwd: a longer `-e` prefix changed schedules
// too (Go's os.Getwd; kube-apiserver and kube-scheduler make absolute paths of their files).
//
// Example:
//     component_environment(environ, {"GODEBUG=gctrace=1"})
//     // {"GODEBUG=gctrace=1", "GOMAXPROCS=1", "HOME=/proc/self/cwd", "LD_PRELOAD=...",
//     //  "PATH=...", "PWD=/proc/self/cwd", "TZ=UTC", "VTIME_SESSION=////.../proc/123/fd/6"}
#pragma once

#include <string>
#include <vector>

namespace vtime::k8s {

// From `environ` (NAME=VALUE strings, null-terminated) keeps what vtime needs in the components
// (LD_PRELOAD, VTIME_SESSION padded to a fixed length, VTIME_TSC) and the Go runtime's own
// settings (GOMAXPROCS, GODEBUG, GOGC, GOMEMLIMIT, GOTRACEBACK); adds a fixed PATH, PWD and HOME
// naming the working directory (/proc/self/cwd: the components run in the run's directory),
// TZ=UTC, then `extra` (NAME=VALUE, replacing a variable of that name). Sorted by name, so that
// the order of the bridge's environment does not matter either. Throws std::invalid_argument for
// an extra entry that is not NAME=VALUE.
std::vector<std::string> component_environment(char** environ, const std::vector<std::string>& extra);

}  // namespace vtime::k8s
