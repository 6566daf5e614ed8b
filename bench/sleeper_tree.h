// The controller side of the wake-up and idle-detection benchmarks: a vtime session owned by the
// benchmark process, a tree of bench_sleeper processes running under the shim, and the
// vtime::Controller that drives them, exactly as `vtime exec` does.
//
// Example:
//     bench::SleeperTree tree({.processes = 4, .threads_per_process = 250, .rounds = 10});
//     tree.controller().wait_idle(tree.interrupt());
//     int woken = tree.controller().advance_to(*tree.controller().next_deadline());
#pragma once

#include "sleeper_board.h"

#include <vtime/controller.h>
#include <vtime/tree_watch.h>
#include <vtime/session.h>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace bench {

struct TreeShape {
  uint32_t processes = 1;
  uint32_t threads_per_process = 1;
  int64_t rounds = 0;                      // wake-ups per thread (0: sleep only)
  int64_t period_ns = 1000000000;          // virtual time between rounds
  int64_t limit_ns = 50LL * 1000000000LL;  // real-time budget of the whole benchmark phase
  // Idle decisions with the kernel's count (vtime/tree_watch.h) where it can be loaded; false:
  // the /proc rule.
  bool kernel_count = true;
};

class SleeperTree {
 public:
  // Creates the session and the board, starts the processes and waits until every thread has
  // reached its first sleep. Throws std::runtime_error with a one-line reason.
  explicit SleeperTree(const TreeShape& shape);
  ~SleeperTree();
  SleeperTree(const SleeperTree&) = delete;
  SleeperTree& operator=(const SleeperTree&) = delete;

  vtime::Session& session() { return *session_; }
  vtime::Controller& controller() { return *controller_; }
  SleeperBoard& board() { return *board_; }
  uint32_t sleepers() const { return shape_.processes * shape_.threads_per_process; }
  // Virtual instant (since the session origin) of round r's deadline.
  vtime::TimePoint deadline(int64_t r) const { return vtime::TimePoint::from_ns(r * shape_.period_ns); }
  // For Controller::wait_idle: true once a child died or the real-time budget is spent.
  std::function<bool()> interrupt();
  bool failed() const { return failed_; }
  // Real time left in the budget (never negative).
  int64_t remaining_ns() const;

 private:
  bool child_gone();
  TreeShape shape_;
  int64_t end_ns_ = 0;
  bool failed_ = false;
  int board_fd_ = -1;
  SleeperBoard* board_ = nullptr;
  std::optional<vtime::Session> session_;
  std::vector<pid_t> children_;
  std::unique_ptr<vtime::TreeWatch> watch_;  // before controller_, which points to it
  std::unique_ptr<vtime::Controller> controller_;
};

}  // namespace bench
