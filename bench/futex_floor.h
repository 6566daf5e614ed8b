// The kernel's own cost of the 1,000-sleeper wake-up, with no vtime at all: the floor that
// bench_wake_latency's "advance -> last sleeper running" is compared with, in the same run.
//
// The tree has the shape of the benchmark (4 processes x 250 threads) and waits the way libvtime's
// sleepers do (sleep_on in libvtime/src/context.cpp): every thread of a process blocks on the
// process's shared futex word with FUTEX_WAIT_BITSET (bit = thread index % 32) and a 1 s absolute
// heartbeat. One round: the waker bumps each process's word and wakes all its bits
// (FUTEX_WAKE_BITSET, one call per process, as Controller::advance_to does), and every thread,
// once running, records the real time and waits again. The figure is the time from just before
// the first wake call until the last thread ran.
//
// Example:
//     std::vector<double> ms = bench::futex_wake_floor(4, 250, 20);  // per round, in ms
#pragma once

#include <vector>

namespace bench {

// Runs `rounds` wake-ups of processes x threads waiters; returns each round's time until the last
// waiter ran, in milliseconds (empty when the tree could not be set up).
std::vector<double> futex_wake_floor(int processes, int threads, int rounds);

}  // namespace bench
