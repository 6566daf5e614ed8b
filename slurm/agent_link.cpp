// Bridge and agent ends of the job-agent link (see agent_link.h).
#include "agent_link.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>

namespace vtime::slurm {
namespace {

socklen_t abstract_address(const std::string& name, sockaddr_un& a) {
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof a.sun_path - 2);
  memcpy(a.sun_path + 1, name.data(), n);  // sun_path[0] = 0: the abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

AgentLink::AgentLink(const std::string& name) {
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + strerror(errno));
  sockaddr_un a;
  socklen_t len = abstract_address(name, a);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(listen_fd_, 256) != 0) {
    int e = errno;
    close(listen_fd_);
    throw std::runtime_error("cannot listen for job agents on @" + name + ": " + strerror(e));
  }
}

AgentLink::~AgentLink() {
  for (auto& [fd, c] : conns_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::vector<int> AgentLink::agent_fds() const {
  std::vector<int> out;
  for (auto& [fd, c] : conns_) out.push_back(fd);
  return out;
}

void AgentLink::accept_all() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    conns_[fd] = Conn{};
  }
}

std::vector<AgentReport> AgentLink::read(int fd) {
  std::vector<AgentReport> out;
  auto it = conns_.find(fd);
  if (it == conns_.end()) return out;
  Conn& c = it->second;
  char buf[4096];
  bool closed = false;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      c.buf.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    break;
  }
  for (size_t nl; (nl = c.buf.find('\n')) != std::string::npos;) {
    std::string line = c.buf.substr(0, nl);
    c.buf.erase(0, nl + 1);
    AgentReport r;
    char word[16] = {0};
    unsigned long id = 0;
    int used = 0;
    if (sscanf(line.c_str(), "%15s %lu %n", word, &id, &used) >= 2 && id > 0 && id <= 0xffffffffUL) {
      r.slurm_id = static_cast<uint32_t>(id);
      if (strcmp(word, "start") == 0 && used > 0 && static_cast<size_t>(used) < line.size()) {
        r.kind = AgentReport::kStarted;
        r.nodelist = line.substr(static_cast<size_t>(used));
        c.slurm_id = r.slurm_id;
      } else if (strcmp(word, "killed") == 0) {
        r.kind = AgentReport::kKilled;
      }
    }
    if (r.kind == AgentReport::kBroken) r.text = "job agent sent '" + line.substr(0, 200) + "'";
    out.push_back(std::move(r));
  }
  if (closed) {
    close(fd);
    conns_.erase(it);
  }
  return out;
}

bool AgentLink::end(uint32_t slurm_id, int code) {
  for (auto& [fd, c] : conns_) {
    if (c.slurm_id == slurm_id) return write_all(fd, "end " + std::to_string(code) + "\n");
  }
  return false;
}

// --- the agent process ----------------------------------------------------------------------

namespace {
volatile sig_atomic_t g_terminated = 0;
extern "C" void on_term(int) { g_terminated = 1; }
}  // namespace

int job_agent_main() {
  const char* name = getenv(kAgentSocketEnv);
  const char* id = getenv("SLURM_JOB_ID");
  const char* nodes = getenv("SLURM_JOB_NODELIST");
  if (!name || !id || !nodes) {
    fprintf(stderr, "vtime-slurm job agent: %s, SLURM_JOB_ID and SLURM_JOB_NODELIST must be set (run by Slurm "
                    "for vtime-slurm only)\n", kAgentSocketEnv);
    return 2;
  }
  // No SA_RESTART: Slurm's SIGTERM (time limit, scancel) must interrupt the read below.
  struct sigaction sa {};
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  // The real job's launch (BridgeOptions::job_start_latency_ns), in virtual time.
  if (const char* l = getenv(kAgentStartLatencyEnv)) {
    long long ns = atoll(l);
    timespec d{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    while (ns > 0 && nanosleep(&d, &d) != 0 && errno == EINTR && !g_terminated) {
    }
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a;
  socklen_t len = abstract_address(name, a);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    fprintf(stderr, "vtime-slurm job agent: cannot reach the bridge at @%s: %s\n", name, strerror(errno));
    return 1;
  }
  if (!write_all(fd, std::string("start ") + id + " " + nodes + "\n")) return 1;
  if (g_terminated) {  // killed while it was starting
    write_all(fd, std::string("killed ") + id + "\n");
    return 143;
  }
  std::string buf;
  char c[64];
  for (;;) {
    ssize_t n = ::read(fd, c, sizeof c);
    if (n < 0 && errno == EINTR) {
      if (g_terminated) {
        write_all(fd, std::string("killed ") + id + "\n");
        return 143;
      }
      continue;
    }
    if (n <= 0) return 1;  // the bridge is gone
    buf.append(c, static_cast<size_t>(n));
    if (size_t nl = buf.find('\n'); nl != std::string::npos) {
      int code = 0;
      if (sscanf(buf.c_str(), "end %d", &code) != 1) return 1;
      return code;
    }
  }
}

}  // namespace vtime::slurm
