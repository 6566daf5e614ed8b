// The frame of a bridge scheduler's run (see bridge_run.h).
#include "bridge_run.h"

#include <cstdio>
#include <filesystem>
#include <zmq.hpp>

namespace vtime::bridges {

namespace fs = std::filesystem;

std::string prepare_run_dir(const std::string& dir, const std::string& marker, const std::string& who, int usage_code) {
  std::error_code ec;
  fs::path d = fs::absolute(dir, ec);
  if (fs::exists(d)) {
    bool ours = fs::exists(d / marker) || fs::is_empty(d, ec);
    if (!ours) {
      throw BridgeFailure(usage_code, "directory " + d.string() + " exists and was not made by " + who +
                                          "; give another --dir or remove it");
    }
    fs::remove_all(d, ec);
  }
  fs::create_directories(d, ec);
  if (ec) throw BridgeFailure(usage_code, "cannot create " + d.string() + ": " + ec.message());
  // The daemons' state, logs and keys (Kubernetes' signing key) are the user's alone.
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec) throw BridgeFailure(usage_code, "cannot make " + d.string() + " private: " + ec.message());
  return d.string();
}

int run_reporting(const std::string& who, const std::string& endpoint, FailureCodes codes,
                  const std::function<int()>& body) {
  try {
    return body();
  } catch (const BridgeFailure& f) {
    fprintf(stderr, "%s: %s\n", who.c_str(), f.what());
    return f.code;
  } catch (const zmq::error_t& e) {
    fprintf(stderr, "%s: ZeroMQ error on '%s': %s\n", who.c_str(), endpoint.c_str(), e.what());
    return codes.protocol;
  } catch (const std::exception& e) {
    fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    return codes.other;
  }
}

}  // namespace vtime::bridges
