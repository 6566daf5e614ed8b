// The table of functions `vtime rewrite` replaces, keyed by qualified name.
//
// A reference is a target only when its declaration comes from a system header and its
// qualified name (inline namespaces such as libstdc++'s std::chrono::_V2 dropped, template
// arguments dropped) is in this table; a user's own `sleep`, `now` or `wait_for` never matches.
//
// Example:
//     const Target* t = find_target("std::this_thread::sleep_for");
//     // t->replacement == "vtime::this_thread::sleep_for", t->form == Form::Name
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vtime::rewriter {

// How a site of the target is rewritten.
enum class Form {
  Name,         // replace the (qualified) name: sleep -> vtime_sleep, steady_clock::now -> vtime::...
  Syscall,      // syscall(): rewritten only when the number is a time syscall or not constant
  Member,       // obj.f(args) -> vtime::f(obj, args)
  Unsupported,  // a time function vtime has no replacement for yet: always reported as skipped
};

// Which vtime header the rewritten code needs.
enum class Header { C, Cxx };

struct Target {
  std::string_view qualified;    // as computed from the declaration
  std::string_view replacement;  // the function or qualified name that replaces it
  Form form;
  Header header;
  int min_args = 0;              // Member: accepted argument counts (others are reported)
  int max_args = 0;
};

// The target with this qualified name, or nullptr.
const Target* find_target(std::string_view qualified);

// True when `name` is the last component of some target (sleep, now, wait_for...): used to
// report dependent calls and calls in inactive #if branches that may be targets.
bool is_target_short_name(std::string_view name);

// True for the short names of C++ targets only (now, sleep_for, wait_for...).
bool is_cxx_short_name(std::string_view name);

// True when a syscall() number is one vtime_syscall handles in virtual time.
bool is_time_syscall(long long number);

}  // namespace vtime::rewriter
