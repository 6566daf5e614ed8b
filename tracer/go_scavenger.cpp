// Go's background scavenger kept from waking the program (see go_scavenger.h).
#include "go_scavenger.h"

#include "go_ticks.h"
#include "inferior.h"
#include "vdso_patch.h"

#include <cstring>
#include <optional>

namespace vtime::tracer {

bool park_go_scavenger(pid_t pid, const std::string& exe, std::string& why) {
  uint64_t entry = 0;
  std::optional<GoFunction> fn = find_go_function(exe, "runtime.(*scavengerState).run", why, &entry);
  if (!fn) return false;
  // Every Go function on amd64 starts with its stack check, CMPQ 0x10(R14), SP: the function is
  // the one Go compiled, with its entry where the table says.
  static constexpr unsigned char kStackCheck[] = {0x49, 0x3b, 0x66, 0x10};
  static constexpr unsigned char kReturnNothing[] = {0x31, 0xc0, 0x0f, 0x57, 0xc0, 0xc3};
  if (fn->code.size() < sizeof kReturnNothing || memcmp(fn->code.data(), kStackCheck, sizeof kStackCheck) != 0) {
    why = "runtime.(*scavengerState).run does not start as Go's functions do";
    return false;
  }
  if (!write_mem(pid, fn->addr + load_bias(pid, entry), kReturnNothing, sizeof kReturnNothing)) {
    why = "cannot write its code";
    return false;
  }
  return true;
}

}  // namespace vtime::tracer
