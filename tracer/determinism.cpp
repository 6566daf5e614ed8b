// Go's random seeds made deterministic (see determinism.h).
#include "determinism.h"

#include "inferior.h"
#include "vdso_patch.h"

#include <elf.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

namespace vtime::tracer {

namespace {

// splitmix64: a seed from the path, then as many words as needed.
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

bool seed_random(pid_t pid, const std::string& exe) {
  uint64_t addr = auxv_value(pid, AT_RANDOM);
  if (addr == 0) return false;
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the path
  for (unsigned char ch : exe) h = (h ^ ch) * 0x100000001b3ULL;
  uint64_t bytes[2] = {mix(h), mix(h + 1)};
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
