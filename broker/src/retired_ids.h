// The ids of jobs that have ended, kept compactly: a million-job run must not hold a hash map
// entry (~80 bytes) per job for its whole length. The ids live in an IdArena (the job book's,
// where they went at submission), indexed here by sorted runs of handles whose sizes at least
// double from the newest to the oldest (the logarithmic method): an insertion costs O(log n)
// amortised, a look-up a bisection per run, and memory is 4 bytes per id beyond its text.
#pragma once

#include "id_arena.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace vtime::broker {

class RetiredIds {
 public:
  explicit RetiredIds(const IdArena& arena) : arena_(arena) {}
  void insert(IdArena::Handle id);
  bool contains(std::string_view id) const;
  size_t size() const;

 private:
  const IdArena& arena_;
  std::vector<std::vector<IdArena::Handle>> runs_;  // each run in id order, oldest (largest) first
};

}  // namespace vtime::broker
