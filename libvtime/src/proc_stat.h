// Parsing a /proc/PID/stat line: shared by the controller (ProcReader) and by wrapped processes
// registering themselves (context.cpp), which must not pull in the controller's code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace vtime::detail {

// Where field `field` (1-based, 3 or more: those after the ")" that ends the command name,
// which may itself hold spaces or parentheses) of a stat line begins; nullptr if the line is
// malformed. Past the end of the line it points at the terminating NUL.
inline const char* proc_stat_field(const char* buf, int field) {
  const char* p = strrchr(buf, ')');
  if (!p || p[1] != ' ') return nullptr;
  p += 2;
  for (int f = 3; *p && f < field;) {
    if (*p++ == ' ') ++f;
  }
  return p;
}

// Reads fields 3 state, 4 ppid, 22 starttime. Null out-pointers are skipped.
inline bool parse_proc_stat(const char* buf, char* state, pid_t* ppid, uint64_t* start_time) {
  const char* p = proc_stat_field(buf, 3);
  if (!p) return false;
  if (state) *state = *p;
  if (ppid) *ppid = static_cast<pid_t>(strtol(p + 2, nullptr, 10));
  if (start_time) *start_time = strtoull(proc_stat_field(buf, 22), nullptr, 10);
  return true;
}

}  // namespace vtime::detail
