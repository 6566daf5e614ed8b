// Attaches to the session as soon as the shim is loaded, so that a process told to attach and
// unable to fails at once with one clear line (never silently on real time), and registers the
// process before it runs any of its own code.
#include "export.h"
#include "sanitizer_runtime.h"

__attribute__((constructor)) static void vtime_shim_init() {
  vtime::shim::find_sanitizer_runtimes();
  vtime_active();
}
