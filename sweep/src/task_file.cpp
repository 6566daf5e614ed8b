#include <vtime/sweep/report.h>
#include <vtime/sweep/task_file.h>

#include <nlohmann/json.hpp>

#include <fstream>

namespace vtime::sweep {

bool write_task_file(const std::string& path, const TaskFile& tf, std::string* error) {
  nlohmann::ordered_json j;
  j["vtime_sweep_tasks"] = 1;
  j["run_timeout_s"] = tf.run_timeout_s;
  j["tasks"] = nlohmann::ordered_json::array();
  for (const auto& task : tf.tasks) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const auto& r : task) runs.push_back({{"argv", r.argv}, {"log", r.log_path}, {"outcome", r.outcome_path}});
    j["tasks"].push_back(std::move(runs));
  }
  if (!write_file_atomic(path, j.dump(1) + "\n")) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

protocol::Result<TaskFile> read_task_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return protocol::Error{"cannot read " + path};
  auto j = nlohmann::json::parse(in, nullptr, false);
  auto bad = [&](const std::string& what) { return protocol::Error{path + ": not a sweep task file (" + what + ")"}; };
  if (j.is_discarded() || !j.is_object()) return bad("not JSON");
  if (j.value("vtime_sweep_tasks", 0) != 1) return bad("no vtime_sweep_tasks: 1");
  if (!j.contains("tasks") || !j["tasks"].is_array()) return bad("no tasks");
  TaskFile tf;
  tf.run_timeout_s = j.value("run_timeout_s", 0.0);
  for (const auto& task : j["tasks"]) {
    if (!task.is_array()) return bad("a task is not a list of runs");
    std::vector<TaskRun> runs;
    for (const auto& r : task) {
      if (!r.is_object() || !r.contains("argv") || !r["argv"].is_array() || r["argv"].empty() || !r.contains("log") ||
          !r["log"].is_string() || !r.contains("outcome") || !r["outcome"].is_string())
        return bad("a run without argv, log or outcome");
      TaskRun tr;
      for (const auto& a : r["argv"]) {
        if (!a.is_string()) return bad("an argument is not a string");
        tr.argv.push_back(a.get<std::string>());
      }
      tr.log_path = r["log"].get<std::string>();
      tr.outcome_path = r["outcome"].get<std::string>();
      runs.push_back(std::move(tr));
    }
    tf.tasks.push_back(std::move(runs));
  }
  return tf;
}

bool write_outcome(const std::string& path, const Outcome& o) {
  nlohmann::ordered_json j;
  j["exit_code"] = o.exit_code;
  j["signal"] = o.signal;
  j["timed_out"] = o.timed_out;
  j["interrupted"] = o.interrupted;
  j["wall_s"] = o.wall_s;
  return write_file_atomic(path, j.dump() + "\n");
}

std::optional<Outcome> read_outcome(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("exit_code")) return std::nullopt;
  Outcome o;
  o.exit_code = j.value("exit_code", -1);
  o.signal = j.value("signal", 0);
  o.timed_out = j.value("timed_out", false);
  o.interrupted = j.value("interrupted", false);
  o.wall_s = j.value("wall_s", 0.0);
  return o;
}

int run_task(const TaskFile& tf, size_t index, const std::function<int()>& stop_requested) {
  if (index >= tf.tasks.size()) return 2;
  const auto& runs = tf.tasks[index];
  std::vector<Command> commands;
  for (const auto& r : runs) commands.push_back({r.argv, r.log_path});
  PoolOptions po;
  po.parallel = 1;
  po.run_timeout_s = tf.run_timeout_s;
  po.stop_requested = stop_requested;
  bool written = true;
  po.on_done = [&](size_t k, const Outcome& o) { written = write_outcome(runs[k].outcome_path, o) && written; };
  const bool complete = run_all(commands, po);
  if (!complete) {
    const int sig = stop_requested ? stop_requested() : 0;
    return 128 + (sig ? sig : 15);
  }
  return written ? 0 : 1;
}

}  // namespace vtime::sweep
