// Finding libvtime-shim.so: $VTIME_SHIM, then next to the installed or built `vtime` binary.
#pragma once

#include <string>

namespace vtime::cli {

// Absolute path of the shim, or an empty string (with `why` set) when none is found.
std::string find_shim(std::string& why);

}  // namespace vtime::cli
