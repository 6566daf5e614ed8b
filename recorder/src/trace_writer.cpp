// TraceWriter: one write(2) per line, so a crash loses at most the line being written.
#include <vtime/recorder/trace.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace vtime::recorder {

std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Fnv1a::hex() const { return hex64(h); }

std::optional<Json> describe_input(const std::string& role, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Fnv1a f;
  uint64_t size = 0;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    auto n = static_cast<size_t>(in.gcount());
    f.add(buf, n);
    size += n;
  }
  Json j;
  j["role"] = role;
  j["path"] = path;
  j["size"] = size;
  j["fnv1a64"] = f.hex();
  return j;
}

Json record(const char* type, int64_t t) {
  Json j;
  j["seq"] = 0;
  j["t"] = t;
  j["type"] = type;
  return j;
}

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path, Json header, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (error) *error = "cannot create the trace " + path + ": " + strerror(errno);
    return nullptr;
  }
  std::unique_ptr<TraceWriter> w(new TraceWriter());
  w->fd_ = fd;
  w->path_ = path;
  w->put_line(header.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (!w->ok_) {
    if (error) *error = "cannot write the trace " + path + ": " + strerror(errno);
    return nullptr;
  }
  return w;
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceWriter::put_line(const std::string& text) {
  if (fd_ < 0) return;
  std::string line = text;
  line += '\n';
  digest_.add(line.data(), line.size());
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0 && ok_) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok_ = false;
      fprintf(stderr, "vtime: writing the trace %s failed: %s; the rest of the run is not recorded\n",
              path_.c_str(), strerror(errno));
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

uint64_t TraceWriter::write(Json rec) {
  if (finished_) return 0;
  rec["seq"] = ++seq_;
  counts_[rec["type"].get<std::string>()]++;
  put_line(rec.dump(-1, ' ', false, Json::error_handler_t::replace));
  return seq_;
}

void TraceWriter::finish(const std::string& status, int exit_code, int64_t t) {
  if (finished_ || fd_ < 0) return;
  Json tr = record("trailer", t);
  tr["seq"] = ++seq_;
  tr["status"] = status;
  tr["exit_code"] = exit_code;
  tr["records"] = seq_ - 1;
  Json counts = Json::object();
  for (const char* k : {"msg", "decision", "timer", "advance", "clock", "process", "error"}) {
    auto it = counts_.find(k);
    counts[k] = it == counts_.end() ? 0 : it->second;
  }
  tr["counts"] = counts;
  tr["digest"] = digest_.hex();
  put_line(tr.dump());
  finished_ = true;
  if (::fsync(fd_) != 0 && errno != EINVAL) ok_ = false;
  ::close(fd_);
  fd_ = -1;
}

std::string sidecar_path(const std::string& trace_path) {
  std::string base = trace_path;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".zst") == 0) base.resize(base.size() - 4);
  return base + ".meta.json";
}

}  // namespace vtime::recorder
