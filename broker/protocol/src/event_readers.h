// Private: the table of per-event-type readers (one function per Batsim event type).
#pragma once

#include <string_view>

#include "fields.h"
#include "vtime/protocol/codec.h"

namespace vtime::protocol::detail {

using EventReader = Payload (*)(const Fields& data);

struct EventType {
  std::string_view name;
  EventReader read;          // nullptr: known to Batsim, kept as OtherEvent
  bool from_batsim;          // Batsim sends it to the scheduler
  bool from_scheduler;       // a scheduler sends it to Batsim
};

// nullptr when Batsim 4.2.1 does not know the type at all.
const EventType* find_event_type(std::string_view name);

// Names accepted in one direction, for "expected one of ..." messages.
std::string accepted_types(Direction dir);

}  // namespace vtime::protocol::detail
