// Handing a program to the tracer (see trace_request.h).
#include <vtime/internal/trace_request.h>

#include "caps.h"
#include <vtime/internal/futex.h>

#include <elf.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace vtime::detail {
namespace {

bool read_at(int fd, void* buf, size_t n, off_t off) {
  return pread(fd, buf, n, off) == static_cast<ssize_t>(n);
}

ExecKind elf_kind(int fd) {
  Elf64_Ehdr eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return ExecKind::kShim;
  }
  bool interp = false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read_at(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph))) break;
    if (ph.p_type == PT_INTERP) interp = true;
  }
  // Go: its linker writes a .note.go.buildid (and .go.buildinfo) section.
  bool go = false;
  if (eh.e_shoff != 0 && eh.e_shstrndx < eh.e_shnum && eh.e_shnum < 4096) {
    Elf64_Shdr strs;
    if (read_at(fd, &strs, sizeof strs, static_cast<off_t>(eh.e_shoff + eh.e_shstrndx * sizeof strs)) &&
        strs.sh_size < (1u << 20)) {
      std::vector<char> names(strs.sh_size + 1, '\0');
      if (read_at(fd, names.data(), strs.sh_size, static_cast<off_t>(strs.sh_offset))) {
        for (int i = 0; i < eh.e_shnum; ++i) {
          Elf64_Shdr sh;
          if (!read_at(fd, &sh, sizeof sh, static_cast<off_t>(eh.e_shoff + i * sizeof sh))) break;
          if (sh.sh_name >= strs.sh_size) continue;
          const char* n = names.data() + sh.sh_name;
          if (strcmp(n, ".vtime_aware") == 0) return ExecKind::kShim;  // links libvtime: virtual by itself
          if (strcmp(n, ".note.go.buildid") == 0 || strcmp(n, ".go.buildinfo") == 0) go = true;
        }
      }
    }
  }
  if (go) return ExecKind::kGo;
  return interp ? ExecKind::kShim : ExecKind::kStatic;
}

}  // namespace

ExecKind exec_kind(const std::string& path) {
  std::string p = path;
  for (int depth = 0; depth < 4; ++depth) {
    int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ExecKind::kShim;
    char head[256] = {};
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    if (n >= 2 && head[0] == '#' && head[1] == '!') {
      close(fd);
      // "#!  /path/interp arg": the interpreter is what gets executed.
      const char* s = head + 2;
      while (*s == ' ' || *s == '\t') ++s;
      const char* e = s;
      while (*e && *e != ' ' && *e != '\t' && *e != '\n') ++e;
      p.assign(s, e);
      if (p.empty()) return ExecKind::kShim;
      continue;
    }
    ExecKind k = elf_kind(fd);
    close(fd);
    return k;
  }
  return ExecKind::kShim;
}

const char* exec_kind_name(ExecKind k) {
  switch (k) {
    case ExecKind::kShim: return "dynamic";
    case ExecKind::kStatic: return "static";
    case ExecKind::kGo: return "Go";
  }
  return "?";
}

std::string resolve_command(const std::string& file, const char* path_env) {
  if (file.empty()) return {};
  if (file.find('/') != std::string::npos) return file;
  std::string path = path_env ? path_env : "/bin:/usr/bin";
  size_t start = 0;
  for (;;) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + file;
    struct stat st{};
    if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(cand.c_str(), X_OK) == 0) return cand;
    if (end == std::string::npos) return {};
    start = end + 1;
  }
}

int request_trace(abi::Segment& seg) {
  auto& h = seg.header;
  pid_t tracer = h.tracer_pid.load(std::memory_order_acquire);
  if (tracer <= 0) return ESRCH;
  pid_t tid = gettid_raw();
  // Under Yama's ptrace_scope 1 (Ubuntu's default) only an ancestor may attach, and the tracer is
  // a sibling of the tree: name it as ours. Without Yama the call fails with EINVAL: harmless.
  raw_syscall6(SYS_prctl, PR_SET_PTRACER, tracer, 0, 0, 0, 0);
  for (;;) {
    for (auto& r : h.trace_requests) {
      uint32_t expected = 0;
      if (!r.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
      r.tid.store(tid, std::memory_order_relaxed);
      r.error.store(0, std::memory_order_relaxed);
      r.state.store(2, std::memory_order_release);
      if (raw_syscall6(SYS_kill, tracer, SIGUSR2, 0, 0, 0, 0) != 0) {
        r.state.store(0, std::memory_order_release);
        return ESRCH;
      }
      // The tracer answers within microseconds; the bound only keeps a dead one from hanging us.
      for (int waited = 0; r.state.load(std::memory_order_acquire) == 2; ++waited) {
        if (waited >= 100) {  // 10 s
          uint32_t asked = 2;
          if (r.state.compare_exchange_strong(asked, 0)) return ETIMEDOUT;
          break;
        }
        timespec ts{0, 100000000};
        futex_wait(&r.state, 2, &ts);
      }
      uint32_t st = r.state.load(std::memory_order_acquire);
      int err = st == 3 ? 0 : (r.error.load() ? r.error.load() : EPERM);
      r.state.store(0, std::memory_order_release);
      return err;
    }
    // Every request slot taken: rare (16 execs at one instant); let one finish.
    timespec ts{0, 1000000};
    raw_syscall6(SYS_nanosleep, reinterpret_cast<long>(&ts), 0, 0, 0, 0, 0);
  }
}

namespace {

// The filter: SECCOMP_RET_TRACE for the timed waits the tracer virtualises, when they carry a
// timeout (the same calls without one, or with a zero one where the register says so, never
// stop), and for the calls that arm or read a timer (rare: every one stops), SECCOMP_RET_ALLOW
// for everything else (the clock guard below comes with it). A constant
// program: a forked child installs it without allocating.
constexpr uint32_t kArchOff = offsetof(seccomp_data, arch);
constexpr uint32_t kNrOff = offsetof(seccomp_data, nr);
constexpr uint32_t arg_lo(int i) { return offsetof(seccomp_data, args) + 8 * i; }
constexpr uint32_t arg_hi(int i) { return offsetof(seccomp_data, args) + 8 * i + 4; }

// Instruction indices of the blocks (see kFilter). BPF only jumps forward: the two returns
// come last.
enum : uint8_t {
  kFutex = 24, kFutexTimeout = 28, kEpollTimeout = 32, kPollTimeout = 35, kPtr2 = 38, kPtr3 = 42, kPtr4 = 46,
  kAllow = 50, kTrace = 51, kFilterLen = 52
};

constexpr sock_filter stmt(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
// A conditional jump at index `at` to the instruction indices jt and jf.
constexpr sock_filter jump(uint8_t at, uint16_t op, uint32_t k, uint8_t jt, uint8_t jf) {
  if (jt <= at || jf <= at) throw "BPF jumps only forward";  // a compile-time error in kFilter
  return sock_filter{static_cast<uint16_t>(BPF_JMP | op | BPF_K), static_cast<uint8_t>(jt - at - 1),
                     static_cast<uint8_t>(jf - at - 1), k};
}
constexpr uint16_t kLd = BPF_LD | BPF_W | BPF_ABS;

constexpr sock_filter kFilter[kFilterLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JGE, 0x40000000u, kAllow, 4),  // x32
    /* 4 */ jump(4, BPF_JEQ, SYS_futex, kFutex, 5),
    /* 5 */ jump(5, BPF_JEQ, SYS_nanosleep, kTrace, 6),
    /* 6 */ jump(6, BPF_JEQ, SYS_clock_nanosleep, kTrace, 7),
    /* 7 */ jump(7, BPF_JEQ, SYS_epoll_wait, kEpollTimeout, 8),
    /* 8 */ jump(8, BPF_JEQ, SYS_epoll_pwait, kEpollTimeout, 9),
    /* 9 */ jump(9, BPF_JEQ, SYS_poll, kPollTimeout, 10),
    /* 10 */ jump(10, BPF_JEQ, SYS_ppoll, kPtr2, 11),
    /* 11 */ jump(11, BPF_JEQ, SYS_epoll_pwait2, kPtr3, 12),
    /* 12 */ jump(12, BPF_JEQ, SYS_select, kPtr4, 13),
    /* 13 */ jump(13, BPF_JEQ, SYS_pselect6, kPtr4, 14),
    // Timers (tracer/timers.h): every call that arms or reads one stops, whatever its clock.
    /* 14 */ jump(14, BPF_JEQ, SYS_timerfd_create, kTrace, 15),
    /* 15 */ jump(15, BPF_JEQ, SYS_timerfd_settime, kTrace, 16),
    /* 16 */ jump(16, BPF_JEQ, SYS_timerfd_gettime, kTrace, 17),
    /* 17 */ jump(17, BPF_JEQ, SYS_timer_settime, kTrace, 18),
    /* 18 */ jump(18, BPF_JEQ, SYS_timer_gettime, kTrace, 19),
    /* 19 */ jump(19, BPF_JEQ, SYS_timer_getoverrun, kTrace, 20),
    /* 20 */ jump(20, BPF_JEQ, SYS_timer_delete, kTrace, 21),
    /* 21 */ jump(21, BPF_JEQ, SYS_setitimer, kTrace, 22),
    /* 22 */ jump(22, BPF_JEQ, SYS_getitimer, kTrace, 23),
    /* 23 */ jump(23, BPF_JEQ, SYS_alarm, kTrace, kAllow),
    // futex: FUTEX_WAIT or FUTEX_WAIT_BITSET (private and clock flags masked off) with a timeout.
    /* 24 kFutex */ stmt(kLd, arg_lo(1)),
    /* 25 */ stmt(BPF_ALU | BPF_AND | BPF_K, 0x7f),
    /* 26 */ jump(26, BPF_JEQ, FUTEX_WAIT, kFutexTimeout, 27),
    /* 27 */ jump(27, BPF_JEQ, FUTEX_WAIT_BITSET, kFutexTimeout, kAllow),
    /* 28 kFutexTimeout */ stmt(kLd, arg_lo(3)),
    /* 29 */ jump(29, BPF_JEQ, 0, 30, kTrace),
    /* 30 */ stmt(kLd, arg_hi(3)),
    /* 31 */ jump(31, BPF_JEQ, 0, kAllow, kTrace),
    // epoll_wait/epoll_pwait: an int timeout in ms, argument 3; only > 0 is a timed wait.
    /* 32 kEpollTimeout */ stmt(kLd, arg_lo(3)),
    /* 33 */ jump(33, BPF_JSET, 0x80000000u, kAllow, 34),
    /* 34 */ jump(34, BPF_JEQ, 0, kAllow, kTrace),
    // poll: the same in argument 2.
    /* 35 kPollTimeout */ stmt(kLd, arg_lo(2)),
    /* 36 */ jump(36, BPF_JSET, 0x80000000u, kAllow, 37),
    /* 37 */ jump(37, BPF_JEQ, 0, kAllow, kTrace),
    // A timeout pointer in argument 2 (ppoll), 3 (epoll_pwait2) or 4 (select, pselect6).
    /* 38 kPtr2 */ stmt(kLd, arg_lo(2)),
    /* 39 */ jump(39, BPF_JEQ, 0, 40, kTrace),
    /* 40 */ stmt(kLd, arg_hi(2)),
    /* 41 */ jump(41, BPF_JEQ, 0, kAllow, kTrace),
    /* 42 kPtr3 */ stmt(kLd, arg_lo(3)),
    /* 43 */ jump(43, BPF_JEQ, 0, 44, kTrace),
    /* 44 */ stmt(kLd, arg_hi(3)),
    /* 45 */ jump(45, BPF_JEQ, 0, kAllow, kTrace),
    /* 46 kPtr4 */ stmt(kLd, arg_lo(4)),
    /* 47 */ jump(47, BPF_JEQ, 0, 48, kTrace),
    /* 48 */ stmt(kLd, arg_hi(4)),
    /* 49 */ jump(49, BPF_JEQ, 0, kAllow, kTrace),
    /* 50 kAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 51 kTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};

// The clock guard (install_clock_guard): SECCOMP_RET_TRACE for every call that sets the clock
// (clock_settime and clock_adjtime only on CLOCK_REALTIME, the one clock they can set: the others
// fail in the kernel with nothing to guard). The 32-bit ABIs (i386, x32), whose calls the tracer
// does not emulate, get EPERM for theirs. Every other call is allowed whatever its arguments, so
// the kernel's per-syscall action cache skips the filter for them.
constexpr uint32_t kX32Bit = 0x40000000u;  // __X32_SYSCALL_BIT
enum : uint8_t { kGuardX32 = 10, kGuardI386 = 14, kGuardAllow = 22, kGuardTrace = 23, kGuardDeny = 24, kGuardLen = 25 };
constexpr sock_filter kGuard[kGuardLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kGuardI386),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JGE, kX32Bit, kGuardX32, 4),
    /* 4 */ jump(4, BPF_JEQ, SYS_settimeofday, kGuardTrace, 5),
    /* 5 */ jump(5, BPF_JEQ, SYS_adjtimex, kGuardTrace, 6),
    /* 6 */ jump(6, BPF_JEQ, SYS_clock_settime, 8, 7),
    /* 7 */ jump(7, BPF_JEQ, SYS_clock_adjtime, 8, kGuardAllow),
    /* 8 */ stmt(kLd, arg_lo(0)),
    /* 9 */ jump(9, BPF_JEQ, CLOCK_REALTIME, kGuardTrace, kGuardAllow),
    // x32: the 64-bit numbers, flagged.
    /* 10 kGuardX32 */ jump(10, BPF_JEQ, kX32Bit | SYS_clock_settime, kGuardDeny, 11),
    /* 11 */ jump(11, BPF_JEQ, kX32Bit | SYS_settimeofday, kGuardDeny, 12),
    /* 12 */ jump(12, BPF_JEQ, kX32Bit | SYS_adjtimex, kGuardDeny, 13),
    /* 13 */ jump(13, BPF_JEQ, kX32Bit | SYS_clock_adjtime, kGuardDeny, kGuardAllow),
    // i386: settimeofday, stime, adjtimex, clock_settime, clock_adjtime and their time64 forms.
    /* 14 kGuardI386 */ stmt(kLd, kNrOff),
    /* 15 */ jump(15, BPF_JEQ, 79, kGuardDeny, 16),
    /* 16 */ jump(16, BPF_JEQ, 25, kGuardDeny, 17),
    /* 17 */ jump(17, BPF_JEQ, 124, kGuardDeny, 18),
    /* 18 */ jump(18, BPF_JEQ, 264, kGuardDeny, 19),
    /* 19 */ jump(19, BPF_JEQ, 343, kGuardDeny, 20),
    /* 20 */ jump(20, BPF_JEQ, 404, kGuardDeny, 21),
    /* 21 */ jump(21, BPF_JEQ, 405, kGuardDeny, kGuardAllow),
    /* 22 kGuardAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 23 kGuardTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
    /* 24 kGuardDeny */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

// getrandom stops too: the tracer answers a Go program's with bytes as deterministic as its
// AT_RANDOM (tracer/determinism.h) and lets the others' through (rare calls).
enum : uint8_t { kRandomAllow = 4, kRandomTrace = 5, kRandomLen = 6 };
constexpr sock_filter kRandom[kRandomLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kRandomAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_getrandom, kRandomTrace, kRandomAllow),
    /* 4 kRandomAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 5 kRandomTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};

// The serial gate (Header::serial) decides at the exit of a wait whether the thread may go on
// (tracer/serial_gate.cpp). Timed waits stop already; with the gate on, epoll waits without a
// timeout stop too (Go's poller blocks so when its program has no timer), and with thread
// turns every futex wait (how a Go runtime's threads park and wake each other).
enum : uint8_t { kUntimedAllow = 7, kUntimedTrace = 8, kUntimedLen = 9 };
constexpr sock_filter kUntimedEpoll[kUntimedLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kUntimedAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_epoll_wait, 5, 4),
    /* 4 */ jump(4, BPF_JEQ, SYS_epoll_pwait, 5, kUntimedAllow),
    /* 5 */ stmt(kLd, arg_lo(3)),
    /* 6 */ jump(6, BPF_JSET, 0x80000000u, kUntimedTrace, kUntimedAllow),  // a negative timeout
    /* 7 kUntimedAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 8 kUntimedTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};
enum : uint8_t { kFutexWaitAllow = 8, kFutexWaitTrace = 9, kFutexWaitLen = 10 };
constexpr sock_filter kFutexWaits[kFutexWaitLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kFutexWaitAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_futex, 4, kFutexWaitAllow),
    /* 4 */ stmt(kLd, arg_lo(1)),
    /* 5 */ stmt(BPF_ALU | BPF_AND | BPF_K, 0x7f),
    /* 6 */ jump(6, BPF_JEQ, FUTEX_WAIT, kFutexWaitTrace, 7),
    /* 7 */ jump(7, BPF_JEQ, FUTEX_WAIT_BITSET, kFutexWaitTrace, kFutexWaitAllow),
    /* 8 kFutexWaitAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 9 kFutexWaitTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};

// With thread turns, epoll_ctl stops too when it adds or changes a descriptor (not a deletion):
// one that is ready then wakes the process's poller in the kernel, and what the poller's wait
// returns must not depend on how far the calling thread got meanwhile (tracer/serial_gate.cpp,
// settle_pollers).
enum : uint8_t { kCtlAllow = 6, kCtlTrace = 7, kCtlLen = 8 };
constexpr sock_filter kEpollCtl[kCtlLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kCtlAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_epoll_ctl, 4, kCtlAllow),
    /* 4 */ stmt(kLd, arg_lo(1)),
    /* 5 */ jump(5, BPF_JEQ, EPOLL_CTL_DEL, kCtlAllow, kCtlTrace),
    /* 6 kCtlAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 7 kCtlTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};

// The notify filter (notify_filter()): clock_nanosleep on the clocks a sleep may use that vtime
// virtualises goes to the controller (SECCOMP_RET_USER_NOTIF); everything else is left to the
// filters below it. The alarm clocks (which need CAP_WAKE_ALARM) and CPU-time clocks stay the
// tracer's (the trace filter stops every clock_nanosleep).
enum : uint8_t { kNotifyAllow = 9, kNotifyUser = 10, kNotifyLen = 11 };
constexpr sock_filter kNotify[kNotifyLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kNotifyAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_clock_nanosleep, 4, kNotifyAllow),  // an x32 number never equals it
    /* 4 */ stmt(kLd, arg_lo(0)),
    /* 5 */ jump(5, BPF_JEQ, CLOCK_REALTIME, kNotifyUser, 6),
    /* 6 */ jump(6, BPF_JEQ, CLOCK_MONOTONIC, kNotifyUser, 7),
    /* 7 */ jump(7, BPF_JEQ, CLOCK_BOOTTIME, kNotifyUser, 8),
    /* 8 */ jump(8, BPF_JEQ, CLOCK_TAI, kNotifyUser, kNotifyAllow),
    /* 9 kNotifyAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 10 kNotifyUser */ stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
};

// The notify filter of a Go image (notify_filter(go)): its poller's epoll waits with a timeout
// (epoll_pwait with no signal mask, as Go makes them, or epoll_wait) go to the controller, which
// answers 0 at the deadline or lets the call run once the epoll descriptor is ready. Go's sleeps
// (nanosleep: its runtime's housekeeping) stay the tracer's.
enum : uint8_t { kGoEpollTimeout = 9, kGoAllow = 12, kGoUser = 13, kGoLen = 14 };
constexpr sock_filter kNotifyGo[kGoLen] = {
    /* 0 */ stmt(kLd, kArchOff),
    /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kGoAllow),
    /* 2 */ stmt(kLd, kNrOff),
    /* 3 */ jump(3, BPF_JEQ, SYS_epoll_wait, kGoEpollTimeout, 4),
    /* 4 */ jump(4, BPF_JEQ, SYS_epoll_pwait, 5, kGoAllow),
    // epoll_pwait: only with no signal mask (argument 4 NULL).
    /* 5 */ stmt(kLd, arg_lo(4)),
    /* 6 */ jump(6, BPF_JEQ, 0, 7, kGoAllow),
    /* 7 */ stmt(kLd, arg_hi(4)),
    /* 8 */ jump(8, BPF_JEQ, 0, kGoEpollTimeout, kGoAllow),
    // An int timeout in ms in argument 3: only > 0 is a timed wait.
    /* 9 kGoEpollTimeout */ stmt(kLd, arg_lo(3)),
    /* 10 */ jump(10, BPF_JSET, 0x80000000u, kGoAllow, 11),
    /* 11 */ jump(11, BPF_JEQ, 0, kGoAllow, kGoUser),
    /* 12 kGoAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 13 kGoUser */ stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
};

long install_filter(const sock_filter* filter, uint16_t len) {
  sock_fprog prog{len, const_cast<sock_filter*>(filter)};
  return raw_syscall6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, reinterpret_cast<long>(&prog), 0, 0, 0);
}

bool has_cap_sys_admin() { return has_capability(0, CAP_SYS_ADMIN); }

}  // namespace

namespace {

// Digits, by hand (a forked child parses before its exec); false unless at least one, all <= limit.
bool parse_number(const char*& p, int64_t limit, int64_t* out) {
  if (*p < '0' || *p > '9') return false;
  int64_t n = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    n = n * 10 + (*p - '0');
    if (n > limit) return false;
  }
  *out = n;
  return true;
}

constexpr int64_t kMaxCostNs = 1'000'000'000'000LL;

// The value of NAME in `envp`, nullptr if absent.
const char* env_value(const char* const* envp, const char* name) {
  const size_t n = strlen(name);
  for (; envp && *envp; ++envp) {
    if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=') return *envp + n + 1;
  }
  return nullptr;
}

}  // namespace

ChargedCalls charged_calls(const char* const* envp) {
  ChargedCalls c;
  if (const char* v = env_value(envp, kWriteCostEnv)) {
    int64_t fd = 0, ns = 0;
    if (parse_number(v, 1 << 20, &fd) && *v++ == ':' && parse_number(v, kMaxCostNs, &ns) && *v == 0 && ns > 0) {
      c.write_fd = static_cast<int>(fd);
      c.write_ns = ns;
      c.write_match = env_value(envp, kWriteMatchEnv);
    }
  }
  if (const char* v = env_value(envp, kSyncCostEnv)) {
    int64_t ns = 0;
    if (parse_number(v, kMaxCostNs, &ns) && *v == 0) c.sync_ns = ns;
  }
  return c;
}

bool write_matches(const char* match, const char* data, size_t n) {
  for (const char* m = match; *m != 0;) {
    size_t len = 0;
    while (m[len] != 0 && m[len] != '|') ++len;
    if (len > 0 && memmem(data, n, m, len) != nullptr) return true;
    m += len;
    if (*m == '|') ++m;
  }
  return false;
}

int install_trace_filter(uint32_t serial, const ChargedCalls& charged) {
  // Without CAP_SYS_ADMIN, the kernel takes a filter only under no_new_privs (a set-user-ID
  // program executed from here on gains no privileges: docs/tracer.md).
  if (!has_cap_sys_admin()) {
    long r = raw_syscall6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    if (r != 0) return static_cast<int>(-r);
  }
  // The clock guard too: a traced program's raw clock-setting calls stop for the tracer, which
  // emulates them (a program that may not set the time then gets EPERM from it, as natively).
  long r = install_filter(kGuard, kGuardLen);
  if (r == 0) r = install_filter(kFilter, kFilterLen);
  if (r == 0) r = install_filter(kRandom, kRandomLen);
  if (r == 0 && serial != 0) r = install_filter(kUntimedEpoll, kUntimedLen);
  if (r == 0 && serial == abi::kSerialThreads) r = install_filter(kFutexWaits, kFutexWaitLen);
  if (r == 0 && serial == abi::kSerialThreads) r = install_filter(kEpollCtl, kCtlLen);
  if (r == 0 && charged.any()) {
    // Charged calls (charged_calls): the writes to one descriptor, fsync and fdatasync stop; on
    // the stack, as the rest. An uncharged kind jumps to kChargeAllow.
    enum : uint8_t { kChargeAllow = 8, kChargeTrace = 9, kChargeLen = 10 };
    const uint8_t syncs = charged.syncs() ? kChargeTrace : kChargeAllow;
    const sock_filter filter[kChargeLen] = {
        /* 0 */ stmt(kLd, kArchOff),
        /* 1 */ jump(1, BPF_JEQ, AUDIT_ARCH_X86_64, 2, kChargeAllow),
        /* 2 */ stmt(kLd, kNrOff),
        /* 3 */ jump(3, BPF_JEQ, SYS_write, charged.writes() ? 4 : kChargeAllow, 6),
        /* 4 */ stmt(kLd, arg_lo(0)),
        /* 5 */ jump(5, BPF_JEQ, static_cast<uint32_t>(charged.write_fd), kChargeTrace, kChargeAllow),
        /* 6 */ jump(6, BPF_JEQ, SYS_fsync, syncs, 7),
        /* 7 */ jump(7, BPF_JEQ, SYS_fdatasync, syncs, kChargeAllow),
        /* 8 kChargeAllow */ stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 9 kChargeTrace */ stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
    };
    r = install_filter(filter, kChargeLen);
  }
  return r == 0 ? 0 : static_cast<int>(-r);
}

const sock_filter* notify_filter(uint16_t* len, bool go) {
  *len = go ? uint16_t{kGoLen} : uint16_t{kNotifyLen};
  return go ? kNotifyGo : kNotify;
}

bool install_clock_guard() {
  if (!has_capability(0, CAP_SYS_TIME, true) || !has_cap_sys_admin()) return false;
  return install_filter(kGuard, kGuardLen) == 0;
}

}  // namespace vtime::detail
