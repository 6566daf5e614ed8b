// The frame of a bridge scheduler's run (vtime-slurm, vtime-k8s): its directory, and how a
// failure becomes one message and an exit code.
//
// What it is for: both bridges keep a directory per run (configuration, logs, state) that a
// later run replaces, but never a directory someone else made; and both end any failure with one
// line naming what failed and a documented exit code, whatever layer threw.
//
// Example:
//     std::string dir = prepare_run_dir(o.dir, "kubeconfig", "vtime-k8s");   // throws BridgeFailure
//     ...
//     return run_reporting("vtime-k8s", o.endpoint, {kBridgeProtocol, kBridgeK8sFailed},
//                          [&] { Bridge b(o); return b.run(); });
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace vtime::bridges {

// Ends the run with an exit code and one message for the user.
struct BridgeFailure : std::runtime_error {
  int code;
  BridgeFailure(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// The run's directory, absolute: created, or emptied when it holds an earlier run of this bridge
// (it holds `marker`) or nothing. Anything else is not ours to delete: BridgeFailure(`usage_code`).
std::string prepare_run_dir(const std::string& dir, const std::string& marker, const std::string& who, int usage_code);

struct FailureCodes {
  int protocol;  // a ZeroMQ error
  int other;     // any other exception
};

// Runs `body` and returns its exit code; a BridgeFailure, a ZeroMQ error or any other exception
// becomes "WHO: message" on stderr and its code.
int run_reporting(const std::string& who, const std::string& endpoint, FailureCodes codes,
                  const std::function<int()>& body);

}  // namespace vtime::bridges
