// The serial gate for threads under the shim (abi::Header::serial; docs/design.md "Serialised
// processes"; the tracer holds traced threads itself, tracer/serial_gate.cpp).
#pragma once

#include "context.h"

namespace vtime::detail {

// Called where an fd wait (poll, select, epoll) saw a descriptor ready, before the program
// learns of it: returns at once unless the gate is on and another process has the tree; then
// sleeps until the controller hands the tree to this process, so that what it reads was all
// sent by processes that have stopped.
void serial_hold(ProcessContext& c);

}  // namespace vtime::detail
