// One-line human summaries of trace records and protocol events, shared by `show` and `diff`.
#pragma once

#include <vtime/recorder/trace.h>

#include <string>

#include "vtime/protocol/events.h"

namespace vtime::recorder::tools {

// "EXECUTE_JOB(w0!1 0-3)", "CALL_ME_LATER(6.000000)", "JOB_COMPLETED(w0!1 COMPLETED_SUCCESSFULLY)".
std::string event_summary(const protocol::Event& e);

// What follows the type on a `show` line, e.g. for a msg: "from_batsim now=5.000000
// JOB_SUBMITTED(w0!1) JOB_SUBMITTED(w0!2)"; for an advance: "5.000000 -> 6.000000 timer woke 1".
std::string record_summary(const Json& rec);

// The whole `show` line: seq, simulated seconds, type, summary (header and trailer included).
std::string record_line(const Json& rec);

}  // namespace vtime::recorder::tools
