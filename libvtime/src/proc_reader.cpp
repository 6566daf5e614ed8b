// Reading the wrapped tree's state from /proc (see proc_reader.h).
#include "proc_reader.h"

#include "proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtime::detail {
namespace {

ssize_t pread_all(int fd, char* buf, size_t cap) {
  ssize_t n = pread(fd, buf, cap - 1, 0);
  if (n >= 0) buf[n] = 0;
  return n;
}

bool is_number(const char* s) {
  if (!*s) return false;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

}  // namespace

ProcReader::~ProcReader() {
  for (auto& [tid, f] : fds_) {
    if (f.stat >= 0) close(f.stat);
    if (f.schedstat >= 0) close(f.schedstat);
    if (f.syscall >= 0) close(f.syscall);
  }
}

void ProcReader::prune(const std::unordered_set<pid_t>& live) {
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (live.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.stat >= 0) close(it->second.stat);
    if (it->second.schedstat >= 0) close(it->second.schedstat);
    if (it->second.syscall >= 0) close(it->second.syscall);
    it = fds_.erase(it);
  }
}

std::string ProcReader::read_small(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

char ProcReader::process_state(pid_t pid, uint64_t* start_time, pid_t* ppid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::string s = read_small(path);
  char state = 0;
  if (s.empty() || !parse_proc_stat(s.c_str(), &state, ppid, start_time)) return 0;
  return state;
}

std::vector<pid_t> ProcReader::descendants(const std::unordered_set<pid_t>& roots) {
  std::unordered_map<pid_t, pid_t> seen;
  DIR* d = opendir("/proc");
  if (!d) return {};
  while (dirent* e = readdir(d)) {
    if (!is_number(e->d_name)) continue;
    pid_t pid = static_cast<pid_t>(atoi(e->d_name));
    auto it = ppid_cache_.find(pid);
    pid_t ppid = 0;
    if (it != ppid_cache_.end()) {
      ppid = it->second;  // a pid keeps its parent until it is reaped (re-parenting aside)
    } else {
      char state;
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
      std::string s = read_small(path);
      if (s.empty() || !parse_proc_stat(s.c_str(), &state, &ppid, nullptr)) continue;
    }
    seen.emplace(pid, ppid);
  }
  closedir(d);
  ppid_cache_ = seen;
  // Transitive closure from the roots.
  std::unordered_set<pid_t> tree(roots.begin(), roots.end());
  std::vector<pid_t> out;
  bool grew = true;
  while (grew) {
    grew = false;
    for (auto& [pid, ppid] : seen) {
      if (!tree.count(pid) && tree.count(ppid)) {
        tree.insert(pid);
        out.push_back(pid);
        grew = true;
      }
    }
  }
  return out;
}

bool ProcReader::sample_one(pid_t pid, pid_t tid, ThreadSample& s) {
  ThreadFds& f = fds_[tid];
  char path[96];
  char buf[1024];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (f.stat < 0) {
      snprintf(path, sizeof path, "/proc/%d/task/%d/stat", static_cast<int>(pid), static_cast<int>(tid));
      f.stat = open(path, O_RDONLY | O_CLOEXEC);
      snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", static_cast<int>(pid), static_cast<int>(tid));
      f.schedstat = open(path, O_RDONLY | O_CLOEXEC);
      snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", static_cast<int>(pid), static_cast<int>(tid));
      f.syscall = open(path, O_RDONLY | O_CLOEXEC);
      if (f.stat < 0) break;
    }
    if (pread_all(f.stat, buf, sizeof buf) > 0 && parse_proc_stat(buf, &s.state, nullptr, nullptr)) {
      s.pid = pid;
      s.tid = tid;
      if (f.schedstat >= 0 && pread_all(f.schedstat, buf, sizeof buf) > 0) {
        char* end = nullptr;
        s.run_ns = strtoull(buf, &end, 10);
        strtoull(end, &end, 10);  // time waiting on a runqueue: changes without running
        s.slices = strtoull(end, nullptr, 10);
      }
      // Read last: the kernel waits until the task is really off the cpu before answering.
      if (f.syscall >= 0 && pread_all(f.syscall, buf, sizeof buf) > 0) {
        s.running = strncmp(buf, "running", 7) == 0;
        s.syscall_nr = s.running ? -1 : strtol(buf, nullptr, 10);
      }
      return true;
    }
    // A stale descriptor (the tid was reused or the thread is gone): reopen once.
    if (f.stat >= 0) close(f.stat);
    if (f.schedstat >= 0) close(f.schedstat);
    if (f.syscall >= 0) close(f.syscall);
    f = ThreadFds{};
  }
  fds_.erase(tid);
  return false;
}

bool ProcReader::sample_threads(pid_t pid, std::vector<ThreadSample>& out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* d = opendir(path);
  if (!d) return false;
  while (dirent* e = readdir(d)) {
    if (!is_number(e->d_name)) continue;
    ThreadSample s;
    if (sample_one(pid, static_cast<pid_t>(atoi(e->d_name)), s)) out.push_back(s);
  }
  closedir(d);
  return true;
}

}  // namespace vtime::detail
