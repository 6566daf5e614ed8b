// Where the sanitizer runtimes' code lies (see sanitizer_runtime.h).
#include "sanitizer_runtime.h"

#include <link.h>

#include <cstdint>
#include <cstring>

namespace vtime::shim {
namespace {

struct CodeRange {
  uintptr_t begin, end;
};
// Written once by the shim's constructor, read-only afterwards (the shim's interposition state).
// A runtime has one executable segment; eight leave room for ASan and UBSan side by side.
CodeRange g_ranges[8];
int g_count = 0;

bool is_sanitizer_runtime(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const char* base = slash ? slash + 1 : path;
  static const char* const kPrefixes[] = {"libasan.so",       "libtsan.so",       "liblsan.so",
                                          "libubsan.so",      "libhwasan.so",     "libclang_rt.asan",
                                          "libclang_rt.tsan", "libclang_rt.lsan", "libclang_rt.ubsan",
                                          "libclang_rt.hwasan", "libclang_rt.msan"};
  for (const char* p : kPrefixes) {
    if (std::strncmp(base, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

int note_runtime(dl_phdr_info* info, size_t, void*) {
  if (!info->dlpi_name || !is_sanitizer_runtime(info->dlpi_name)) return 0;
  constexpr int kMax = static_cast<int>(sizeof g_ranges / sizeof g_ranges[0]);
  for (int i = 0; i < info->dlpi_phnum && g_count < kMax; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    g_ranges[g_count++] = {begin, begin + ph.p_memsz};
  }
  return 0;
}

}  // namespace

void find_sanitizer_runtimes() {
  g_count = 0;
  dl_iterate_phdr(note_runtime, nullptr);
}

bool in_sanitizer_runtime(const void* pc) {
  auto a = reinterpret_cast<uintptr_t>(pc);
  for (int i = 0; i < g_count; ++i) {
    if (a >= g_ranges[i].begin && a < g_ranges[i].end) return true;
  }
  return false;
}

}  // namespace vtime::shim
