// CALL_ME_LATER bookkeeping. Batsim answers every CALL_ME_LATER with one REQUESTED_CALL stamped
// with its own clock (target plus network hops), in target order, so replies cannot be matched
// by timestamp: we keep one ordered multiset of the targets still outstanding, tagged with who
// asked, and each REQUESTED_CALL consumes the earliest one.
#pragma once

#include <vtime/protocol/nanos.h>

#include <optional>
#include <set>
#include <utility>

namespace vtime::broker {

enum class CallOwner { kScheduler = 0, kBroker = 1 };

class CallMeLaterBook {
 public:
  void add(protocol::Nanos target, CallOwner owner) { outstanding_.insert({target, owner}); }
  // Consumes the earliest outstanding target; nullopt when Batsim sent one we never asked for.
  std::optional<CallOwner> pop();
  // Some outstanding target at or before t: Batsim will call us by then anyway.
  bool has_at_or_before(protocol::Nanos t) const;
  size_t size() const { return outstanding_.size(); }

 private:
  std::multiset<std::pair<protocol::Nanos, CallOwner>> outstanding_;
};

}  // namespace vtime::broker
