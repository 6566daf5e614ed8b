// A constant in a Go program's code replaced at its exec (see go_constant.h).
#include "go_constant.h"

#include "go_ticks.h"
#include "inferior.h"
#include "vdso_patch.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace vtime::tracer {

namespace {
constexpr uint64_t kMaxConstant = 0x7fffffff;  // what a sign-extending load gives back unchanged

bool parse_constant(const std::string& s, uint32_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 10) return false;
  errno = 0;
  const unsigned long long v = strtoull(s.c_str(), nullptr, 10);
  if (errno != 0 || v > kMaxConstant) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

uint32_t imm32_at(const std::vector<unsigned char>& code, size_t i) {
  uint32_t v = 0;
  memcpy(&v, code.data() + i, sizeof v);
  return v;
}
}  // namespace

std::optional<std::vector<GoConstant>> parse_go_constants(const std::string& value, std::string& why) {
  std::vector<GoConstant> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(';', start);
    if (end == std::string::npos) end = value.size();
    const std::string entry = value.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    // The function's name may hold anything but the two last colons' numbers.
    const size_t b = entry.rfind(':');
    const size_t a = b == std::string::npos || b == 0 ? std::string::npos : entry.rfind(':', b - 1);
    GoConstant c;
    if (a == std::string::npos || a == 0 || !parse_constant(entry.substr(a + 1, b - a - 1), &c.from) ||
        !parse_constant(entry.substr(b + 1), &c.to)) {
      why = "'" + entry + "' is not FUNCTION:FROM:TO with FROM and TO from 0 to 2147483647";
      return std::nullopt;
    }
    c.function = entry.substr(0, a);
    out.push_back(std::move(c));
  }
  if (out.empty()) {
    why = "no FUNCTION:FROM:TO given";
    return std::nullopt;
  }
  return out;
}

std::vector<size_t> constant_loads(const std::vector<unsigned char>& code, uint32_t value) {
  std::vector<size_t> at;
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    if (code[i] >= 0xb8 && code[i] <= 0xbf && imm32_at(code, i + 1) == value) {
      at.push_back(i + 1);
    } else if (i + 6 <= code.size() && code[i] == 0xc7 && code[i + 1] >= 0xc0 && code[i + 1] <= 0xc7 &&
               imm32_at(code, i + 2) == value) {
      at.push_back(i + 2);
    }
  }
  return at;
}

bool patch_go_constant(pid_t pid, const std::string& exe, const GoConstant& c, std::string& why) {
  uint64_t entry = 0;
  std::optional<GoFunction> fn = find_go_function(exe, c.function, why, &entry);
  if (!fn) return false;
  const std::vector<size_t> at = constant_loads(fn->code, c.from);
  if (at.size() != 1) {
    why = c.function + " loads " + std::to_string(c.from) + (at.empty() ? " nowhere" : " " + std::to_string(at.size()) + " times");
    return false;
  }
  if (!write_mem(pid, fn->addr + at[0] + load_bias(pid, entry), &c.to, sizeof c.to)) {
    why = "cannot write its code";
    return false;
  }
  return true;
}

}  // namespace vtime::tracer
