#include "vtime/protocol/resource_set.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

namespace vtime::protocol {

ResourceSet ResourceSet::from_ids(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ResourceSet r;
  r.ids_ = std::move(ids);
  return r;
}

namespace {
// A non-negative decimal integer, the whole token and nothing else (no sign, no spaces).
bool parse_id(std::string_view s, int& out) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

Result<ResourceSet> ResourceSet::parse(std::string_view text) {
  // Intervals first, merged, then expanded once: "0-999999" written ten times costs one
  // expansion, not ten (fuzz_protocol found a 32-byte reply that took seconds). The distinct ids
  // are capped so "0-2000000000" cannot exhaust memory.
  constexpr int64_t kMaxIds = 10'000'000;
  std::vector<std::pair<int, int>> ranges;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') { ++pos; continue; }
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view tok = text.substr(pos, end - pos);
    pos = end;
    size_t dash = tok.find('-');
    int lo = 0;
    int hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_id(tok, lo)) return Error{"'" + std::string(tok) + "' is not a resource id"};
      hi = lo;
    } else if (!parse_id(tok.substr(0, dash), lo) || !parse_id(tok.substr(dash + 1), hi)) {
      return Error{"'" + std::string(tok) + "' is not a range like '0-3'"};
    } else if (hi < lo) {
      return Error{"'" + std::string(tok) + "' is a decreasing range"};
    }
    ranges.emplace_back(lo, hi);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<int, int>> merged;
  int64_t total = 0;
  for (auto [lo, hi] : ranges) {
    if (!merged.empty() && static_cast<int64_t>(lo) <= static_cast<int64_t>(merged.back().second) + 1) {
      if (hi > merged.back().second) {
        total += hi - merged.back().second;
        merged.back().second = hi;
      }
    } else {
      merged.emplace_back(lo, hi);
      total += static_cast<int64_t>(hi) - lo + 1;
    }
    if (total > kMaxIds) return Error{"allocation has more than 10000000 resources"};
  }
  ResourceSet r;
  r.ids_.reserve(static_cast<size_t>(total));
  for (auto [lo, hi] : merged) {
    // Not `i <= hi`: with hi = INT_MAX the increment would overflow (found by fuzz_protocol).
    for (int i = lo;; ++i) {
      r.ids_.push_back(i);
      if (i == hi) break;
    }
  }
  return r;  // sorted and unique by construction
}

std::string ResourceSet::to_string() const {
  std::string out;
  size_t i = 0;
  while (i < ids_.size()) {
    size_t j = i;
    while (j + 1 < ids_.size() && ids_[j + 1] == ids_[j] + 1) ++j;
    if (!out.empty()) out += ' ';
    out += std::to_string(ids_[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(ids_[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace vtime::protocol
