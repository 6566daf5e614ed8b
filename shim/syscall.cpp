// syscall(2): the time-related numbers go to virtual time, the rest straight to the kernel.
#include "export.h"

#include <cstdarg>

VTIME_SHIM_EXPORT long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
  long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
  va_end(ap);
  return vtime_syscall(number, a1, a2, a3, a4, a5, a6);
}
