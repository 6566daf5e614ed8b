// vtime_request_tick / vtime_ticks_on_request from the shim (see vtime_hooks.h, vtime/vtime.h).
#include "vtime_hooks.h"

#include <dlfcn.h>

namespace vtime::bridges {
namespace {

int call_shim(const char* name) {
  using Fn = int (*)();
  if (auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name))) return fn();
  return -1;
}

}  // namespace

void request_tick() { call_shim("vtime_request_tick"); }
void ticks_on_request() { call_shim("vtime_ticks_on_request"); }
void settle() { call_shim("vtime_settle"); }
int cpu_model() { return call_shim("vtime_cpu_model"); }
void serialize() { call_shim("vtime_serialize"); }
void serialize_threads() { call_shim("vtime_serialize_threads"); }

}  // namespace vtime::bridges
