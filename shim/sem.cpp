// Semaphores (Python's locks with a timeout use sem_clockwait).
#include "export.h"

VTIME_SHIM_EXPORT int sem_timedwait(sem_t* sem, const struct timespec* abstime) { return vtime_sem_timedwait(sem, abstime); }
VTIME_SHIM_EXPORT int sem_clockwait(sem_t* sem, clockid_t clk, const struct timespec* abstime) {
  return vtime_sem_clockwait(sem, clk, abstime);
}
