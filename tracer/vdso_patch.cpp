// Pointing a traced process's vDSO clock functions to injected code (see vdso_patch.h).
#include "vdso_patch.h"

#include "clock_blob_layout.h"
#include "inferior.h"

#include <vtime/abi.h>

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

extern "C" {
// clock_blob.S
extern const unsigned char vtime_clock_blob_begin[];
extern const unsigned char vtime_clock_blob_end[];
extern const unsigned char vtime_blob_clock_gettime[];
extern const unsigned char vtime_blob_gettimeofday[];
extern const unsigned char vtime_blob_time[];
}

namespace vtime::tracer {
namespace {

static_assert(offsetof(abi::Header, cpu_model) == VTIME_HDR_CPU_MODEL &&
                  offsetof(abi::Header, cpu_cost_ns) == VTIME_HDR_CPU_COST &&
                  offsetof(abi::Header, cpu_quantum_ns) == VTIME_HDR_CPU_QUANTUM &&
                  offsetof(abi::Header, cpu_burst_calls) == VTIME_HDR_CPU_BURST,
              "clock_blob_layout.h is out of date");
static_assert(abi::kCpuCalls == VTIME_CPU_CALLS,
              "clock_blob_layout.h is out of date");

}  // namespace

uint64_t auxv_value(pid_t pid, uint64_t type) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/auxv", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t pair[2];
  uint64_t value = 0;
  while (read(fd, pair, sizeof pair) == sizeof pair && pair[0] != AT_NULL) {
    if (pair[0] == type) {
      value = pair[1];
      break;
    }
  }
  close(fd);
  return value;
}

uint64_t load_bias(pid_t pid, uint64_t entry) {
  const uint64_t at_entry = entry != 0 ? auxv_value(pid, AT_ENTRY) : 0;
  return at_entry != 0 ? at_entry - entry : 0;
}

namespace {

struct VdsoSymbols {
  uint64_t clock_gettime = 0, gettimeofday = 0, time = 0;  // offsets in the image
  uint64_t size_clock_gettime = 0, size_gettimeofday = 0, size_time = 0;
  uint64_t syscall_insn = 0;  // offset of a `syscall` instruction in its text
};

// The vDSO's dynamic symbols, from the image as mapped (it is a complete ELF file).
bool parse_vdso(const std::vector<unsigned char>& img, VdsoSymbols& out) {
  if (img.size() < sizeof(Elf64_Ehdr) || memcmp(img.data(), ELFMAG, SELFMAG) != 0) return false;
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
  if (eh->e_shoff + static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr) > img.size()) return false;
  auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_EXECINSTR) && sh[i].sh_offset + sh[i].sh_size <= img.size()) {
      for (uint64_t k = sh[i].sh_offset; k + 1 < sh[i].sh_offset + sh[i].sh_size; ++k) {
        if (img[k] == 0x0f && img[k + 1] == 0x05) {
          out.syscall_insn = k;
          break;
        }
      }
    }
    if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strs = sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > img.size() || strs.sh_offset + strs.sh_size > img.size()) return false;
    auto* syms = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[i].sh_offset);
    size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < n; ++k) {
      if (syms[k].st_name >= strs.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(img.data() + strs.sh_offset + syms[k].st_name);
      if (strcmp(name, "__vdso_clock_gettime") == 0) {
        out.clock_gettime = syms[k].st_value;
        out.size_clock_gettime = syms[k].st_size;
      } else if (strcmp(name, "__vdso_gettimeofday") == 0) {
        out.gettimeofday = syms[k].st_value;
        out.size_gettimeofday = syms[k].st_size;
      } else if (strcmp(name, "__vdso_time") == 0) {
        out.time = syms[k].st_value;
        out.size_time = syms[k].st_size;
      }
    }
  }
  return out.clock_gettime != 0 && out.syscall_insn != 0;
}

// movabs r11, target; jmp r11 (13 bytes; r11 is free at a function's entry).
std::vector<unsigned char> jump_to(uint64_t target) {
  std::vector<unsigned char> code = {0x49, 0xbb};
  for (int i = 0; i < 8; ++i) code.push_back(static_cast<unsigned char>(target >> (8 * i)));
  code.insert(code.end(), {0x41, 0xff, 0xe3});
  return code;
}

}  // namespace

bool patch_vdso(pid_t pid, pid_t tid, const std::string& segment_path, int* held, PatchedImage* out, std::string& why) {
  uint64_t base = auxv_value(pid, AT_SYSINFO_EHDR);
  if (base == 0) {
    why = "the process has no vDSO";
    return false;
  }
  std::vector<unsigned char> img(2 * 4096);
  // The image spans two pages on this kernel; read what there is.
  if (!read_mem(pid, base, img.data(), img.size())) {
    img.resize(4096);
    if (!read_mem(pid, base, img.data(), img.size())) {
      why = "cannot read the vDSO";
      return false;
    }
  }
  VdsoSymbols sym;
  if (!parse_vdso(img, sym)) {
    why = "no __vdso_clock_gettime or syscall instruction in the vDSO";
    return false;
  }
  uint64_t insn = base + sym.syscall_insn;
  user_regs_struct regs{};
  if (!get_regs(tid, regs)) {
    why = "cannot read registers";
    return false;
  }
  // The path, below the stack pointer and its red zone: the program has not run yet.
  uint64_t scratch = ((regs.rsp - 4096) & ~uint64_t{15});
  if (!write_mem(pid, scratch, segment_path.c_str(), segment_path.size() + 1)) {
    why = "cannot write to the stack";
    return false;
  }
  // At the exec stop the thread is still inside execve, whose return value the kernel stores in
  // rax after the stop: the first injected call would run with rax = 0 (read). So the first one
  // is a read of fd -1, harmless whatever it becomes; the thread is out of execve after it.
  remote_syscall(tid, insn, held, SYS_read, -1, 0, 0);
  auto fd = remote_syscall(tid, insn, held, SYS_openat, AT_FDCWD, static_cast<long>(scratch), O_RDONLY | O_CLOEXEC);
  if (!fd || *fd < 0) {
    why = "the process cannot open the session segment " + segment_path + ": " + strerror(fd ? static_cast<int>(-*fd) : ESRCH);
    return false;
  }
  // The whole segment, read-only: the clock and the serial gate's word in the first page, and the
  // waiter slots whose words direct sleeps wait on (timed_call.h).
  const long segment_bytes = static_cast<long>((sizeof(abi::Segment) + 4095) & ~size_t{4095});
  auto page = remote_syscall(tid, insn, held, SYS_mmap, 0, segment_bytes, PROT_READ, MAP_SHARED, *fd, 0);
  remote_syscall(tid, insn, held, SYS_close, *fd);
  auto code = remote_syscall(tid, insn, held, SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto state = remote_syscall(tid, insn, held, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto failed = [](const std::optional<long>& r) { return !r || (*r < 0 && *r > -4096); };
  if (failed(page) || failed(code) || failed(state)) {
    why = "mmap in the process failed";
    return false;
  }
  size_t blob_size = static_cast<size_t>(vtime_clock_blob_end - vtime_clock_blob_begin);
  std::vector<unsigned char> blob(vtime_clock_blob_begin, vtime_clock_blob_end);
  uint64_t pointers[3] = {static_cast<uint64_t>(*page) + offsetof(abi::Header, clock), static_cast<uint64_t>(*page),
                          static_cast<uint64_t>(*state)};
  static_assert(VTIME_BLOB_CLOCK_PTR == 0 && VTIME_BLOB_HEADER_PTR == 8 && VTIME_BLOB_STATE_PTR == 16);
  memcpy(blob.data(), pointers, sizeof pointers);
  out->code_page = static_cast<uint64_t>(*code);
  out->header_page = static_cast<uint64_t>(*page);
  out->syscall_insn = insn;
  // After the code, in the same read-only page: the timeout of direct sleeps.
  const timespec forever{static_cast<time_t>(1) << 40, 0};
  if (blob_size > kForeverOffset || !write_mem(pid, static_cast<uint64_t>(*code), blob.data(), blob.size()) ||
      !write_mem(pid, static_cast<uint64_t>(*code) + kForeverOffset, &forever, sizeof forever)) {
    why = "cannot write the clock code";
    return false;
  }
  out->forever = static_cast<uint64_t>(*code) + kForeverOffset;
  // What execve would have left: rax 0, and no system call to restart.
  regs.rax = 0;
  regs.orig_rax = static_cast<unsigned long long>(-1);
  set_regs(tid, regs);
  auto at = [&](const unsigned char* entry) {
    return static_cast<uint64_t>(*code) + static_cast<uint64_t>(entry - vtime_clock_blob_begin);
  };
  struct Patch {
    uint64_t off, size, target;
  } patches[] = {{sym.clock_gettime, sym.size_clock_gettime, at(vtime_blob_clock_gettime)},
                 {sym.gettimeofday, sym.size_gettimeofday, at(vtime_blob_gettimeofday)},
                 {sym.time, sym.size_time, at(vtime_blob_time)}};
  for (const Patch& p : patches) {
    if (p.off == 0) continue;
    auto jmp = jump_to(p.target);
    if (p.size != 0 && p.size < jmp.size()) {
      why = "a vDSO function is too small to patch";
      return false;
    }
    if (!write_mem(pid, base + p.off, jmp.data(), jmp.size())) {
      why = "cannot write to the vDSO";
      return false;
    }
  }
  return true;
}

}  // namespace vtime::tracer
