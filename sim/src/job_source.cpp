// JobSource: the index every source shares (ids -> slots, submission instants) and the
// in-memory source.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "vtime/sim/workload.h"

namespace vtime::sim {

void JobKeys::reserve(size_t jobs) {
  offsets.reserve(jobs + 1);
  subtimes.reserve(jobs);
}

void JobKeys::add(std::string_view name, Nanos subtime) {
  if (names.size() + name.size() > UINT32_MAX) throw std::length_error("more than 4 GB of job ids");
  names += name;
  offsets.push_back(static_cast<uint32_t>(names.size()));
  subtimes.push_back(subtime);
}

namespace {

// Job positions sorted by id (then position): an id is found by binary search in one block of
// text, a few bytes per job where a hash map of strings takes ~80.
std::vector<uint32_t> sorted_by_name(const JobKeys& k) {
  std::vector<uint32_t> order(k.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    auto x = k.name(a), y = k.name(b);
    return x != y ? x < y : a < b;
  });
  return order;
}

}  // namespace

std::optional<size_t> JobKeys::first_duplicate() const {
  std::vector<uint32_t> order = sorted_by_name(*this);
  std::optional<size_t> first;
  for (size_t k = 1; k < order.size(); ++k)
    if (name(order[k]) == name(order[k - 1]) && (!first || order[k] < *first)) first = order[k];
  return first;
}

JobSource::JobSource(WorkloadInfo info, JobKeys keys) : info_(std::move(info)), keys_(std::move(keys)) {
  keys_.names.shrink_to_fit();
  keys_.offsets.shrink_to_fit();
  keys_.subtimes.shrink_to_fit();
  by_name_ = sorted_by_name(keys_);
  by_time_.resize(keys_.size());
  std::iota(by_time_.begin(), by_time_.end(), 0u);
  std::stable_sort(by_time_.begin(), by_time_.end(),
                   [&](uint32_t a, uint32_t b) { return keys_.subtimes[a] < keys_.subtimes[b]; });
}

std::optional<Nanos> JobSource::next_subtime() const {
  if (next_ >= by_time_.size()) return std::nullopt;
  return keys_.subtimes[by_time_[next_]];
}

Result<std::vector<WorkloadJob>> JobSource::next_batch() {
  std::vector<WorkloadJob> batch;
  if (next_ >= by_time_.size()) return batch;
  const Nanos t = keys_.subtimes[by_time_[next_]];
  size_t count = 0;
  while (next_ < by_time_.size() && keys_.subtimes[by_time_[next_]] == t) {
    ++next_;
    ++count;
  }
  batch.reserve(count);
  std::string err = fetch(t, count, batch);
  if (!err.empty()) return protocol::Error{std::move(err)};
  if (batch.size() != count) return protocol::Error{"workload '" + info_.file + "' changed while it was read"};
  // Batsim submits the jobs of one instant in job-id order.
  std::sort(batch.begin(), batch.end(), [](const WorkloadJob& a, const WorkloadJob& b) { return a.name < b.name; });
  return batch;
}

std::optional<uint32_t> JobSource::slot(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](uint32_t s, std::string_view n) { return keys_.name(s) < n; });
  if (it != by_name_.end() && keys_.name(*it) == name) return *it;
  return std::nullopt;
}

namespace {

JobKeys keys_of(const std::vector<WorkloadJob>& jobs) {
  JobKeys k;
  for (const auto& j : jobs) k.add(j.name, j.subtime);
  return k;
}

// A workload already in memory: batches are copies of its jobs.
class MemorySource : public JobSource {
 public:
  explicit MemorySource(Workload w)
      : JobSource(static_cast<const WorkloadInfo&>(w), keys_of(w.jobs)), jobs_(std::move(w.jobs)) {
    by_time_.resize(jobs_.size());
    std::iota(by_time_.begin(), by_time_.end(), size_t{0});
    std::stable_sort(by_time_.begin(), by_time_.end(),
                     [&](size_t a, size_t b) { return jobs_[a].subtime < jobs_[b].subtime; });
  }

 protected:
  std::string fetch(Nanos t, size_t count, std::vector<WorkloadJob>& out) override {
    for (; count > 0 && next_ < by_time_.size() && jobs_[by_time_[next_]].subtime == t; --count)
      out.push_back(jobs_[by_time_[next_++]]);
    return {};
  }

 private:
  std::vector<WorkloadJob> jobs_;
  std::vector<size_t> by_time_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<JobSource> memory_source(Workload w) { return std::make_unique<MemorySource>(std::move(w)); }

}  // namespace vtime::sim
