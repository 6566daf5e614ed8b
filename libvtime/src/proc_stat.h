// Parsing a /proc/PID/stat line: shared by the controller (ProcReader) and by wrapped processes
// registering themselves (context.cpp), which must not pull in the controller's code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace vtime::detail {

// Reads the fields after the ")" that ends the command name (which may itself hold spaces or
// parentheses): 3 state, 4 ppid, 22 starttime. Null out-pointers are skipped.
inline bool parse_proc_stat(const char* buf, char* state, pid_t* ppid, uint64_t* start_time) {
  const char* p = strrchr(buf, ')');
  if (!p || p[1] != ' ') return false;
  p += 2;
  if (state) *state = *p;
  if (ppid) *ppid = static_cast<pid_t>(strtol(p + 2, nullptr, 10));
  if (start_time) {
    int field = 3;
    const char* q = p;
    while (*q && field < 22) {
      if (*q++ == ' ') ++field;
    }
    *start_time = strtoull(q, nullptr, 10);
  }
  return true;
}

}  // namespace vtime::detail
