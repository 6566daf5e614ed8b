// One recorded run (see vtime/recorder/recording.h).
#include <vtime/recorder/recording.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#ifndef VTIME_VERSION_STRING
#define VTIME_VERSION_STRING "0"
#endif

namespace vtime::recorder {
namespace {

std::string utc_now() {
  time_t t = time(nullptr);  // vtime itself is never under the shim: real time
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::optional<Json> make_header(const RecordingSetup& s, std::string* error) {
  Json h;
  h["type"] = "header";
  h["format"] = kFormatName;
  h["version"] = kFormatVersion;
  h["tool"] = std::string("vtime ") + VTIME_VERSION_STRING;
  h["command"] = s.command;
  h["options"] = s.options;
  Json inputs = Json::array();
  for (auto& [role, path] : s.inputs) {
    auto d = describe_input(role, path);
    if (!d) {
      if (error) *error = "cannot read the " + role + " " + path;
      return std::nullopt;
    }
    inputs.push_back(*d);
  }
  h["inputs"] = inputs;
  h["scheduler"] = s.scheduler;
  Json clock;
  clock["epoch_ns"] = s.epoch_ns;
  std::vector<std::string> ignored = default_ignored_threads();
  ignored.insert(ignored.end(), s.ignored_threads.begin(), s.ignored_threads.end());
  clock["ignored_threads"] = ignored;
  h["clock"] = clock;
  return h;
}

std::unique_ptr<Recording> Recording::start(const RecordingSetup& s, std::string* error) {
  auto header = make_header(s, error);
  if (!header) return nullptr;
  auto writer = TraceWriter::create(s.path, *header, error);
  if (!writer) return nullptr;
  std::unique_ptr<Recording> r(new Recording());
  r->path_ = s.path;
  r->sink_owner_ = std::make_unique<TraceFileSink>(std::move(writer));
  r->sink_ = r->sink_owner_.get();
  std::vector<std::string> ignored = default_ignored_threads();
  ignored.insert(ignored.end(), s.ignored_threads.begin(), s.ignored_threads.end());
  r->recorder_ = std::make_unique<Recorder>(*r->sink_, ignored);
  Json& sc = r->sidecar_;
  sc["trace"] = s.path;
  sc["wall_start"] = utc_now();
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  sc["host"] = host;
  std::error_code ec;
  sc["cwd"] = std::filesystem::current_path(ec).string();
  sc["vtime"] = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  sc["pids"] = Json::object();
  sc["pids"]["broker"] = getpid();
  Json ep = Json::object();
  for (auto& [k, v] : s.endpoints) ep[k] = v;
  sc["endpoints"] = ep;
  r->write_sidecar(0, false);
  return r;
}

void Recording::set_pid(const std::string& role, pid_t pid) {
  sidecar_["pids"][role] = pid;
  write_sidecar(0, false);
}

void Recording::write_sidecar(double wall_seconds, bool done) {
  Json sc = sidecar_;
  sc["complete"] = done;
  if (done) sc["wall_seconds"] = wall_seconds;
  std::ofstream out(sidecar_path(path_), std::ios::trunc);
  out << sc.dump(2) << "\n";
}

bool Recording::end(double wall_seconds, bool compress) {
  bool ok = sink_->writer().ok();
  if (ok && compress) {
    std::string err;
    std::string zst = path_ + ".zst";
    if (compress_trace(path_, zst, &err)) {
      std::remove(path_.c_str());
      sidecar_["trace"] = zst;
      path_ = zst;
    } else {
      fprintf(stderr, "vtime: cannot compress the trace: %s (kept uncompressed)\n", err.c_str());
    }
  }
  write_sidecar(wall_seconds, true);
  return ok;
}

}  // namespace vtime::recorder
