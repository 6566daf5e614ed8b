// A header included by several files; its #if branches differ between them.
#ifndef SHARED_H
#define SHARED_H

#include <unistd.h>

inline void shared_nap() { ::usleep(10); }

#if defined(FAST_PATH)
inline unsigned shared_wait() { return alarm(0); }
#else
inline unsigned shared_wait() { return sleep(0); }
#endif

#endif
