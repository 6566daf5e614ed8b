#include "retired_ids.h"

#include <algorithm>
#include <iterator>

namespace vtime::broker {

void RetiredIds::insert(IdArena::Handle id) {
  runs_.push_back({id});
  auto less = [&](IdArena::Handle a, IdArena::Handle b) { return arena_.view(a) < arena_.view(b); };
  // Merge while the newest run is at least half the size of the one before it.
  while (runs_.size() > 1 && 2 * runs_.back().size() >= runs_[runs_.size() - 2].size()) {
    std::vector<IdArena::Handle> newest = std::move(runs_.back());
    runs_.pop_back();
    std::vector<IdArena::Handle>& older = runs_.back();
    std::vector<IdArena::Handle> merged;
    merged.reserve(older.size() + newest.size());
    std::merge(older.begin(), older.end(), newest.begin(), newest.end(), std::back_inserter(merged), less);
    older = std::move(merged);
  }
}

bool RetiredIds::contains(std::string_view id) const {
  for (const auto& run : runs_) {
    auto it = std::lower_bound(run.begin(), run.end(), id,
                               [&](IdArena::Handle h, std::string_view x) { return arena_.view(h) < x; });
    if (it != run.end() && arena_.view(*it) == id) return true;
  }
  return false;
}

size_t RetiredIds::size() const {
  size_t n = 0;
  for (const auto& run : runs_) n += run.size();
  return n;
}

}  // namespace vtime::broker
