// Go's random seeds made deterministic (see determinism.h).
#include "determinism.h"

#include "inferior.h"
#include "vdso_patch.h"

#include <vtime/abi.h>

#include <elf.h>
#include <signal.h>
#include <algorithm>
#include <vector>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace vtime::tracer {

uint64_t random_seed(const std::string& exe) {
  // The file's name, not its path: the same program installed elsewhere (another machine, a
  // build tree) gets the same seed.
  std::string name = exe.substr(exe.rfind('/') + 1);
  uint64_t h = abi::kDigestBasis;  // FNV-1a, as the clock-read digests
  for (unsigned char ch : name) h = (h ^ ch) * abi::kDigestPrime;
  return h;
}

namespace {
// The i-th 8 bytes of the getrandom stream of `seed` (splitmix64).
uint64_t stream_word(uint64_t seed, uint64_t i) { return abi::splitmix64_mix(seed + (i + 1) * abi::kSplitmix64Gamma); }
}  // namespace

bool seed_random(pid_t pid, uint64_t seed) {
  uint64_t addr = auxv_value(pid, AT_RANDOM);
  if (addr == 0) return false;
  // Two splitmix64 outputs seeded with it.
  uint64_t bytes[2] = {abi::splitmix64_mix(seed + abi::kSplitmix64Gamma), abi::splitmix64_mix(seed + 1 + abi::kSplitmix64Gamma)};
  return write_mem(pid, addr, bytes, sizeof bytes);
}

bool answer_getrandom(pid_t pid, pid_t tid, user_regs_struct& r, uint64_t seed, uint64_t* drawn) {
  uint64_t buf = r.rdi;
  // What one call returns at most (the kernel's own limit is 32 MiB; callers loop on less).
  size_t len = static_cast<size_t>(std::min<uint64_t>(r.rsi, 1 << 16));
  // Far from the two words AT_RANDOM took from the same sequence.
  constexpr uint64_t kOffset = 1ull << 32;
  std::vector<unsigned char> bytes(len);
  for (size_t i = 0; i < len; ++i) {
    uint64_t at = *drawn + i;
    bytes[i] = static_cast<unsigned char>(stream_word(seed, kOffset + at / 8) >> (8 * (at % 8)));
  }
  if (len > 0 && !write_mem(pid, buf, bytes.data(), len)) return false;
  *drawn += len;
  r.orig_rax = static_cast<unsigned long long>(-1);  // the kernel skips the call ...
  r.rax = len;                                         // ... which returns this
  return set_regs(tid, r);
}

bool tsc_trap_honoured() {
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    // Default SIGSEGV action (the tracer's own handlers are not the question here).
    signal(SIGSEGV, SIG_DFL);
    if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) _exit(2);
    volatile uint64_t t = __rdtsc();
    (void)t;
    _exit(0);  // not trapped
  }
  int status = 0;
  while (waitpid(child, &status, __WALL) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

TscRoute tsc_route() {
  const char* env = getenv("VTIME_GO_TICKS");
  if (env && strcmp(env, "patch") == 0) return TscRoute::kPatch;
  if (env && strcmp(env, "trap") == 0) return TscRoute::kTrap;
  return tsc_trap_honoured() ? TscRoute::kTrap : TscRoute::kPatch;
}

bool trap_tsc(pid_t tid, uint64_t insn, int* held) {
  auto r = remote_syscall(tid, insn, held, SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV);
  return r && *r == 0;
}

unsigned tsc_insn(pid_t pid, pid_t tid, user_regs_struct& r) {
  if (!get_regs(tid, r)) return 0;
  unsigned char code[3] = {0, 0, 0};
  if (!read_mem(pid, r.rip, code, sizeof code) || code[0] != 0x0f) return 0;
  if (code[1] == 0x31) return 2;
  if (code[1] == 0x01 && code[2] == 0xf9) return 3;
  return 0;
}

bool complete_tsc(pid_t tid, user_regs_struct& r, unsigned len, uint64_t value) {
  if (len == 3) r.rcx = 0;  // RDTSCP's IA32_TSC_AUX
  r.rax = value & 0xffffffffULL;
  r.rdx = value >> 32;
  r.rip += len;
  return set_regs(tid, r);
}

}  // namespace vtime::tracer
