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
  std::vector<char> names_;
};

struct Range {
  uint64_t start = 0;
  uint64_t end = 0;
};

// runtime.cputicks from the ELF symbol table (absent from stripped binaries). The assembler's
// functions are ABI0: the symbol is "runtime.cputicks.abi0" since Go 1.17.
std::optional<Range> from_symtab(const ElfFile& f) {
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
      const char* name = names.data() + s.st_name;
      if (strcmp(name, "runtime.cputicks.abi0") == 0 || strcmp(name, "runtime.cputicks") == 0) {
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
std::optional<Range> from_pclntab(const ElfFile& f, std::string& why) {
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
    static constexpr char kName[] = "runtime.cputicks";
    if (room > sizeof kName && memcmp(name, kName, sizeof kName) == 0) {
      // The next function's entry ends it (the table has one entry more, the end of the text).
      return Range{entry_of(i), entry_of(i + 1)};
    }
  }
  why = "no runtime.cputicks in .gopclntab";
  return std::nullopt;
}

}  // namespace

uint64_t elf_entry(const std::string& path) {
  ElfFile f(path);
  return f.ok() ? f.header().e_entry : 0;
}

std::vector<TickSite> find_tick_sites(const std::string& path, std::string& why) {
  ElfFile f(path);
  if (!f.ok()) {
    why = "not a 64-bit x86 ELF executable";
    return {};
  }
  std::optional<Range> r = from_symtab(f);
  if (!r) r = from_pclntab(f, why);
  if (!r) return {};
  if (r->end <= r->start || r->end - r->start > 4096) {
    why = "runtime.cputicks of an unexpected size";
    return {};
  }
  const uint64_t n = r->end - r->start;
  std::vector<unsigned char> code(n);
  std::optional<uint64_t> off = f.offset_of(r->start, n);
  if (!off || !f.read(code.data(), n, *off)) {
    why = "cannot read runtime.cputicks's code";
    return {};
  }
  // RDTSCP; SHLQ $32, DX  and  MFENCE; LFENCE; RDTSC (go_ticks.h).
  static constexpr unsigned char kRdtscp[] = {0x0f, 0x01, 0xf9, 0x48, 0xc1, 0xe2, 0x20};
  static constexpr unsigned char kRdtsc[] = {0x0f, 0xae, 0xf0, 0x0f, 0xae, 0xe8, 0x0f, 0x31};
  std::vector<TickSite> sites;
  for (uint64_t i = 0; i < n; ++i) {
    if (i + sizeof kRdtscp <= n && memcmp(code.data() + i, kRdtscp, sizeof kRdtscp) == 0) {
      sites.push_back({r->start + i, 3});
    } else if (i + sizeof kRdtsc <= n && memcmp(code.data() + i, kRdtsc, sizeof kRdtsc) == 0) {
      sites.push_back({r->start + i + 6, 2});
    }
  }
  if (sites.empty()) why = "runtime.cputicks's code is not as expected (no RDTSCP or RDTSC where Go puts them)";
  return sites;
}

bool patch_tick_sites(pid_t pid, const std::vector<TickSite>& sites, uint64_t bias) {
  for (const TickSite& s : sites) {
    const unsigned char ud2[3] = {0x0f, 0x0b, 0x90};
    if (!write_mem(pid, s.addr + bias, ud2, s.len)) return false;
  }
  return true;
}

unsigned patched_tick_len(const std::vector<TickSite>& sites, uint64_t bias, uint64_t rip) {
  for (const TickSite& s : sites) {
    if (s.addr + bias == rip) return s.len;
  }
  return 0;
}

}  // namespace vtime::tracer
