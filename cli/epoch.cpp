// Parsing --epoch (see epoch.h).
#include "epoch.h"

#include <cctype>
#include <limits>
#include <string>

namespace vtime::cli {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i >= s.size(); }
  bool eat(char c) {
    if (!done() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // Exactly n digits.
  std::optional<int> digits(int n) {
    int v = 0;
    for (int k = 0; k < n; ++k) {
      if (done() || !isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
      v = v * 10 + (s[i++] - '0');
    }
    return v;
  }
  // A fraction after '.' or ',': up to 9 digits as nanoseconds.
  std::optional<int64_t> fraction() {
    int64_t ns = 0;
    int n = 0;
    while (!done() && isdigit(static_cast<unsigned char>(s[i]))) {
      if (n < 9) {
        ns = ns * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
    }
    if (n == 0) return std::nullopt;
    while (n++ < 9) ns *= 10;
    return ns;
  }
};

bool days_ok(int y, int m, int d) {
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= mdays[m - 1] + ((m == 2 && leap) ? 1 : 0);
}

// secs s + frac ns in nanoseconds, or nullopt past int64's range (years before 1678 or after
// 2262): the multiplication would overflow (found by fuzz_values).
std::optional<int64_t> to_ns(int64_t secs, int64_t frac) {
  constexpr int64_t kMaxSecs = std::numeric_limits<int64_t>::max() / 1'000'000'000LL - 1;
  if (secs > kMaxSecs || secs < -kMaxSecs) return std::nullopt;
  return secs * 1'000'000'000LL + frac;
}

}  // namespace

std::optional<int64_t> parse_epoch(std::string_view text) {
  Cursor c{text};
  if (c.eat('@')) {
    bool neg = c.eat('-');
    int64_t secs = 0;
    size_t start = c.i;
    while (!c.done() && isdigit(static_cast<unsigned char>(c.s[c.i]))) {
      if (secs > 9'000'000'000LL) return std::nullopt;
      secs = secs * 10 + (c.s[c.i++] - '0');
    }
    if (c.i == start) return std::nullopt;
    int64_t frac = 0;
    if (c.eat('.')) {
      auto f = c.fraction();
      if (!f) return std::nullopt;
      frac = *f;
    }
    if (!c.done()) return std::nullopt;
    auto ns = to_ns(secs, frac);
    if (!ns) return std::nullopt;
    return neg ? -*ns : *ns;
  }
  auto y = c.digits(4);
  if (!y || !c.eat('-')) return std::nullopt;
  auto mo = c.digits(2);
  if (!mo || !c.eat('-')) return std::nullopt;
  auto d = c.digits(2);
  if (!d || !days_ok(*y, *mo, *d)) return std::nullopt;
  int hh = 0, mm = 0, ss = 0;
  int64_t frac = 0;
  if (c.eat('T') || c.eat('t') || c.eat(' ')) {
    auto h = c.digits(2);
    if (!h || !c.eat(':')) return std::nullopt;
    auto m = c.digits(2);
    if (!m) return std::nullopt;
    hh = *h;
    mm = *m;
    if (c.eat(':')) {
      auto s = c.digits(2);
      if (!s) return std::nullopt;
      ss = *s;
      if (c.eat('.') || c.eat(',')) {
        auto f = c.fraction();
        if (!f) return std::nullopt;
        frac = *f;
      }
    }
    if (hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  }
  int64_t offset = 0;
  if (c.eat('Z') || c.eat('z')) {
  } else if (!c.done() && (c.s[c.i] == '+' || c.s[c.i] == '-')) {
    int sign = c.s[c.i++] == '-' ? -1 : 1;
    auto oh = c.digits(2);
    if (!oh) return std::nullopt;
    int om = 0;
    if (c.eat(':')) {
      auto m = c.digits(2);
      if (!m) return std::nullopt;
      om = *m;
    } else if (!c.done()) {
      auto m = c.digits(2);
      if (!m) return std::nullopt;
      om = *m;
    }
    if (*oh > 23 || om > 59) return std::nullopt;
    offset = sign * (*oh * 3600 + om * 60);
  }
  if (!c.done()) return std::nullopt;
  int64_t secs = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d)) * 86400 + hh * 3600 +
                 mm * 60 + ss - offset;
  return to_ns(secs, frac);
}

}  // namespace vtime::cli
