// What the broker tells whoever watches a run: the interface the recorder implements.
//
// What it is for: the broker is the lower layer; the recorder, which turns a run into trace
// records (and, replaying, compares them), sits above it. The broker calls only this interface,
// so it neither includes nor links the recorder (layers point down: docs/design.md).
//
// Example (the recorder, recorder/include/vtime/recorder/recorder.h):
//     class Recorder final : public vtime::broker::RunObserver { ... };
//     vtime::broker::Options o;  o.observer = &recorder;  vtime::broker::run(o);
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace vtime {
class Session;
namespace protocol {
struct Message;
}
}  // namespace vtime

namespace vtime::broker {

// Which way a protocol message went.
enum class MsgDir { kFromBatsim, kToScheduler, kFromScheduler, kToBatsim };

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // The scheduler (logical process 0) runs in session `s` with pid `root`.
  virtual void attach(Session& s, pid_t root) = 0;
  // One protocol message, exact bytes, at virtual time `t` (ns). Returns its sequence number.
  virtual uint64_t message(MsgDir d, std::string_view bytes, int64_t t) = 0;
  // The decisions of the from_scheduler message `msg_seq`, parsed.
  virtual void decisions(uint64_t msg_seq, const protocol::Message& reply, int64_t t) = 0;
  // The tree is idle at `t`.
  virtual void observe(int64_t t) = 0;
  // The clock is about to move from `from` to `to` (tree idle), then has moved, waking `woken`
  // waiters, for `reason`.
  virtual void before_advance(int64_t from, int64_t to) = 0;
  virtual void advance(int64_t from, int64_t to, const char* reason, int woken) = 0;
  // The scheduler itself ended with wait status `status`.
  virtual void root_exit(int status, int64_t t) = 0;
  // The run fails with exit code `code`.
  virtual void error(int code, const std::string& message, int64_t t) = 0;
  // The run is over (exit code `exit_code`). Never throws.
  virtual void finish(int exit_code, int64_t t) = 0;
};

}  // namespace vtime::broker
