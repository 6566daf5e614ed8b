// CALL_ME_LATER bookkeeping (see call_me_later.h).
#include "call_me_later.h"

namespace vtime::broker {

std::optional<CallOwner> CallMeLaterBook::pop() {
  if (outstanding_.empty()) return std::nullopt;
  CallOwner o = outstanding_.begin()->second;
  outstanding_.erase(outstanding_.begin());
  return o;
}

bool CallMeLaterBook::has_at_or_before(protocol::Nanos t) const {
  return !outstanding_.empty() && outstanding_.begin()->first <= t;
}

}  // namespace vtime::broker
