// A header included by several files; its #if branches differ between them.
#ifndef SHARED_H
#define SHARED_H

#include <unistd.h>
#include <vtime/vtime.h>

inline void shared_nap() { vtime_usleep(10); }

#if defined(FAST_PATH)
inline unsigned shared_wait() { return vtime_alarm(0); }
#else
inline unsigned shared_wait() { return vtime_sleep(0); }
#endif

#endif
