// gantt export: jobs over resources drawn by gnuplot (Debian's gnuplot-nox), run as a child
// process on a generated script and data file in a private temporary directory. gnuplot is a
// run-time dependency of this one format only, so a missing gnuplot is a clear error, not a
// build requirement.
#include <vtime/recorder/tools.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exports.h"
#include "job_tracker.h"
#include "trace_input.h"

extern char** environ;

namespace vtime::recorder::tools {

namespace {

// Contrasting colours, cycled over the jobs in submission order.
constexpr unsigned kPalette[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948,
                                 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac, 0x1f77b4, 0x8c564b};
// Above this many jobs, labels would only cover the boxes.
constexpr size_t kMaxLabelledJobs = 40;

// gnuplot's single-quoted strings take everything literally but '' for a quote.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Contiguous runs of an allocation, "0-3 5" -> {0,3},{5,5}: one box each.
std::vector<std::pair<int, int>> runs(const std::vector<int>& ids) {
  std::vector<std::pair<int, int>> out;
  for (int id : ids) {
    if (!out.empty() && out.back().second + 1 == id) out.back().second = id;
    else out.push_back({id, id});
  }
  return out;
}

// Runs argv; its stderr goes to `errors`. -1 with errno when it cannot be started.
int run_child(const std::vector<std::string>& args, const std::string& errors) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int write_gantt(TraceReader& r, const std::string& trace_name, const std::string& image, std::ostream& err) {
  JobTracker jobs;
  Json rec;
  int64_t last_t = 0;
  while (r.next(rec)) {
    jobs.add(rec);
    last_t = std::max(last_t, int_or(rec, "t"));
  }
  jobs.finish();

  std::ostringstream data;
  int max_id = 0;
  size_t drawn = 0, index = 0;
  std::ostringstream labels;
  for (const TrackedJob& j : jobs.jobs()) {
    unsigned colour = kPalette[index++ % std::size(kPalette)];
    if (!j.start || j.alloc.empty()) continue;
    ++drawn;
    double start = static_cast<double>(j.start->ns()) / 1e9;
    double end = static_cast<double>(j.end ? j.end->ns() : last_t) / 1e9;
    for (auto [lo, hi] : runs(j.alloc.ids())) {
      max_id = std::max(max_id, hi);
      // x y xdelta ydelta colour: a box from start to end over resources lo..hi.
      data << (start + end) / 2 << " " << (lo + hi) / 2.0 << " " << (end - start) / 2 << " " << (hi - lo + 0.8) / 2
           << " " << colour << "\n";
      labels << (start + end) / 2 << " " << (lo + hi) / 2.0 << " " << quoted(j.id) << "\n";
    }
  }
  if (drawn == 0) {
    err << "vtime trace export: no job started in " << trace_name << ": there is nothing to draw\n";
    return kTraceOutputFailed;
  }
  for (const TrackedResource& res : jobs.resources()) max_id = std::max(max_id, res.id);

  const char* tmp_root = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp_root && *tmp_root ? tmp_root : "/tmp") + "/vtime-gantt-XXXXXX";
  std::vector<char> dir_buf(pattern.begin(), pattern.end());
  dir_buf.push_back('\0');
  if (mkdtemp(dir_buf.data()) == nullptr) {
    err << "vtime trace export: cannot create a temporary directory: " << std::strerror(errno) << "\n";
    return kTraceOutputFailed;
  }
  std::string dir = dir_buf.data();
  std::string data_path = dir + "/jobs.dat", script_path = dir + "/gantt.gp", errors_path = dir + "/gnuplot.err";
  {
    std::ofstream d(data_path);
    d << data.str();
    if (drawn <= kMaxLabelledJobs) d << "\n\n" << labels.str();  // index 1: the labels
  }
  bool svg = ends_with(image, ".svg");
  int height = std::clamp(240 + 14 * (max_id + 1), 480, 2400);
  std::ofstream s(script_path);
  s << (svg ? "set terminal svg size 1400," : "set terminal pngcairo size 1400,") << height << " noenhanced font ',10'\n"
    << "set output " << quoted(image) << "\n"
    << "set title " << quoted("jobs over resources: " + trace_name) << "\n"
    << "set xlabel 'simulated time (s)'\nset ylabel 'resource'\n"
    << "set yrange [-0.6:" << max_id + 0.6 << "]\nset xrange [0:*]\n"
    << "set ytics " << (max_id > 40 ? max_id / 20 + 1 : 1) << "\n"
    << "set grid xtics\nunset key\nset style fill solid 0.85 border lc rgb '#333333'\n"
    << "plot " << quoted(data_path) << " index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable";
  if (drawn <= kMaxLabelledJobs) s << ", '' index 1 using 1:2:3 with labels font ',8'";
  s << "\n";
  s.close();

  int rc = run_child({"gnuplot", script_path}, errors_path);
  int result = kTraceOk;
  if (rc < 0) {
    err << "vtime trace export: cannot run gnuplot (" << std::strerror(errno)
        << "): the gantt chart needs it in PATH (Debian: apt-get install gnuplot-nox)\n";
    result = kTraceOutputFailed;
  } else if (rc != 0) {
    std::ifstream e(errors_path);
    std::string text((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    err << "vtime trace export: gnuplot failed (exit " << rc << ") drawing " << image << ":\n" << text;
    result = kTraceOutputFailed;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return result;
}

}  // namespace vtime::recorder::tools
