// slurm.conf generation (see slurm_conf.h).
#include "slurm_conf.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>

namespace vtime::slurm {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Keys vtime-slurm must decide itself, with why (lower-case key -> reason). Values that are
// refused only for some settings are checked in refused_value().
const std::map<std::string, std::string>& owned_keys() {
  static const std::map<std::string, std::string> keys = {
      {"slurmctldhost", "the controller runs on this machine, on a port vtime-slurm picks"},
      {"controlmachine", "the controller runs on this machine, on a port vtime-slurm picks"},
      {"controladdr", "the controller runs on this machine, on a port vtime-slurm picks"},
      {"backupcontroller", "there is one controller"},
      {"slurmctldport", "ports are picked per run so that runs never collide"},
      {"slurmdport", "ports are picked per run so that runs never collide"},
      {"nodename", "nodes come from the Batsim platform, one per compute resource"},
      {"statesavelocation", "state lives in the run's own directory"},
      {"slurmdspooldir", "spool directories live in the run's own directory"},
      {"slurmctldpidfile", "pid files live in the run's own directory"},
      {"slurmdpidfile", "pid files live in the run's own directory"},
      {"slurmctldlogfile", "logs live in the run's own directory"},
      {"slurmdlogfile", "logs live in the run's own directory"},
      {"slurmuser", "the daemons run as the user running vtime"},
      {"slurmduser", "the daemons run as the user running vtime"},
      {"clustername", "the cluster is private to the run"},
  };
  return keys;
}

// Settings that need what a private cluster does not have.
std::optional<std::string> refused_value(const std::string& key, std::string_view value) {
  std::string v = lower(value);
  if (key == "authtype" && v != "auth/none") return "only auth/none works: no munge daemon runs";
  if (key == "credtype" && v != "cred/none") return "only cred/none works: no munge daemon runs";
  if (key == "accountingstoragetype" && v.find("slurmdbd") != std::string::npos)
    return "no slurmdbd runs; use accounting_storage/none";
  if ((key == "proctracktype" || key == "taskplugin" || key == "jobacctgathertype") &&
      v.find("cgroup") != std::string::npos)
    return "cgroups are not set up for the private cluster";
  return std::nullopt;
}

// The pairs after a line's first (`rest` follows its '='): an error for one that sets what
// vtime-slurm decides or cannot work, else nullopt.
std::optional<std::string> check_later_pairs(std::string_view rest, std::string_view first_key) {
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t start = rest.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    size_t end = rest.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view token = rest.substr(start, end - start);
    pos = end;
    if (start == 0) continue;  // the first key's own value
    size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view key = token.substr(0, eq);
    if (!std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      continue;
    std::string k = lower(key);
    if (auto it = owned_keys().find(k); it != owned_keys().end())
      return std::string(key) + " cannot be set (on the line of " + std::string(first_key) + "): " + it->second;
    if (auto why = refused_value(k, token.substr(eq + 1)))
      return std::string(token) + " cannot work (on the line of " + std::string(first_key) + "): " + *why;
  }
  return std::nullopt;
}

}  // namespace

bool Extra::has(std::string_view key) const {
  std::string k = lower(key);
  return std::any_of(lines.begin(), lines.end(), [&](const ExtraLine& l) { return lower(l.key) == k; });
}

Result<Extra> parse_extra(std::string_view text, std::string_view file_name) {
  Extra out;
  int n = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++n;
    if (size_t hash = raw.find('#'); hash != std::string_view::npos) raw = raw.substr(0, hash);
    std::string_view line = trim(raw);
    if (line.empty()) {
      if (end == text.size()) break;
      continue;
    }
    auto where = [&] { return std::string(file_name) + ":" + std::to_string(n) + ": "; };
    // Slurm splits a line at any white space, a carriage return included: one inside a line
    // would start a setting this check never saw (found by fuzz_slurm_extra).
    if (auto c = std::find_if(line.begin(), line.end(),
                              [](char ch) { return static_cast<unsigned char>(ch) < 0x20 && ch != '\t'; });
        c != line.end()) {
      char code[8];
      snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(*c));
      return protocol::Error{where() + "a control character (" + code + ") inside the line"};
    }
    size_t eq = line.find('=');
    std::string_view key = eq == std::string_view::npos ? line : trim(line.substr(0, eq));
    bool key_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (eq == std::string_view::npos || !key_ok) {
      return protocol::Error{where() + "not a Slurm setting (Key=Value): '" + std::string(line) + "'"};
    }
    std::string k = lower(key);
    if (auto it = owned_keys().find(k); it != owned_keys().end()) {
      return protocol::Error{where() + std::string(key) + " cannot be set: " + it->second};
    }
    std::string_view value = trim(line.substr(eq + 1));
    if (size_t sp = value.find_first_of(" \t"); sp != std::string_view::npos && k != "partitionname" &&
                                                k != "schedulerparameters" && k != "nodeset") {
      value = value.substr(0, sp);
    }
    if (auto why = refused_value(k, value)) {
      return protocol::Error{where() + std::string(key) + "=" + std::string(value) + " cannot work: " + *why};
    }
    // Slurm reads every Key=Value pair of a line, not only the first: the others must pass the
    // same checks (a partition's or node set's pairs are its own parameters).
    if (k != "partitionname" && k != "nodeset") {
      if (auto err = check_later_pairs(line.substr(eq + 1), key)) return protocol::Error{where() + *err};
    }
    out.lines.push_back({std::string(key), std::string(line), n});
    if (end == text.size()) break;
  }
  return out;
}

std::string node_name(int resource_id) { return "n" + std::to_string(resource_id); }

std::optional<int> resource_of_node(std::string_view name) {
  if (name.size() < 2 || name[0] != 'n' || name.size() > 11) return std::nullopt;
  int v = 0;
  for (char c : name.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (name.size() > 2 && name[1] == '0') return std::nullopt;  // "n01" is not ours
  return v;
}

std::string make_slurm_conf(const ClusterSpec& c, const Extra& extra) {
  const std::string& d = c.dir;
  // Defaults chosen for a private cluster on one machine; each can be overridden by EXTRA unless
  // owned (see owned_keys). SelectType=select/linear: whole nodes, as Batsim allocates resources.
  std::vector<std::pair<std::string, std::string>> gen = {
      {"ClusterName", "vtime"},
      {"SlurmctldHost", "localhost(127.0.0.1)"},
      {"SlurmctldPort", std::to_string(c.base_port)},
      {"SlurmUser", c.user},
      {"SlurmdUser", c.user},
      {"AuthType", "auth/none"},
      {"CredType", "cred/none"},
      {"ProctrackType", "proctrack/pgid"},
      {"TaskPlugin", "task/none"},
      {"JobAcctGatherType", "jobacct_gather/none"},
      {"AccountingStorageType", "accounting_storage/none"},
      {"JobCompType", "jobcomp/filetxt"},
      {"JobCompLoc", d + "/jobcomp.txt"},
      {"StateSaveLocation", d + "/state"},
      {"SlurmdSpoolDir", d + "/spool/%n"},
      {"SlurmctldPidFile", d + "/slurmctld.pid"},
      {"SlurmdPidFile", d + "/slurmd-%n.pid"},
      {"SlurmctldLogFile", d + "/log/slurmctld.log"},
      {"SlurmdLogFile", d + "/log/slurmd-%n.log"},
      {"SelectType", "select/linear"},
      {"MpiDefault", "none"},
      {"ReturnToService", "2"},
      {"MailProg", "/bin/true"},
      // A job no partition can ever hold is refused at submission (Batsim's REJECT_JOB) rather
      // than kept pending forever, which would keep the simulation from ending.
      {"EnforcePartLimits", "ALL"},
  };
  std::ostringstream out;
  out << "# Generated by vtime-slurm for one run (docs/slurm.md); EXTRA's lines come last.\n";
  for (auto& [k, v] : gen) {
    if (!extra.has(k)) out << k << "=" << v << "\n";
  }
  for (size_t i = 0; i < c.resource_ids.size(); ++i) {
    out << "NodeName=" << node_name(c.resource_ids[i]) << " NodeHostname=localhost NodeAddr=127.0.0.1 Port="
        << c.base_port + 1 + static_cast<int>(i) << " CPUs=1 State=UNKNOWN\n";
  }
  if (!extra.has("PartitionName")) out << "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  if (!extra.lines.empty()) out << "# EXTRA\n";
  for (auto& l : extra.lines) out << l.text << "\n";
  return out.str();
}

uint32_t time_limit_minutes(int64_t walltime_ns) {
  if (walltime_ns <= 0) return 0;
  constexpr int64_t minute = 60'000'000'000LL;
  int64_t m = (walltime_ns + minute - 1) / minute;
  return static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(m, 1), 0xfffffffeLL));
}

}  // namespace vtime::slurm
