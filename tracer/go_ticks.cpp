// Finding and patching runtime.cputicks (see go_ticks.h).
#include "go_ticks.h"

#include "inferior.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <optional>

namespace vtime::tracer {
namespace {

// The executable, read with pread; closed when done.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    ok_ = fd_ >= 0 && read(&eh_, sizeof eh_, 0) && memcmp(eh_.e_ident, ELFMAG, SELFMAG) == 0 &&
          eh_.e_ident[EI_CLASS] == ELFCLASS64 && eh_.e_machine == EM_X86_64 && eh_.e_shentsize == sizeof(Elf64_Shdr);
    if (ok_ && eh_.e_phentsize == sizeof(Elf64_Phdr) && eh_.e_phnum > 0 && eh_.e_phnum < 256) {
      segments_.resize(eh_.e_phnum);
      if (!read(segments_.data(), segments_.size() * sizeof(Elf64_Phdr), eh_.e_phoff)) segments_.clear();
    }
    if (!ok_ || eh_.e_shoff == 0 || eh_.e_shnum == 0 || eh_.e_shnum > 4096 || eh_.e_shstrndx >= eh_.e_shnum) return;
    sections_.resize(eh_.e_shnum);
    if (!read(sections_.data(), sections_.size() * sizeof(Elf64_Shdr), eh_.e_shoff)) {
      sections_.clear();
      return;
    }
    const Elf64_Shdr& strs = sections_[eh_.e_shstrndx];
    if (strs.sh_size > (1u << 20) || !read_string_table(strs, names_)) sections_.clear();
  }
  ~ElfFile() {
    if (fd_ >= 0) close(fd_);
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  bool ok() const { return ok_; }
  const Elf64_Ehdr& header() const { return eh_; }
  bool read(void* buf, size_t n, uint64_t off) const {
    return pread(fd_, buf, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
  }
  const Elf64_Shdr* section(const char* name) const {
    for (const Elf64_Shdr& s : sections_) {
      if (s.sh_name < names_.size() && strcmp(names_.data() + s.sh_name, name) == 0) return &s;
    }
    return nullptr;
  }
  const std::vector<Elf64_Shdr>& sections() const { return sections_; }
  const std::vector<Elf64_Phdr>& segments() const { return segments_; }
  // The file offset of link-time address `addr` through the loaded segments (which a stripped
  // library without section headers still has), or nullopt.
  std::optional<uint64_t> segment_offset_of(uint64_t addr, uint64_t n) const {
    for (const Elf64_Phdr& ph : segments_) {
      if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr + n <= ph.p_vaddr + ph.p_filesz) return ph.p_offset + (addr - ph.p_vaddr);
    }
    return std::nullopt;
  }
  bool read_string_table(const Elf64_Shdr& s, std::vector<char>& out) const {
    out.assign(s.sh_size + 1, '\0');
    return read(out.data(), s.sh_size, s.sh_offset);
  }
  // The file offset of link-time address `addr` (through the section holding it), or nullopt.
  std::optional<uint64_t> offset_of(uint64_t addr, uint64_t n) const {
    for (const Elf64_Shdr& s : sections_) {
      if (s.sh_type == SHT_NOBITS || (s.sh_flags & SHF_ALLOC) == 0) continue;
      if (addr >= s.sh_addr && addr + n <= s.sh_addr + s.sh_size) return s.sh_offset + (addr - s.sh_addr);
    }
    return std::nullopt;
  }

 private:
  int fd_;
  bool ok_ = false;
  Elf64_Ehdr eh_{};
  std::vector<Elf64_Shdr> sections_;
  std::vector<Elf64_Phdr> segments_;
  std::vector<char> names_;
};

struct Range {
  uint64_t start = 0;
  uint64_t end = 0;
};

// Function `name` from the ELF symbol table (absent from stripped binaries). The assembler's
// functions are ABI0: runtime.cputicks's symbol is "runtime.cputicks.abi0" since Go 1.17.
std::optional<Range> from_symtab(const ElfFile& f, const std::string& name) {
  const std::string abi0 = name + ".abi0";
  const Elf64_Shdr* symtab = f.section(".symtab");
  if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= f.sections().size()) return std::nullopt;
  const Elf64_Shdr& strs = f.sections()[symtab->sh_link];
  if (strs.sh_size > (64u << 20)) return std::nullopt;
  std::vector<char> names;
  if (!f.read_string_table(strs, names)) return std::nullopt;
  const uint64_t n = symtab->sh_size / sizeof(Elf64_Sym);
  std::vector<Elf64_Sym> syms(4096);
  for (uint64_t i = 0; i < n; i += syms.size()) {
    const uint64_t k = std::min<uint64_t>(syms.size(), n - i);
    if (!f.read(syms.data(), k * sizeof(Elf64_Sym), symtab->sh_offset + i * sizeof(Elf64_Sym))) return std::nullopt;
    for (uint64_t j = 0; j < k; ++j) {
      const Elf64_Sym& s = syms[j];
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_name >= strs.sh_size || s.st_value == 0) continue;
      const char* sym = names.data() + s.st_name;
      if (abi0 == sym || name == sym) {
        return Range{s.st_value, s.st_value + (s.st_size ? s.st_size : 64)};
      }
    }
  }
  return std::nullopt;
}

template <typename T>
T load(const std::vector<unsigned char>& b, uint64_t at) {
  T v{};
  if (at + sizeof v <= b.size()) memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// The value a R_X86_64_RELATIVE relocation puts at link-time address `addr` (a position-
// independent executable's pointers are 0 in the file and filled in at load time), or 0.
uint64_t relocated_value(const ElfFile& f, uint64_t addr) {
  for (const Elf64_Shdr& s : f.sections()) {
    if (s.sh_type != SHT_RELA || s.sh_entsize != sizeof(Elf64_Rela) || s.sh_size > (256u << 20)) continue;
    std::vector<Elf64_Rela> rels(s.sh_size / sizeof(Elf64_Rela));
    if (!f.read(rels.data(), rels.size() * sizeof(Elf64_Rela), s.sh_offset)) continue;
    for (const Elf64_Rela& r : rels) {
      if (r.r_offset == addr && ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE) return static_cast<uint64_t>(r.r_addend);
    }
  }
  return 0;
}

// runtime.cputicks from Go's pc-line table (.gopclntab, which `go build -ldflags=-s` keeps: the
// runtime needs it for stack traces). Layouts of Go 1.18-1.19 (magic 0xfffffff0) and 1.20 and
// later (0xfffffff1): a header of eight pointer-sized fields after the magic, then a function
// table of (entry offset, _func offset) pairs of 32 bits, entry offsets from the text start;
// each _func starts with its entry offset and its name's offset in the name table. Go 1.16-1.17
// (0xfffffffa) has no text start and pointer-sized pairs.
std::optional<Range> from_pclntab(const ElfFile& f, const std::string& want, std::string& why) {
  // A position-independent executable has it among its relocated read-only data.
  const Elf64_Shdr* sec = f.section(".gopclntab");
  if (!sec) sec = f.section(".data.rel.ro.gopclntab");
  if (!sec) {
    why = "no .gopclntab section";
    return std::nullopt;
  }
  if (sec->sh_size > (512u << 20) || sec->sh_size < 72) {
    why = ".gopclntab of an unexpected size";
    return std::nullopt;
  }
  std::vector<unsigned char> t(sec->sh_size);
  if (!f.read(t.data(), t.size(), sec->sh_offset)) {
    why = "cannot read .gopclntab";
    return std::nullopt;
  }
  const uint32_t magic = load<uint32_t>(t, 0);
  if (load<uint8_t>(t, 7) != 8) {
    why = "a .gopclntab not of a 64-bit program";
    return std::nullopt;
  }
  const uint64_t nfunc = load<uint64_t>(t, 8);
  const bool v118 = magic == 0xfffffff0u || magic == 0xfffffff1u;
  const bool v116 = magic == 0xfffffffau;
  if (!v118 && !v116) {
    char buf[64];
    snprintf(buf, sizeof buf, "an unknown .gopclntab layout (magic %#x)", magic);
    why = buf;
    return std::nullopt;
  }
  uint64_t text = 0;
  uint64_t field = 24;  // funcnameOffset, after magic+pads, nfunc, nfiles (and textStart since 1.18)
  if (v118) {
    text = load<uint64_t>(t, 24);
    if (text == 0) text = relocated_value(f, sec->sh_addr + 24);
    if (text == 0) {
      why = ".gopclntab has no text start";
      return std::nullopt;
    }
    field = 32;
  }
  const uint64_t funcname = load<uint64_t>(t, field);
  const uint64_t pcln = load<uint64_t>(t, field + 32);
  const uint64_t pair = v118 ? 8 : 16;
  if (pcln >= t.size() || nfunc > (t.size() - pcln) / pair || funcname >= t.size()) {
    why = "a .gopclntab whose header does not fit";
    return std::nullopt;
  }
  auto entry_of = [&](uint64_t i) -> uint64_t {
    return v118 ? text + load<uint32_t>(t, pcln + i * pair) : load<uint64_t>(t, pcln + i * pair);
  };
  for (uint64_t i = 0; i < nfunc; ++i) {
    const uint64_t func = pcln + (v118 ? load<uint32_t>(t, pcln + i * pair + 4) : load<uint64_t>(t, pcln + i * pair + 8));
    const uint64_t nameoff = funcname + static_cast<uint32_t>(load<int32_t>(t, func + (v118 ? 4 : 8)));
    if (func + 12 > t.size() || nameoff >= t.size()) continue;
    const char* name = reinterpret_cast<const char*>(t.data() + nameoff);
    const size_t room = t.size() - nameoff;
    if (room > want.size() && memcmp(name, want.c_str(), want.size() + 1) == 0) {
      // The next function's entry ends it (the table has one entry more, the end of the text).
      return Range{entry_of(i), entry_of(i + 1)};
    }
  }
  why = "no " + want + " in .gopclntab";
  return std::nullopt;
}

}  // namespace

std::optional<GoFunction> find_go_function(const std::string& path, const std::string& name, std::string& why,
                                           uint64_t* entry) {
  ElfFile f(path);
  *entry = f.ok() ? f.header().e_entry : 0;
  if (!f.ok()) {
    why = "not a 64-bit x86 ELF executable";
    return std::nullopt;
  }
  std::optional<Range> r = from_symtab(f, name);
  if (!r) r = from_pclntab(f, name, why);
  if (!r) return std::nullopt;
  if (r->end <= r->start || r->end - r->start > 4096) {
    why = name + " of an unexpected size";
    return std::nullopt;
  }
  GoFunction fn;
  fn.addr = r->start;
  fn.code.resize(r->end - r->start);
  std::optional<uint64_t> off = f.offset_of(r->start, fn.code.size());
  if (!off || !f.read(fn.code.data(), fn.code.size(), *off)) {
    why = "cannot read " + name + "'s code";
    return std::nullopt;
  }
  return fn;
}

std::vector<TickSite> find_tick_sites(const std::string& path, std::string& why, uint64_t* entry) {
  std::optional<GoFunction> fn = find_go_function(path, "runtime.cputicks", why, entry);
  if (!fn) return {};
  const std::vector<unsigned char>& code = fn->code;
  const uint64_t n = code.size();
  // RDTSCP; SHLQ $32, DX  and  MFENCE; LFENCE; RDTSC (go_ticks.h).
  static constexpr unsigned char kRdtscp[] = {0x0f, 0x01, 0xf9, 0x48, 0xc1, 0xe2, 0x20};
  static constexpr unsigned char kRdtsc[] = {0x0f, 0xae, 0xf0, 0x0f, 0xae, 0xe8, 0x0f, 0x31};
  std::vector<TickSite> sites;
  for (uint64_t i = 0; i < n; ++i) {
    if (i + sizeof kRdtscp <= n && memcmp(code.data() + i, kRdtscp, sizeof kRdtscp) == 0) {
      sites.push_back({fn->addr + i, 3});
    } else if (i + sizeof kRdtsc <= n && memcmp(code.data() + i, kRdtsc, sizeof kRdtsc) == 0) {
      sites.push_back({fn->addr + i + 6, 2});
    }
  }
  if (sites.empty()) why = "runtime.cputicks's code is not as expected (no RDTSCP or RDTSC where Go puts them)";
  return sites;
}

namespace {

// The length of the instruction at `c` (at most `n` bytes) if it is one of those compilers put
// before a counter read at the start of a function (endbr64, push, register moves and xors,
// stack adjustment), 0 otherwise: decoding stops at the first other instruction, so a counter
// read is only ever found at an instruction boundary.
unsigned prologue_insn(const unsigned char* c, size_t n) {
  auto reg_mod = [&](size_t at) { return n > at && (c[at] & 0xc0) == 0xc0; };
  if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) return 4;  // endbr64
  if (n >= 1 && c[0] >= 0x50 && c[0] <= 0x57) return 1;                                  // push r64
  if (n >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) return 2;                  // push r8-r15
  const bool rex_w = n >= 1 && (c[0] == 0x48 || c[0] == 0x49 || c[0] == 0x4c || c[0] == 0x4d);
  if (rex_w && n >= 3 && (c[1] == 0x89 || c[1] == 0x8b || c[1] == 0x31 || c[1] == 0x33) && reg_mod(2)) return 3;
  if (n >= 2 && (c[0] == 0x89 || c[0] == 0x8b || c[0] == 0x31 || c[0] == 0x33) && reg_mod(1)) return 2;  // 32-bit
  if (n >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xec) return 4;  // sub $imm8, %rsp
  if (n >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == 0xec) return 7;  // sub $imm32, %rsp
  return 0;
}

// A DWARF exception-header pointer of encoding `enc` at `at` in `b`; nullopt for encodings
// other than those every GNU toolchain writes for .eh_frame_hdr.
std::optional<int64_t> eh_value(const std::vector<unsigned char>& b, size_t at, uint8_t enc, size_t* len) {
  switch (enc & 0x0f) {
    case 0x03:  // udata4
      *len = 4;
      return at + 4 <= b.size() ? std::optional<int64_t>(load<uint32_t>(b, at)) : std::nullopt;
    case 0x0b:  // sdata4
      *len = 4;
      return at + 4 <= b.size() ? std::optional<int64_t>(load<int32_t>(b, at)) : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<TickSite> find_prologue_tick_sites(const std::string& path, std::string& why) {
  ElfFile f(path);
  if (!f.ok()) {
    why = "not a 64-bit x86 ELF file";
    return {};
  }
  // Every function with unwind information, from the sorted table of .eh_frame_hdr (found
  // through its program header: stripped libraries keep it, the unwinder needs it).
  const Elf64_Phdr* hdr = nullptr;
  for (const Elf64_Phdr& ph : f.segments()) {
    if (ph.p_type == PT_GNU_EH_FRAME) hdr = &ph;
  }
  if (!hdr || hdr->p_filesz < 12 || hdr->p_filesz > (64u << 20)) {
    why = "no .eh_frame_hdr";
    return {};
  }
  std::vector<unsigned char> h(hdr->p_filesz);
  if (!f.read(h.data(), h.size(), hdr->p_offset)) {
    why = "cannot read .eh_frame_hdr";
    return {};
  }
  const uint8_t ptr_enc = h[1], count_enc = h[2], table_enc = h[3];
  size_t len = 0;
  if (h[0] != 1 || !eh_value(h, 4, ptr_enc, &len)) {
    why = "an .eh_frame_hdr of an unknown form";
    return {};
  }
  size_t at = 4 + len;
  std::optional<int64_t> count = eh_value(h, at, count_enc, &len);
  at += len;
  // The table's entries relative to the header's start (DW_EH_PE_datarel), as GNU ld writes them.
  if (!count || (table_enc & 0x70) != 0x30 || *count < 0) {
    why = "an .eh_frame_hdr without a searchable table";
    return {};
  }
  std::vector<TickSite> sites;
  for (int64_t i = 0; i < *count; ++i) {
    size_t l1 = 0;
    std::optional<int64_t> start = eh_value(h, at + static_cast<size_t>(i) * 8, table_enc, &l1);
    if (!start || l1 != 4) break;
    const uint64_t fn = hdr->p_vaddr + static_cast<uint64_t>(*start);
    unsigned char code[40];
    std::optional<uint64_t> off = f.segment_offset_of(fn, sizeof code);
    if (!off || !f.read(code, sizeof code, *off)) continue;
    size_t pos = 0;
    for (int k = 0; k < 8 && pos + 3 <= sizeof code; ++k) {
      if (code[pos] == 0x0f && code[pos + 1] == 0x31) {
        sites.push_back({*off + pos, 2});
        break;
      }
      if (code[pos] == 0x0f && code[pos + 1] == 0x01 && code[pos + 2] == 0xf9) {
        sites.push_back({*off + pos, 3});
        break;
      }
      const unsigned n = prologue_insn(code + pos, sizeof code - pos);
      if (n == 0) break;
      pos += n;
    }
  }
  if (sites.empty()) why = "no counter read at the start of a function";
  return sites;
}

bool patch_tick_sites(pid_t pid, const std::vector<TickSite>& sites, uint64_t bias, std::vector<TickSite>* patched) {
  for (const TickSite& s : sites) {
    const unsigned char ud2[3] = {0x0f, 0x0b, 0x90};
    if (!write_mem(pid, s.addr + bias, ud2, s.len)) return false;
    patched->push_back({s.addr + bias, s.len});
  }
  return true;
}

unsigned patched_tick_len(const std::vector<TickSite>& sites, uint64_t rip) {
  for (const TickSite& s : sites) {
    if (s.addr == rip) return s.len;
  }
  return 0;
}

}  // namespace vtime::tracer
