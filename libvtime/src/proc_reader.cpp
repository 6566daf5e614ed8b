// Reading the wrapped tree's state from /proc (see proc_reader.h).
#include <vtime/internal/proc_reader.h>

#include "proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

// Field `field` (1-based, as in proc(5)) of a stat line; 0 when the line is too short.
// Fields 1 and 2 (pid, comm) are not supported: counting starts after the ")" of the comm.
long long stat_field(const char* buf, int field) {
  const char* p = strrchr(buf, ')');
  if (!p || p[1] != ' ' || field < 3) return 0;
  p += 2;  // field 3
  for (int f = 3; f < field; ++f) {
    p = strchr(p, ' ');
    if (!p) return 0;
    ++p;
  }
  return strtoll(p, nullptr, 10);
}

// Opens /proc/PID/task/TID/NAME into fd unless it is open already; true when it is open.
bool open_task_file(pid_t pid, pid_t tid, const char* name, int& fd) {
  if (fd >= 0) return true;
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/task/%d/%s", static_cast<int>(pid), static_cast<int>(tid), name);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  return fd >= 0;
}

}  // namespace

ProcReader::~ProcReader() {
  for (auto& [tid, f] : fds_) close_thread(f);
  for (auto& [pid, e] : procs_) close_process(e);
  if (stat_fd_ >= 0) close(stat_fd_);
}

void ProcReader::close_process(ProcessEntry& e) {
  if (e.stat >= 0) close(e.stat);
  if (e.comm >= 0) close(e.comm);
  e = ProcessEntry{};
}

void ProcReader::close_thread(ThreadFds& f) {
  if (f.stat >= 0) close(f.stat);
  if (f.schedstat >= 0) close(f.schedstat);
  if (f.syscall >= 0) close(f.syscall);
  f = ThreadFds{};
}

void ProcReader::prune(const std::unordered_set<pid_t>& live_tids, const std::unordered_set<pid_t>& live_pids) {
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (live_tids.count(it->first)) {
      ++it;
      continue;
    }
    close_thread(it->second);
    it = fds_.erase(it);
  }
  for (auto it = procs_.begin(); it != procs_.end();) {
    if (live_pids.count(it->first)) {
      ++it;
      continue;
    }
    close_process(it->second);
    it = procs_.erase(it);
  }
}

void ProcReader::forget_thread(pid_t tid) {
  auto it = fds_.find(tid);
  if (it == fds_.end()) return;
  close_thread(it->second);
  fds_.erase(it);
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

uint64_t ProcReader::forks() {
  if (stat_fd_ < 0) stat_fd_ = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (stat_fd_ < 0) return 0;
  // /proc/stat is about 1 KB on a small machine; the per-cpu lines grow with the cpu count.
  char buf[16384];
  if (pread_all(stat_fd_, buf, sizeof buf) <= 0) return 0;
  const char* p = strstr(buf, "\nprocesses ");
  return p ? strtoull(p + 11, nullptr, 10) : 0;
}

std::vector<pid_t> ProcReader::descendants(const std::unordered_set<pid_t>& roots, uint64_t forks) {
  if (forks == 0 || forks != ppid_forks_) {
    // Something was created somewhere (or we cannot tell): list every process again. The parent
    // of a process listed before is kept without reading its stat again when its /proc entry is
    // the same one (same inode number): a process that died and whose pid went to a new process
    // has a new entry, whose parent is read. A process keeps its remembered parent even if it is
    // re-parented later, so an orphaned descendant stays in the tree.
    std::unordered_map<pid_t, PpidEntry> seen;
    DIR* d = opendir("/proc");
    if (!d) return {};
    while (dirent* e = readdir(d)) {
      if (!is_number(e->d_name)) continue;
      pid_t pid = static_cast<pid_t>(atoi(e->d_name));
      auto it = ppid_cache_.find(pid);
      if (it != ppid_cache_.end() && it->second.ino == e->d_ino) {
        seen.emplace(pid, it->second);
        continue;
      }
      char state;
      pid_t ppid = 0;
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
      std::string s = read_small(path);
      if (s.empty() || !parse_proc_stat(s.c_str(), &state, &ppid, nullptr)) continue;
      seen.emplace(pid, PpidEntry{e->d_ino, ppid});
    }
    closedir(d);
    ppid_cache_ = std::move(seen);
    ppid_forks_ = forks;
  }
  // Transitive closure from the roots.
  std::unordered_set<pid_t> tree(roots.begin(), roots.end());
  std::vector<pid_t> out;
  bool grew = true;
  while (grew) {
    grew = false;
    for (auto& [pid, e] : ppid_cache_) {
      if (!tree.count(pid) && tree.count(e.ppid)) {
        tree.insert(pid);
        out.push_back(pid);
        grew = true;
      }
    }
  }
  return out;
}

ssize_t ProcReader::read_leader_file(pid_t pid, int ProcessEntry::*fd, const char* name, char* buf, size_t cap) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    ProcessEntry& e = procs_[pid];
    if (!open_task_file(pid, pid, name, e.*fd)) break;
    ssize_t n = pread_all(e.*fd, buf, cap);
    if (n > 0) return n;
    // Bound to a process that is gone (ESRCH): forget it, and look once for a new one.
    close_process(e);
  }
  if (auto it = procs_.find(pid); it != procs_.end()) {
    close_process(it->second);
    procs_.erase(it);
  }
  return -1;
}

bool ProcReader::process_status(pid_t pid, ProcessStatus& out) {
  // The leader's own stat, not /proc/PID/stat: that one sums counters over every thread of the
  // group (several times dearer for a process with many threads). The state letter, start time
  // and thread count are the same in both.
  char buf[1024];
  if (read_leader_file(pid, &ProcessEntry::stat, "stat", buf, sizeof buf) <= 0 || !parse_proc_stat(buf, &out.state, nullptr, &out.start_time)) {
    return false;
  }
  out.threads = static_cast<long>(stat_field(buf, 20));
  return true;
}

std::string ProcReader::process_name(pid_t pid) {
  // Its own small file: generating the whole stat line for the name cost twice the recording
  // time of a Slurm run.
  char buf[64];
  ssize_t n = read_leader_file(pid, &ProcessEntry::comm, "comm", buf, sizeof buf);
  if (n <= 0) return {};
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

bool ProcReader::thread_ids(pid_t pid, uint64_t forks, long threads, std::vector<pid_t>& out) {
  ProcessEntry& e = procs_[pid];
  if (forks != 0 && e.listed_forks == forks && e.listed_threads == threads) {
    out = e.tids;
    return true;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* d = opendir(path);
  if (!d) return false;
  out.clear();
  while (dirent* ent = readdir(d)) {
    if (is_number(ent->d_name)) out.push_back(static_cast<pid_t>(atoi(ent->d_name)));
  }
  closedir(d);
  e.tids = out;
  e.listed_forks = forks;
  e.listed_threads = threads;
  return true;
}

bool ProcReader::open_thread(pid_t pid, pid_t tid, ThreadFds& f) {
  // Only the missing ones: proofs open some of them alone (syscall_line, thread_state).
  open_task_file(pid, tid, "stat", f.stat);
  open_task_file(pid, tid, "schedstat", f.schedstat);
  open_task_file(pid, tid, "syscall", f.syscall);
  return f.stat >= 0;
}

bool ProcReader::sample(pid_t pid, pid_t tid, ThreadSample& s) {
  ThreadFds& f = fds_[tid];
  char buf[1024];
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Proofs open some of these files alone (syscall_line, thread_state): open what is missing.
    if ((f.stat < 0 || f.schedstat < 0 || f.syscall < 0) && !open_thread(pid, tid, f)) break;
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
    close_thread(f);
  }
  close_thread(f);
  fds_.erase(tid);
  return false;
}

int ProcReader::syscall_line(pid_t pid, pid_t tid, char* buf, size_t cap) {
  ThreadFds& f = fds_[tid];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!open_task_file(pid, tid, "syscall", f.syscall)) break;
    ssize_t n = pread_all(f.syscall, buf, cap);
    if (n > 0) {
      if (buf[n - 1] == '\n') buf[--n] = 0;
      return static_cast<int>(n);
    }
    close_thread(f);
  }
  close_thread(f);
  fds_.erase(tid);
  return -1;
}

char ProcReader::thread_state(pid_t pid, pid_t tid) {
  ThreadFds& f = fds_[tid];
  char buf[1024];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!open_task_file(pid, tid, "stat", f.stat)) break;
    char state = 0;
    if (pread_all(f.stat, buf, sizeof buf) > 0 && parse_proc_stat(buf, &state, nullptr, nullptr)) return state;
    close(f.stat);
    f.stat = -1;
  }
  return 0;
}

bool ProcReader::sample_threads(pid_t pid, std::vector<ThreadSample>& out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* d = opendir(path);
  if (!d) return false;
  while (dirent* e = readdir(d)) {
    if (!is_number(e->d_name)) continue;
    ThreadSample s;
    if (sample(pid, static_cast<pid_t>(atoi(e->d_name)), s)) out.push_back(s);
  }
  closedir(d);
  return true;
}

}  // namespace vtime::detail
