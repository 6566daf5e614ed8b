// A synthetic workload generator writing SWF, for tests and scale runs (real traces cannot be
// downloaded here). The model is deliberately simple and documented (docs/workloads.md):
//   - arrivals: a Poisson process; its rate gives the requested offered utilisation;
//   - sizes: serial (1 processor) with probability `serial_fraction`, else a power of two
//     2^k with k uniform in 1..log2(max size) (parallel job sizes cluster on powers of two,
//     Lublin and Feitelson 2003);
//   - run times: log-uniform between `min_runtime` and `max_runtime`;
//   - requested time: the run time times a factor uniform in [1, 3], rounded up to a minute.
// Same options and seed, same trace, on every machine: the generator uses its own PRNG
// (xoshiro256**) and its own transforms, not <random>'s distributions (whose output the C++
// standard leaves to each library).
//
// Example:
//     SynthOptions o;
//     o.jobs = 1000000; o.procs = 1024; o.seed = 7;
//     SwfTrace t = synthesise(o);
#pragma once

#include <vtime/workload/swf.h>

#include <cstdint>

namespace vtime::workload {

struct SynthOptions {
  size_t jobs = 1000;
  int64_t procs = 64;            // the machine (MaxProcs); sizes never exceed it
  uint64_t seed = 1;
  double utilisation = 0.7;      // offered: mean work per second / procs
  double serial_fraction = 0.25;
  double min_runtime = 10;       // seconds
  double max_runtime = 86400;
};

SwfTrace synthesise(const SynthOptions& options);

}  // namespace vtime::workload
