#include <vtime/workload/synth.h>

#include <cmath>
#include <cstdio>

namespace vtime::workload {
namespace {

// xoshiro256** seeded with splitmix64 (Blackman and Vigna): small, fast, and the same sequence
// everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1): 53 random bits, never 0 (log() below).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace

SwfTrace synthesise(const SynthOptions& o) {
  SwfTrace t;
  Rng rng(o.seed);
  const int max_k = o.procs > 1 ? static_cast<int>(std::floor(std::log2(static_cast<double>(o.procs)))) : 0;
  // Expected size and run time, for the arrival rate that offers the requested utilisation.
  double mean_size = o.serial_fraction;
  if (max_k >= 1) {
    double pow_mean = 0;
    for (int k = 1; k <= max_k; ++k) pow_mean += std::ldexp(1.0, k);
    mean_size += (1 - o.serial_fraction) * pow_mean / max_k;
  } else {
    mean_size = 1;
  }
  const double lo = std::log(o.min_runtime), hi = std::log(o.max_runtime);
  const double mean_run = hi > lo ? (o.max_runtime - o.min_runtime) / (hi - lo) : o.min_runtime;
  const double rate = o.utilisation * static_cast<double>(o.procs) / (mean_size * mean_run);  // jobs per second

  char buf[64];
  t.header.fields = {{"Version", "2.2"},
                     {"Computer", "vtime workload synth"},
                     {"Note", "synthetic: Poisson arrivals, serial or power-of-two sizes, log-uniform run times"}};
  std::snprintf(buf, sizeof buf, "seed %llu, offered utilisation %.3g", static_cast<unsigned long long>(o.seed),
                o.utilisation);
  t.header.fields.emplace_back("Note", buf);
  t.header.fields.emplace_back("MaxJobs", std::to_string(o.jobs));
  t.header.fields.emplace_back("MaxRecords", std::to_string(o.jobs));
  t.header.fields.emplace_back("UnixStartTime", "0");
  t.header.fields.emplace_back("TimeZoneString", "UTC");
  t.header.fields.emplace_back("MaxNodes", std::to_string(o.procs));
  t.header.fields.emplace_back("MaxProcs", std::to_string(o.procs));
  t.header.max_procs = o.procs;
  t.header.max_nodes = o.procs;
  t.header.unix_start_time = 0;
  t.header.time_zone = "UTC";

  t.jobs.reserve(o.jobs);
  double now = 0;
  for (size_t i = 0; i < o.jobs; ++i) {
    SwfJob j;
    j.number = static_cast<int64_t>(i + 1);
    if (i) now += std::floor(-std::log(rng.uniform()) / rate);  // whole seconds, as real traces
    j.submit = now;
    j.wait = -1;
    bool serial = max_k == 0 || rng.uniform() < o.serial_fraction;
    int k = serial ? 0 : 1 + static_cast<int>(rng.uniform() * max_k);
    if (k > max_k) k = max_k;
    j.alloc_procs = j.req_procs = int64_t{1} << k;
    j.run = std::round(std::exp(lo + (hi - lo) * rng.uniform()));
    j.req_time = std::ceil(j.run * (1 + 2 * rng.uniform()) / 60) * 60;
    j.status = 1;
    j.user = 1 + static_cast<int64_t>(rng.uniform() * 100);
    t.jobs.push_back(j);
  }
  return t;
}

}  // namespace vtime::workload
