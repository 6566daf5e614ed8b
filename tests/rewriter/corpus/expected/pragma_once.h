#pragma once
#include <vtime/vtime.h>
// A header with no #include of its own: the vtime include goes after #pragma once.

inline int pragma_once_nap() { return vtime_usleep(1); }
