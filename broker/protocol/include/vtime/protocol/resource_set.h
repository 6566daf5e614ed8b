// ResourceSet: a set of Batsim resource ids written as "0-3 5 7-8" (Batsim's IntervalSet with
// " " between intervals and "-" inside them), as used by EXECUTE_JOB's "alloc", JOB_COMPLETED's
// "alloc" and the allocated_resources column of jobs.csv.
//
// Example:
//     auto r = ResourceSet::parse("0-3 5");       // Result<ResourceSet>
//     r->size();                                  // 5
//     r->to_string();                             // "0-3 5"
//     ResourceSet::from_ids({4, 2, 3}).to_string();  // "2-4"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vtime/protocol/result.h"

namespace vtime::protocol {

class ResourceSet {
 public:
  ResourceSet() = default;
  // Sorts and removes duplicates (Batsim's set union semantics).
  static ResourceSet from_ids(std::vector<int> ids);
  // Error text describes the offending token, e.g. "'3-1' is a decreasing range".
  static Result<ResourceSet> parse(std::string_view text);

  const std::vector<int>& ids() const { return ids_; }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  std::string to_string() const;

  bool operator==(const ResourceSet&) const = default;

 private:
  std::vector<int> ids_;  // sorted, unique
};

}  // namespace vtime::protocol
