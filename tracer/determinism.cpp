// Go's random seeds made deterministic (see determinism.h).
#include "determinism.h"

#include "inferior.h"
#include "vdso_patch.h"

#include <vtime/abi.h>

#include <elf.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

namespace vtime::tracer {

bool seed_random(pid_t pid, const std::string& exe) {
  uint64_t addr = auxv_value(pid, AT_RANDOM);
  if (addr == 0) return false;
  uint64_t h = abi::kDigestBasis;  // FNV-1a of the path, as the clock-read digests
  for (unsigned char ch : exe) h = (h ^ ch) * abi::kDigestPrime;
  // Two splitmix64 outputs seeded with it.
  uint64_t bytes[2] = {abi::splitmix64_mix(h + abi::kSplitmix64Gamma), abi::splitmix64_mix(h + 1 + abi::kSplitmix64Gamma)};
  return write_mem(pid, addr, bytes, sizeof bytes);
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
