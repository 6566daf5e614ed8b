// Internal to vtime_sim: the checks of a workload's parts, shared by the in-memory reader
// (workload_json.cpp) and the streaming one (workload_stream.cpp), so both refuse the same files
// with the same messages.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "vtime/sim/workload.h"

namespace vtime::sim::detail {

using Json = nlohmann::ordered_json;

struct WorkloadFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using ProfileIndex = std::map<std::string, size_t, std::less<>>;

// "workload 'PATH'", the prefix of every message.
inline std::string file_label(const std::string& path) { return "workload '" + path + "'"; }

// Fills info.profiles and info.profiles_json from the "profiles" object; returns name -> index.
ProfileIndex read_profiles(const Json& profiles, const std::string& path, WorkloadInfo& info);

// Job `i` of the file (throws WorkloadFailure naming it). Does not check duplicate ids. Without
// `describe`, the job's JSON description (the costly part) is left empty: checking only.
WorkloadJob read_job(Json job, size_t i, const std::string& path, const WorkloadInfo& info,
                     const ProfileIndex& profiles, bool describe = true);

// "workload 'PATH': job I (id 'X'): duplicate job id".
std::string duplicate_message(const std::string& path, size_t i, const std::string& name);

// nlohmann's parse error as one line: "workload 'PATH' is not valid JSON: ...".
std::string invalid_json_message(const std::string& path, const Json::parse_error& e);

}  // namespace vtime::sim::detail
