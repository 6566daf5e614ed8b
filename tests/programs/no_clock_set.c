/* no_clock_set: runs a command under a seccomp filter that kills any process of its tree that
 * asks the kernel to set or adjust the system clock (clock_settime, settimeofday, adjtimex,
 * clock_adjtime, stime where it exists).
 *
 * Why: the tests that prove vtime contains clock setting run the setting program as root. If
 * vtime ever let such a call through, it would move this machine's clock; under this guard the
 * call kills the program instead (SIGSYS), so a regression fails the test and nothing else.
 * The filter is inherited across fork and exec and cannot be removed.
 *
 * Usage: no_clock_set COMMAND [ARG...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define GUARD_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GUARD_ARCH AUDIT_ARCH_AARCH64
#else
#error "no_clock_set: unknown architecture"
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: no_clock_set COMMAND [ARG...]\n");
    return 2;
  }
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      /* Another ABI (32-bit calls on x86_64) could reach the same kernel functions: kill it too. */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GUARD_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      DENY(__NR_clock_settime),
      DENY(__NR_settimeofday),
      DENY(__NR_adjtimex),
      DENY(__NR_clock_adjtime),
#ifdef __NR_stime
      DENY(__NR_stime),
#endif
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    fprintf(stderr, "no_clock_set: cannot install the seccomp filter: %s\n", strerror(errno));
    return 125;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "no_clock_set: cannot run '%s': %s\n", argv[1], strerror(errno));
  return 127;
}
