#include "retired_ids.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace vtime::broker {

std::string_view RetiredIds::at(uint64_t offset) const {
  const char* p = text_.data() + offset;
  return {p, std::strlen(p)};
}

void RetiredIds::insert(std::string_view id) {
  runs_.push_back({text_.size()});
  text_.append(id);
  text_.push_back('\0');
  auto less = [&](uint64_t a, uint64_t b) { return at(a) < at(b); };
  // Merge while the newest run is at least half the size of the one before it.
  while (runs_.size() > 1 && 2 * runs_.back().size() >= runs_[runs_.size() - 2].size()) {
    std::vector<uint64_t> newest = std::move(runs_.back());
    runs_.pop_back();
    std::vector<uint64_t>& older = runs_.back();
    std::vector<uint64_t> merged;
    merged.reserve(older.size() + newest.size());
    std::merge(older.begin(), older.end(), newest.begin(), newest.end(), std::back_inserter(merged), less);
    older = std::move(merged);
  }
}

bool RetiredIds::contains(std::string_view id) const {
  for (const auto& run : runs_) {
    auto it = std::lower_bound(run.begin(), run.end(), id, [&](uint64_t o, std::string_view x) { return at(o) < x; });
    if (it != run.end() && at(*it) == id) return true;
  }
  return false;
}

size_t RetiredIds::size() const {
  size_t n = 0;
  for (const auto& run : runs_) n += run.size();
  return n;
}

}  // namespace vtime::broker
