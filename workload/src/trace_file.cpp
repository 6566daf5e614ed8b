#include <vtime/workload/trace_file.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtime::workload {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// getline(3) over a FILE*, as read_swf's line source.
Result<SwfTrace> read_stream(FILE* f, const SwfReadOptions& o) {
  char* buf = nullptr;
  size_t cap = 0;
  auto next = [&](std::string& line) {
    ssize_t n = getline(&buf, &cap, f);
    if (n < 0) return false;
    line.assign(buf, static_cast<size_t>(n));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return true;
  };
  auto t = read_swf(next, o);
  free(buf);
  return t;
}

}  // namespace

bool is_swf_path(const std::string& path) { return ends_with(path, ".swf") || ends_with(path, ".swf.gz"); }

Result<SwfTrace> read_swf_file(const std::string& path, const SwfReadOptions& o) {
  if (access(path.c_str(), R_OK) != 0) return Error{"cannot read '" + path + "': " + std::strerror(errno)};
  auto prefixed = [&](Result<SwfTrace> r) -> Result<SwfTrace> {
    if (r) return r;
    return Error{path + ": " + r.error()};
  };
  if (!ends_with(path, ".gz")) {
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) return Error{"cannot read '" + path + "': " + std::strerror(errno)};
    auto t = read_stream(f, o);
    std::fclose(f);
    return prefixed(std::move(t));
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2);
    execlp("gzip", "gzip", "-dc", "--", path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  FILE* f = fdopen(fds[0], "r");
  auto t = f ? read_stream(f, o) : Result<SwfTrace>(Error{"fdopen failed"});
  if (f) std::fclose(f);
  else close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return Error{"cannot decompress '" + path + "': gzip not found"};
    // Lines before the corruption were read, but a cut trace is not the trace: refuse it.
    return Error{"cannot decompress '" + path + "': not a valid gzip file (gzip -dc failed)"};
  }
  return prefixed(std::move(t));
}

}  // namespace vtime::workload
