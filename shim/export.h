// The shim's interposed libc names are the only symbols it exports.
#pragma once

#include <vtime/vtime.h>

#define VTIME_SHIM_EXPORT extern "C" __attribute__((visibility("default")))
