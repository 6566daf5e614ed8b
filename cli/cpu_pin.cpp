#include "cpu_pin.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace vtime::cli {

CpuPin::CpuPin(CpuPin&& o) noexcept : cpu_(std::exchange(o.cpu_, -1)), lock_fd_(std::exchange(o.lock_fd_, -1)) {}

CpuPin& CpuPin::operator=(CpuPin&& o) noexcept {
  if (this != &o) {
    if (lock_fd_ >= 0) close(lock_fd_);
    cpu_ = std::exchange(o.cpu_, -1);
    lock_fd_ = std::exchange(o.lock_fd_, -1);
  }
  return *this;
}

CpuPin::~CpuPin() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

namespace {

bool parse_cpu(const std::string& what, int* cpu) {
  if (what.empty() || what.size() > 5 || what.find_first_not_of("0123456789") != std::string::npos) return false;
  *cpu = std::stoi(what);
  return *cpu < CPU_SETSIZE;
}

// The lock of one CPU: a file every user can open (flock needs no write access), held for the
// run's life; a run that dies releases it with its descriptors.
int try_lock(const std::string& dir, int cpu) {
  std::string path = dir + "/vtime-cpu-" + std::to_string(cpu) + ".lock";
  // Open before creating: with fs.protected_regular, O_CREAT on another user's file in /tmp fails.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) fd = open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0444);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool valid_pin_cpu(const std::string& what, std::string* error) {
  int cpu = 0;
  if (what == "off" || what == "auto" || parse_cpu(what, &cpu)) return true;
  *error = "--pin-cpu: expected off, auto or a CPU number, got '" + what + "'";
  return false;
}

std::optional<CpuPin> pin_cpu(const std::string& what, const std::string& lock_dir, std::string* error) {
  if (!valid_pin_cpu(what, error)) return std::nullopt;
  CpuPin pin;
  if (what == "off") return pin;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    *error = std::string("--pin-cpu: sched_getaffinity: ") + strerror(errno);
    return std::nullopt;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  int chosen = -1;
  if (what == "auto") {
    if (cpus.size() <= 1) return pin;  // nothing to choose: leave the caller's affinity as it is
    // Start from the CPU the kernel put us on (likely the least busy one), then the others in
    // order, so that runs started together take different CPUs.
    int here = sched_getcpu();
    size_t start = 0;
    for (size_t i = 0; i < cpus.size(); ++i)
      if (cpus[i] == here) start = i;
    for (size_t i = 0; i < cpus.size() && chosen < 0; ++i) {
      int c = cpus[(start + i) % cpus.size()];
      int fd = try_lock(lock_dir, c);
      if (fd >= 0) {
        chosen = c;
        pin.lock_fd_ = fd;
      }
    }
    if (chosen < 0) chosen = cpus[start];  // every CPU held by a run: share ours
  } else {
    parse_cpu(what, &chosen);
    if (!CPU_ISSET(chosen, &allowed)) {
      *error = "--pin-cpu: CPU " + what + " is not one this process may run on";
      return std::nullopt;
    }
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(chosen, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    *error = "--pin-cpu: sched_setaffinity(" + std::to_string(chosen) + "): " + strerror(errno);
    return std::nullopt;
  }
  pin.cpu_ = chosen;
  return pin;
}

}  // namespace vtime::cli
