#include <vtime/sweep/slurm_executor.h>
#include <vtime/sweep/report.h>
#include <vtime/sweep/task_file.h>
#include <vtime/sweep/tool_run.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

namespace vtime::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kToolTimeout = 60;  // seconds a Slurm command may take (a busy slurmctld answers slowly)
// How long a task may be gone from squeue with runs lacking an outcome before they count as lost:
// a shared file system may show a file written on another node a little later.
constexpr auto kGoneGrace = std::chrono::seconds(10);
// After a Ctrl-C, how long the sweep waits for the cancelled tasks to leave the queue.
constexpr auto kCancelWait = std::chrono::seconds(60);

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
  return s.substr(i);
}

// The last `n` non-empty lines of a file, joined with " | ".
std::string tail_of(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (!trim(l).empty()) lines.push_back(trim(l));
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

// The sbatch arguments every task of the sweep gets (without --array, --output, --parsable).
std::vector<std::string> common_args(const SlurmOptions& o) {
  std::vector<std::string> a = {"--job-name=" + o.job_name};
  if (!o.partition.empty()) a.push_back("--partition=" + o.partition);
  if (!o.time_limit.empty()) a.push_back("--time=" + o.time_limit);
  a.insert(a.end(), o.sbatch_args.begin(), o.sbatch_args.end());
  return a;
}

// The value of KEY=VALUE in scontrol's one-line output ("" if absent).
std::string field(const std::string& line, const std::string& key) {
  std::string k = key + "=";
  for (size_t at = line.find(k); at != std::string::npos; at = line.find(k, at + 1)) {
    if (at != 0 && line[at - 1] != ' ' && line[at - 1] != '\n') continue;
    size_t end = line.find_first_of(" \n", at + k.size());
    return line.substr(at + k.size(), end == std::string::npos ? std::string::npos : end - at - k.size());
  }
  return {};
}

// Slurm's state of an ended task, as the sweep reports it: (status, Slurm's words).
std::pair<std::string, std::string> ended_state(const std::string& task_id) {
  std::string state, reason, exit_code;
  ToolResult r = run_tool({"scontrol", "-o", "show", "job", task_id}, kToolTimeout);
  if (r.ran() && r.exit_code == 0) {
    state = field(r.out, "JobState");
    reason = field(r.out, "Reason");
    exit_code = field(r.out, "ExitCode");
  } else if (in_path("sacct")) {
    // Forgotten by slurmctld (MinJobAge): the accounting database may still know.
    ToolResult a = run_tool({"sacct", "-n", "-P", "-X", "-j", task_id, "-o", "State,ExitCode"}, kToolTimeout);
    if (a.ran() && a.exit_code == 0) {
      std::string line = trim(a.out.substr(0, a.out.find('\n')));
      if (size_t bar = line.find('|'); bar != std::string::npos) {
        state = line.substr(0, line.find(' ') < bar ? line.find(' ') : bar);  // "CANCELLED by 0" -> CANCELLED
        exit_code = line.substr(bar + 1);
      }
    }
  }
  std::string words = state.empty() ? "state unknown (slurmctld no longer knows the task)" : state;
  if (!reason.empty() && reason != "None") words += ", reason " + reason;
  if (!exit_code.empty()) words += ", exit code " + exit_code;
  std::string status = "lost";
  if (state == "CANCELLED") status = "cancelled";
  else if (state == "TIMEOUT" || state == "DEADLINE") status = "task_timeout";
  else if (state == "NODE_FAIL" || state == "BOOT_FAIL") status = "node_fail";
  else if (state == "PREEMPTED") status = "preempted";
  else if (state == "FAILED" || state == "OUT_OF_MEMORY") status = "task_failed";
  return {status, words};
}

struct Task {
  std::string job;      // the array job's id
  size_t index = 0;     // the task's index in it
  std::string out_path; // its output (stdout and stderr of vtime sweep-task)
  std::vector<size_t> runs;
  bool started = false;
  std::optional<Clock::time_point> gone_since;
  std::string id() const { return job + "_" + std::to_string(index); }
};

std::string comma_list(const std::vector<std::string>& ids) {
  std::string list;
  for (const auto& j : ids) list += (list.empty() ? "" : ",") + j;
  return list;
}

// squeue's view of the arrays: task id -> compact state (PD, R, CG, ...). False when squeue
// could not answer (nothing can be concluded this round).
bool queue_states(const std::vector<std::string>& jobs, std::map<std::string, std::string>& out) {
  out.clear();
  ToolResult r = run_tool({"squeue", "-h", "-r", "-j", comma_list(jobs), "-o", "%i %t"}, kToolTimeout);
  if (!r.ran()) return false;
  // Every array already gone: squeue says so and exits 1.
  if (r.exit_code != 0) return r.err.find("Invalid job id") != std::string::npos;
  std::istringstream in(r.out);
  for (std::string id, st; in >> id >> st;) out[id] = st;
  return true;
}

void cancel(const std::vector<std::string>& jobs) {
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), jobs.begin(), jobs.end());
  run_tool(argv, kToolTimeout);
}

}  // namespace

std::string still_queued(const std::string& work_dir) {
  std::ifstream in(work_dir + "/jobs");
  std::vector<std::string> jobs;
  for (std::string id, stage; in >> id >> stage;) jobs.push_back(id);
  std::map<std::string, std::string> states;
  if (jobs.empty() || !in_path("squeue") || !queue_states(jobs, states) || states.empty()) return {};
  return comma_list(jobs);
}

std::string check_slurm_options(const SlurmOptions& o) {
  static const std::regex kTime(
      R"(^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE)$)");
  if (!o.time_limit.empty() && !std::regex_match(o.time_limit, kTime))
    return "--time-limit '" + o.time_limit + "': not a Slurm time (MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)";
  if (o.throttle < 0) return "--array-throttle must be at least 1 (or 0: no limit)";
  if (o.runs_per_task < 1) return "--runs-per-task must be at least 1";
  if (o.poll_s <= 0) return "--slurm-poll must be positive";
  for (const auto& a : o.sbatch_args) {
    for (const char* own : {"--array", "-a", "--output", "-o", "--error", "-e", "--parsable", "--wrap", "--test-only",
                            "--chdir", "-D", "--job-name", "-J"}) {
      const std::string s = own;
      if (a == s || (s.size() > 2 && a.rfind(s + "=", 0) == 0) || (s.size() == 2 && a.rfind(s, 0) == 0))
        return "--sbatch-arg " + a + ": the sweep sets " + s + " itself";
    }
  }
  return {};
}

std::string check_cluster(SlurmOptions& o) {
  for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel"}) {
    if (!in_path(tool))
      return std::string(tool) + " not found in PATH: --executor slurm runs on a Slurm submit host (the slurm-client package)";
  }
  ToolResult ping = run_tool({"scontrol", "ping"}, kToolTimeout);
  if (!ping.ran()) return "scontrol ping: " + ping.error;
  if (ping.out.find(" is UP") == std::string::npos)
    return "slurmctld does not answer (scontrol ping: " + trim(ping.out + " " + ping.err) + ")";
  ToolResult conf = run_tool({"scontrol", "show", "config"}, kToolTimeout);
  if (conf.ran() && conf.exit_code == 0) {
    std::istringstream in(conf.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("MaxArraySize", 0) != 0) continue;
      auto eq = line.find('=');
      if (eq != std::string::npos) o.max_array_size = std::max<size_t>(1, std::strtoul(line.c_str() + eq + 1, nullptr, 10));
    }
  }
  // What the cluster says of a task with these options, before anything is queued.
  char tmpl[] = "/tmp/vtime-sweep-test-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return "cannot create a test script in /tmp";
  const std::string script = "#!/bin/sh\ntrue\n";
  bool wrote = write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  close(fd);
  chmod(tmpl, 0755);
  std::vector<std::string> argv = {"sbatch", "--test-only", "--array=0-0", "--output=/dev/null"};
  for (const auto& a : common_args(o)) argv.push_back(a);
  argv.push_back(tmpl);
  ToolResult t = wrote ? run_tool(argv, kToolTimeout) : ToolResult{};
  unlink(tmpl);
  if (!wrote) return "cannot write a test script in /tmp";
  if (!t.ran()) return "sbatch --test-only: " + t.error;
  if (t.exit_code != 0) return "the cluster refuses a task with these options (sbatch --test-only: " + trim(t.err + t.out) + ")";
  return {};
}

bool run_on_slurm(const std::vector<Command>& commands, const PoolOptions& po, const SlurmOptions& o,
                  const std::string& stage, std::string* error) {
  if (commands.empty()) return true;
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  // Tasks, in chunks of at most MaxArraySize (one array per chunk).
  const size_t per_task = static_cast<size_t>(std::max(1, o.runs_per_task));
  std::vector<Task> tasks;
  for (size_t i = 0; i < commands.size(); i += per_task) {
    Task t;
    for (size_t k = i; k < std::min(commands.size(), i + per_task); ++k) t.runs.push_back(k);
    tasks.push_back(std::move(t));
  }
  auto outcome_of = [&](size_t k) { return (fs::path(commands[k].log_path).parent_path() / "outcome.json").string(); };
  std::vector<std::string> jobs;
  const size_t chunk = std::max<size_t>(1, o.max_array_size - 1);
  for (size_t first = 0, c = 0; first < tasks.size(); first += chunk, ++c) {
    const size_t n = std::min(chunk, tasks.size() - first);
    const std::string base = o.work_dir + "/" + stage + "-" + std::to_string(c);
    TaskFile tf;
    tf.run_timeout_s = po.run_timeout_s;
    for (size_t t = first; t < first + n; ++t) {
      std::vector<TaskRun> runs;
      for (size_t k : tasks[t].runs) {
        fs::remove(outcome_of(k), ec);
        runs.push_back({commands[k].argv, commands[k].log_path, outcome_of(k)});
      }
      tf.tasks.push_back(std::move(runs));
    }
    if (!write_task_file(base + ".json", tf, error)) return false;
    const std::string script = "#!/bin/sh\n# One task of a vtime sweep: runs its share of the runs (" + base +
                               ".json) and writes their outcomes.\nexec " + shell_word(o.vtime) + " sweep-task " +
                               shell_word(base + ".json") + " \"$SLURM_ARRAY_TASK_ID\"\n";
    if (!write_file_atomic(base + ".sh", script)) {
      *error = "cannot write " + base + ".sh";
      return false;
    }
    chmod((base + ".sh").c_str(), 0755);
    std::string array = "--array=0-" + std::to_string(n - 1);
    if (o.throttle > 0) array += "%" + std::to_string(o.throttle);
    std::vector<std::string> argv = {"sbatch", "--parsable", array, "--output=" + base + "-%a.out",
                                     "--chdir=" + fs::path(o.work_dir).parent_path().string()};
    for (const auto& a : common_args(o)) argv.push_back(a);
    argv.push_back(base + ".sh");
    ToolResult r = run_tool(argv, kToolTimeout);
    std::string job = trim(r.out.substr(0, r.out.find(';')));
    if (!r.ran() || r.exit_code != 0 || job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
      *error = "sbatch refused " + base + ".sh: " + trim(r.ran() ? r.err + r.out : r.error);
      if (!jobs.empty()) cancel(jobs);
      return false;
    }
    jobs.push_back(job);
    std::ofstream(o.work_dir + "/jobs", std::ios::app) << job << " " << stage << "-" << c << "\n";
    for (size_t t = first; t < first + n; ++t) {
      tasks[t].job = job;
      tasks[t].index = t - first;
      tasks[t].out_path = base + "-" + std::to_string(t - first) + ".out";
    }
  }

  std::vector<bool> reported(commands.size(), false);
  size_t left = commands.size();
  // A task's runs count as running from its start; one seen only once ended starts then.
  auto mark_started = [&](Task& t) {
    if (t.started) return;
    t.started = true;
    for (size_t k : t.runs) {
      if (!reported[k] && po.on_start) po.on_start(k);
    }
  };
  auto report = [&](Task& t, size_t k, const Outcome& out) {
    mark_started(t);
    reported[k] = true;
    --left;
    if (po.on_done) po.on_done(k, out);
  };
  std::map<std::string, std::string> states;
  // Until squeue lists none of the arrays (bounded): a task still in the queue may still write
  // into the sweep's directory (its runs, Slurm its .out file) after the sweep has gone.
  auto wait_queue_empty = [&](bool while_unknown) {
    const auto until = Clock::now() + kCancelWait;
    for (;;) {
      const bool known = queue_states(jobs, states);
      if ((known && states.empty()) || (!known && !while_unknown) || Clock::now() >= until) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  };
  while (left > 0) {
    if (po.stop_requested && po.stop_requested() != 0) {
      cancel(jobs);
      // The cancelled tasks stop their runs, which write what they did.
      wait_queue_empty(true);
      for (Task& t : tasks) {
        for (size_t k : t.runs) {
          if (reported[k]) continue;
          Outcome out;
          out.interrupted = true;
          report(t, k, out);
        }
      }
      return false;
    }
    const bool known = queue_states(jobs, states);
    size_t queued = 0;
    for (Task& t : tasks) {
      auto st = states.find(t.id());
      const bool listed = st != states.end();
      if (listed && st->second == "PD") {
        // Not started: no outcome to look for (thousands of files on a shared file system).
        queued += t.runs.size();
        t.gone_since.reset();
        continue;
      }
      if (listed) mark_started(t);
      bool missing = false;
      for (size_t k : t.runs) {
        if (reported[k]) continue;
        std::optional<Outcome> out = read_outcome(outcome_of(k));
        if (out && !out->interrupted) {
          report(t, k, *out);
        } else {
          missing = true;
        }
      }
      if (!missing || !known || listed) {
        t.gone_since.reset();
        continue;
      }
      if (!t.gone_since) t.gone_since = Clock::now();
      if (Clock::now() - *t.gone_since < kGoneGrace) continue;
      // Gone from the queue with runs lacking an outcome: ended from outside.
      auto [status, words] = ended_state(t.id());
      std::string tail = tail_of(t.out_path, 3);
      for (size_t k : t.runs) {
        if (reported[k]) continue;
        Outcome out;
        if (auto partial = read_outcome(outcome_of(k))) out = *partial;  // cut short: its exit and time
        out.interrupted = false;
        out.fault = status;
        out.reason = "Slurm task " + t.id() + ": " + words + (tail.empty() ? "" : "; its output ends: " + tail);
        report(t, k, out);
      }
    }
    if (po.on_queued) po.on_queued(queued);
    if (left == 0) break;
    const auto next = Clock::now() + std::chrono::duration<double>(o.poll_s);
    while (Clock::now() < next && !(po.stop_requested && po.stop_requested() != 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // A task writes its last run's outcome before it ends.
  wait_queue_empty(false);
  return true;
}

}  // namespace vtime::sweep
