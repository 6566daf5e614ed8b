// Semantic checks of a scheduler's reply, the ones Batsim aborts on but that need simulation
// state: unknown job, wrong allocation size, a job executed twice, a timestamp after the reply's
// now, a CALL_ME_LATER at or before now, an event type Batsim does not know.
#pragma once

#include "job_book.h"

#include <vtime/protocol/events.h>

#include <optional>
#include <string>

namespace vtime::broker {

// Returns one error line naming the offending event, or nullopt when the reply is acceptable.
std::optional<std::string> validate_reply(const protocol::Message& reply, protocol::Nanos received_now,
                                          const JobBook& jobs);

}  // namespace vtime::broker
