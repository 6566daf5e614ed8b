// Finding the files that come with the `vtime` binary: libvtime-shim.so and the rewriter's
// executable (vtime-rewrite), from an environment variable, next to the installed or built
// `vtime`, or at the path of the build tree.
#pragma once

#include <string>

namespace vtime::cli {

// Absolute path of the shim, or an empty string (with `why` set) when none is found.
// $VTIME_SHIM overrides the search.
std::string find_shim(std::string& why);

// Absolute path of vtime-rewrite, or an empty string (with `why` set). $VTIME_REWRITE overrides
// the search. The rewriter is a separate executable so that `vtime` itself does not load
// libclang and LLVM (about 80 ms and 50 MB at every start-up).
std::string find_rewriter(std::string& why);

// Absolute path of vtime-slurm (the Slurm bridge), or an empty string (with `why` set).
// $VTIME_SLURM overrides the search.
std::string find_slurm_bridge(std::string& why);

// Absolute path of the real-time harness of `vtime validate NAME` (bench/NAME_reference.py for
// slurm or k8s, installed in share/vtime/validate/), or an empty string (with `why` set).
// $VTIME_VALIDATE_HARNESS overrides the search.
std::string find_validate_harness(const std::string& name, std::string& why);

// Absolute path of vtime-k8s (the Kubernetes bridge), or an empty string (with `why` set).
// $VTIME_K8S overrides the search.
std::string find_k8s_bridge(std::string& why);

}  // namespace vtime::cli
