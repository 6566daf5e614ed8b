// Reads a Batsim JSON workload. This is input-file parsing, not protocol work: the parts the
// scheduler will see are handed to the protocol module as canonical JSON text.
#include <algorithm>
#include <cmath>
#include <functional>
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

namespace {

double flops_of(const Json& v, const std::string& where, const std::string& field) {
  if (!v.is_number()) throw WorkloadFailure(where + ": field '" + field + "' must be a number (got " + kind(v) + ")");
  double x = v.get<double>();
  if (!(x >= 0) || !std::isfinite(x)) throw WorkloadFailure(where + ": field '" + field + "' must be a non-negative number");
  return x;
}

const char* kSharing = "a parallel task that communicates needs SimGrid's flow-level network sharing, which vtime "
                       "sim does not model";

}  // namespace

ProfileIndex read_profiles(const Json& profiles, const std::string& path, WorkloadInfo& info) {
  const std::string file = file_label(path);
  ProfileIndex index;
  std::vector<std::vector<std::string>> seqs;  // composed: names, resolved once all are read
  for (auto it = profiles.begin(); it != profiles.end(); ++it) {
    std::string where = file + ": profile '" + it.key() + "'";
    const Json& p = it.value();
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
      throw WorkloadFailure(where + ": must be an object with a string 'type'");
    Profile prof;
    prof.name = it.key();
    prof.type = p["type"].get<std::string>();
    auto need = [&](const char* field) -> const Json& {
      if (!p.contains(field)) throw WorkloadFailure(where + ": missing field '" + std::string(field) + "'");
      return p[field];
    };
    seqs.emplace_back();
    if (prof.type == "delay") {
      prof.delay = seconds_of(need("delay"), where, "delay");
      if (prof.delay < Nanos::zero()) throw WorkloadFailure(where + ": field 'delay' must not be negative");
    } else if (prof.type == "parallel_homogeneous" || prof.type == "parallel_homogeneous_total") {
      prof.cpu = {flops_of(need("cpu"), where, "cpu")};
      double com = flops_of(need("com"), where, "com");
      if (com > 0) prof.unsupported = std::string(kSharing) + " (com = " + need("com").dump() + " bytes)";
    } else if (prof.type == "parallel") {
      const Json& cpu = need("cpu");
      const Json& com = need("com");
      if (!cpu.is_array() || cpu.empty()) throw WorkloadFailure(where + ": field 'cpu' must be a non-empty array of flops");
      for (const Json& c : cpu) prof.cpu.push_back(flops_of(c, where, "cpu"));
      size_t n = prof.cpu.size();
      if (!com.is_array() || com.size() != n * n)
        throw WorkloadFailure(where + ": field 'com' must be an array of " + std::to_string(n * n) + " numbers (cpu has " +
                              std::to_string(n) + ")");
      for (const Json& c : com)
        if (flops_of(c, where, "com") > 0) prof.unsupported = std::string(kSharing) + " (its 'com' matrix is not all zeros)";
    } else if (prof.type == "composed") {
      if (p.contains("repeat")) {
        if (!p["repeat"].is_number_integer() || p["repeat"].get<int64_t>() < 1 || p["repeat"].get<int64_t>() > 1'000'000'000)
          throw WorkloadFailure(where + ": field 'repeat' must be a positive integer (got " + kind(p["repeat"]) + ")");
        prof.repeat = static_cast<uint32_t>(p["repeat"].get<int64_t>());
      }
      const Json& seq = need("seq");
      if (!seq.is_array() || seq.empty()) throw WorkloadFailure(where + ": field 'seq' must be a non-empty array of profile names");
      for (const Json& name : seq) {
        if (!name.is_string()) throw WorkloadFailure(where + ": field 'seq' must hold profile names (got " + kind(name) + ")");
        seqs.back().push_back(name.get<std::string>());
      }
    } else {
      prof.unsupported = "profile type '" + prof.type + "' is not simulated by vtime sim (it simulates delay, parallel, "
                         "parallel_homogeneous, parallel_homogeneous_total without communication, and composed)";
    }
    if (p.contains("ret")) {
      if (!p["ret"].is_number_integer()) throw WorkloadFailure(where + ": field 'ret' must be an integer");
      prof.return_code = p["ret"].get<int>();
    }
    index.emplace(prof.name, info.profiles.size());
    info.profiles.push_back(std::move(prof));
  }
  // Composed profiles: their steps, then (depth first, refusing cycles) whether they can run.
  for (size_t i = 0; i < info.profiles.size(); ++i)
    for (const std::string& name : seqs[i]) {
      auto it = index.find(name);
      if (it == index.end())
        throw WorkloadFailure(file + ": profile '" + info.profiles[i].name + "': its 'seq' uses profile '" + name +
                              "', which is not defined");
      info.profiles[i].seq.push_back(static_cast<uint32_t>(it->second));
    }
  std::vector<int> state(info.profiles.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<void(size_t)> visit = [&](size_t i) {
    if (state[i] == 2) return;
    if (state[i] == 1)
      throw WorkloadFailure(file + ": profile '" + info.profiles[i].name + "' contains itself (composed profiles form a cycle)");
    state[i] = 1;
    for (uint32_t s : info.profiles[i].seq) {
      visit(s);
      if (info.profiles[i].unsupported.empty() && !info.profiles[s].unsupported.empty())
        info.profiles[i].unsupported = "its step '" + info.profiles[s].name + "': " + info.profiles[s].unsupported;
    }
    state[i] = 2;
  };
  for (size_t i = 0; i < info.profiles.size(); ++i) visit(i);
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
  if (!prof.unsupported.empty())
    throw WorkloadFailure(where + ": profile '" + pname + "': " + prof.unsupported + "; use --batsim with real Batsim");
  // Batsim: a parallel task has one executor per resource (custom mappings are not supported).
  std::function<void(size_t)> check_size = [&](size_t pi) {
    const Profile& q = info.profiles[pi];
    if (q.type == "parallel" && q.cpu.size() != static_cast<size_t>(j.res))
      throw WorkloadFailure(where + ": requests " + std::to_string(j.res) + " resources but its profile '" + q.name +
                            "' is a parallel task of " + std::to_string(q.cpu.size()) + " executors");
    for (uint32_t s : q.seq) check_size(s);
  };
  check_size(pit->second);
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
