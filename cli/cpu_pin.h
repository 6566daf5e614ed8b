// Pinning a run to one CPU (`--pin-cpu`): a tree that runs one thread at a time (vtime k8s's
// thread turns) hands the CPU over at every step, thread to tracer to controller to the next
// thread; on one CPU each hand-over is a context switch (~2 us), across two of this VM's vCPUs a
// wake-up of an idle CPU (~11 us). docs/performance.md "One CPU".
#pragma once

#include <optional>
#include <string>

namespace vtime::cli {

// A pinned CPU and the lock that keeps other pinned runs of this machine off it; the lock is
// released when the object goes (or the process ends).
class CpuPin {
 public:
  CpuPin() = default;
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;
  CpuPin(CpuPin&& o) noexcept;
  CpuPin& operator=(CpuPin&& o) noexcept;
  ~CpuPin();
  int cpu() const { return cpu_; }  // -1: not pinned

 private:
  friend std::optional<CpuPin> pin_cpu(const std::string&, const std::string&, std::string*);
  int cpu_ = -1;
  int lock_fd_ = -1;
};

// Checks a --pin-cpu value: "off", "auto" or a CPU number. False and a one-line *error otherwise.
bool valid_pin_cpu(const std::string& what, std::string* error);

// Pins the calling thread (and so every thread and process it creates afterwards) to one CPU:
// `what` "off" does nothing, a number that CPU (which must be in the allowed set), "auto" the first
// allowed CPU, counting from the one this thread is on, that no other auto-pinned run holds
// (a lock file per CPU in `lock_dir`, kDefaultCpuLockDir for every run of the machine); the one
// it is on when every allowed CPU is held. With one allowed CPU, nothing changes. nullopt and a
// one-line *error when the CPU cannot be used.
inline constexpr const char* kDefaultCpuLockDir = "/tmp";
std::optional<CpuPin> pin_cpu(const std::string& what, const std::string& lock_dir, std::string* error);

}  // namespace vtime::cli
