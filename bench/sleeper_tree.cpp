// Starting and driving a tree of bench_sleeper processes under a fresh session (see sleeper_tree.h).
#include "sleeper_tree.h"

#include "session_driver.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace bench {
namespace {

std::string sibling(const char* name) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : exe.parent_path()).append(name).string();
}

}  // namespace

SleeperTree::SleeperTree(const TreeShape& shape) : shape_(shape) {
  end_ns_ = raw_monotonic_ns() + shape.limit_ns;
  if (sleepers() == 0 || sleepers() > kMaxSleepers) throw std::runtime_error("too many sleepers");
  std::string sleeper = sibling("bench_sleeper");
  std::string shim = shim_path();
  for (const std::string& f : {sleeper, shim}) {
    if (access(f.c_str(), R_OK) != 0) throw std::runtime_error(f + " not found (build the bench targets)");
  }
  // Inherited by the children (no close-on-exec): they find it by number.
  board_fd_ = memfd_create("vtime-bench-board", 0);
  if (board_fd_ < 0 || ftruncate(board_fd_, sizeof(SleeperBoard)) != 0 || !(board_ = map_board(board_fd_))) {
    throw std::runtime_error(std::string("shared board: ") + strerror(errno));
  }
  session_.emplace(vtime::Session::create());
  std::string spec = session_->attach_spec();
  std::string preload = shim;
  pid_t parent = getpid();
  if (shape.kernel_count) watch_ = vtime::TreeWatch::open();
  for (uint32_t p = 0; p < shape.processes; ++p) {
    std::string args[] = {sleeper,
                          std::to_string(board_fd_),
                          std::to_string(p * shape.threads_per_process),
                          std::to_string(shape.threads_per_process),
                          std::to_string(shape.rounds),
                          std::to_string(shape.period_ns),
                          std::to_string(session_->mono_origin_ns())};
    if (watch_) watch_->adopt_next_fork();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      setenv(vtime::kSessionEnv, spec.c_str(), 1);
      setenv("LD_PRELOAD", preload.c_str(), 1);
      char* argv[8];
      for (int i = 0; i < 7; ++i) argv[i] = args[i].data();
      argv[7] = nullptr;
      execv(argv[0], argv);
      _exit(127);
    }
    children_.push_back(pid);
  }
  // The first child is the controller's root; the others are found through their process slots
  // (each registers when the shim loads, before main).
  controller_ = std::make_unique<vtime::Controller>(*session_, children_.front(), watch_.get());
  while (board_->ready.load(std::memory_order_acquire) < sleepers()) {
    if (child_gone() || raw_monotonic_ns() > end_ns_) throw std::runtime_error("the sleepers did not all start");
    usleep(200);
  }
}

SleeperTree::~SleeperTree() {
  controller_.reset();
  for (pid_t pid : children_) kill(pid, SIGKILL);
  for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  if (board_) munmap(board_, sizeof(SleeperBoard));
  if (board_fd_ >= 0) close(board_fd_);
}

bool SleeperTree::child_gone() {
  for (pid_t pid : children_) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      fprintf(stderr, "bench: sleeper process %d ended unexpectedly (status 0x%x)\n", pid, status);
      failed_ = true;
      return true;
    }
  }
  return false;
}

int64_t SleeperTree::remaining_ns() const {
  int64_t left = end_ns_ - raw_monotonic_ns();
  return left > 0 ? left : 0;
}

std::function<bool()> SleeperTree::interrupt() {
  return [this] {
    if (failed_) return true;
    if (raw_monotonic_ns() > end_ns_) {
      fprintf(stderr, "bench: real-time budget exhausted\n");
      failed_ = true;
      return true;
    }
    return child_gone();
  };
}

}  // namespace bench
