// Reads a Batsim JSON workload. This is input-file parsing, not protocol work: the parts the
// scheduler will see are handed to the protocol module as canonical JSON text.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "vtime/protocol/codec.h"
#include "workload_reading.h"

namespace vtime::sim {

using protocol::Error;

namespace detail {
namespace {

std::string kind(const Json& j) {
  if (j.is_string()) return "string " + j.dump();
  if (j.is_number()) return "number " + j.dump();
  if (j.is_boolean()) return j.dump();
  if (j.is_null()) return "null";
  return j.is_array() ? "an array" : "an object";
}

Nanos seconds_of(const Json& v, const std::string& where, const std::string& field) {
  if (!v.is_number()) throw WorkloadFailure(where + ": field '" + field + "' must be a number of seconds (got " + kind(v) + ")");
  auto n = Nanos::from_seconds(v.get<double>());
  if (!n) throw WorkloadFailure(where + ": field '" + field + "' is out of range (got " + kind(v) + ")");
  return *n;
}

RawJson canonical(const Json& j) {
  auto r = protocol::canonical_json(j.dump());
  if (!r) throw WorkloadFailure("internal: " + r.error());
  return std::move(r).value();
}

}  // namespace

ProfileIndex read_profiles(const Json& profiles, const std::string& path, WorkloadInfo& info) {
  const std::string file = file_label(path);
  ProfileIndex index;
  for (auto it = profiles.begin(); it != profiles.end(); ++it) {
    std::string where = file + ": profile '" + it.key() + "'";
    const Json& p = it.value();
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
      throw WorkloadFailure(where + ": must be an object with a string 'type'");
    Profile prof;
    prof.name = it.key();
    prof.type = p["type"].get<std::string>();
    if (prof.type == "delay") {
      if (!p.contains("delay")) throw WorkloadFailure(where + ": missing field 'delay'");
      prof.delay = seconds_of(p["delay"], where, "delay");
      if (prof.delay < Nanos::zero()) throw WorkloadFailure(where + ": field 'delay' must not be negative");
    }
    if (p.contains("ret")) {
      if (!p["ret"].is_number_integer()) throw WorkloadFailure(where + ": field 'ret' must be an integer");
      prof.return_code = p["ret"].get<int>();
    }
    index.emplace(prof.name, info.profiles.size());
    info.profiles.push_back(std::move(prof));
  }
  info.profiles_json = canonical(profiles);
  return index;
}

WorkloadJob read_job(Json job, size_t i, const std::string& path, const WorkloadInfo& info,
                     const ProfileIndex& profiles, bool describe) {
  std::string where = file_label(path) + ": job " + std::to_string(i);
  if (!job.is_object()) throw WorkloadFailure(where + ": must be an object");
  if (!job.contains("id")) throw WorkloadFailure(where + ": missing field 'id'");
  WorkloadJob j;
  j.index = i;
  if (job["id"].is_string()) j.name = job["id"].get<std::string>();
  else if (job["id"].is_number_unsigned()) j.name = std::to_string(job["id"].get<uint64_t>());
  else throw WorkloadFailure(where + ": field 'id' must be a string or a non-negative integer (got " + kind(job["id"]) + ")");
  if (j.name.find('!') != std::string::npos) throw WorkloadFailure(where + ": job id '" + j.name + "' must not contain '!'");
  // Ids go into line-based outputs (_jobs.csv, logs, Slurm's job records): a line break or any
  // other control character would forge or break a line there.
  if (auto c = std::find_if(j.name.begin(), j.name.end(),
                            [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
      c != j.name.end()) {
    char code[8];
    snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(*c));
    throw WorkloadFailure(where + ": job id " + Json(j.name).dump() + " contains a control character (" + code +
                          "): ids go into line-based outputs");
  }
  where += " (id '" + j.name + "')";
  j.id = info.name + "!" + j.name;

  if (!job.contains("subtime")) throw WorkloadFailure(where + ": missing field 'subtime'");
  j.subtime = seconds_of(job["subtime"], where, "subtime");
  if (j.subtime < Nanos::zero()) throw WorkloadFailure(where + ": field 'subtime' must not be negative");
  if (!job.contains("res") || !job["res"].is_number_integer() || job["res"].get<int64_t>() < 1 ||
      job["res"].get<int64_t>() > 1'000'000'000)
    throw WorkloadFailure(where + ": field 'res' must be a positive integer" +
                          (job.contains("res") ? " (got " + kind(job["res"]) + ")" : std::string(" (missing)")));
  j.res = job["res"].get<int>();
  if (job.contains("walltime")) {
    Nanos wt = seconds_of(job["walltime"], where, "walltime");
    // Batsim: -1 means no walltime; anything else must be strictly positive.
    if (wt == Nanos::seconds(-1)) {
    } else if (wt <= Nanos::zero()) {
      throw WorkloadFailure(where + ": field 'walltime' must be -1 (none) or strictly positive (got " + kind(job["walltime"]) + ")");
    } else {
      j.walltime = wt;
    }
  }
  if (!job.contains("profile") || !job["profile"].is_string())
    throw WorkloadFailure(where + ": field 'profile' must be a string");
  std::string pname = job["profile"].get<std::string>();
  auto pit = profiles.find(pname);
  if (pit == profiles.end()) throw WorkloadFailure(where + ": profile '" + pname + "' is not defined in 'profiles'");
  const Profile& prof = info.profiles[pit->second];
  if (prof.type != "delay")
    throw WorkloadFailure(where + ": profile '" + pname + "' has type '" + prof.type +
                          "'; vtime sim only simulates 'delay' profiles (use real Batsim and "
                          "SimGrid for other profile types)");
  j.profile = pit->second;
  if (describe) {
    job["id"] = j.id;  // Batsim forwards the description with the full id, key order kept
    j.json = canonical(job);
  }
  return j;
}

std::string duplicate_message(const std::string& path, size_t i, const std::string& name) {
  return file_label(path) + ": job " + std::to_string(i) + " (id '" + name + "'): duplicate job id";
}

std::string invalid_json_message(const std::string& path, const Json::parse_error& e) {
  std::string what = e.what();
  if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
  return file_label(path) + " is not valid JSON: " + what;
}

}  // namespace detail

namespace {

using namespace detail;

Workload read(const Json& doc, const std::string& path, const std::string& name) {
  const std::string file = file_label(path);
  if (!doc.is_object()) throw WorkloadFailure(file + ": must be a JSON object with 'jobs' and 'profiles'");
  if (!doc.contains("profiles") || !doc["profiles"].is_object())
    throw WorkloadFailure(file + ": missing object 'profiles'");
  if (!doc.contains("jobs") || !doc["jobs"].is_array()) throw WorkloadFailure(file + ": missing array 'jobs'");

  Workload w;
  w.name = name;
  w.file = path;
  if (doc.contains("nb_res") && doc["nb_res"].is_number_integer()) w.nb_res = doc["nb_res"].get<int64_t>();
  ProfileIndex profiles = read_profiles(doc["profiles"], path, w);
  std::map<std::string, size_t> seen;
  const Json& jobs = doc["jobs"];
  for (size_t i = 0; i < jobs.size(); ++i) {
    WorkloadJob j = read_job(jobs[i], i, path, w, profiles);
    if (!seen.emplace(j.name, i).second) throw WorkloadFailure(duplicate_message(path, i, j.name));
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace

Result<Workload> parse_workload(const std::string& text, const std::string& path, const std::string& name) {
  try {
    return read(Json::parse(text), path, name);
  } catch (const WorkloadFailure& e) {
    return Error{e.what()};
  } catch (const Json::parse_error& e) {
    return Error{invalid_json_message(path, e)};
  } catch (const std::exception& e) {
    return Error{file_label(path) + ": " + e.what()};
  }
}

Result<Workload> load_workload(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read workload file '" + path + "'"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_workload(ss.str(), path, name);
}

}  // namespace vtime::sim
