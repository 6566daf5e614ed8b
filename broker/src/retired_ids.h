// The ids of jobs that have ended, kept compactly: a million-job run must not hold a hash map
// entry (~80 bytes) per job for its whole length. Ids go into one block of text, indexed by
// sorted runs of offsets whose sizes at least double from the newest to the oldest (the
// logarithmic method): an insertion costs O(log n) amortised, a look-up a bisection per run,
// and memory is the text plus 8 bytes per id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vtime::broker {

class RetiredIds {
 public:
  void insert(std::string_view id);
  bool contains(std::string_view id) const;
  size_t size() const;

 private:
  std::string_view at(uint64_t offset) const;

  std::string text_;                         // every id, each followed by '\0'
  std::vector<std::vector<uint64_t>> runs_;  // offsets, each run in id order, oldest (largest) first
};

}  // namespace vtime::broker
