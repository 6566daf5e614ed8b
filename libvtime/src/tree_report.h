// The controller's tree report: what a blocked thread waits on, in words, for the deadlock
// report and the "time stands still" warning (Controller::describe). Read from /proc; decides
// nothing about idleness or time.
#pragma once

#include <vtime/abi.h>
#include <vtime/controller.h>
#include <vtime/internal/proc_reader.h>

#include <sys/types.h>

#include <string>
#include <vector>

namespace vtime::detail {

// The name of system call `nr` among those a thread may block in; nullptr for others.
const char* syscall_name(long nr);

// A timed wait with a real timeout, from a thread's /proc/TID/syscall line: "select with a real
// timeout of 1.000000000 s", or "" when the line is no such wait (no timeout, a zero one, or the
// untimed tagged form of a wait vtime controls). Timeouts behind pointers are read from the
// memory of process `pid`.
std::string real_timeout_of(pid_t pid, const char* line);

// Every thread of the processes `pids`, with what it waits on in words (Controller::describe).
std::vector<ThreadReport> describe_tree(abi::Segment& seg, ProcReader& proc, const std::vector<pid_t>& pids);

}  // namespace vtime::detail
