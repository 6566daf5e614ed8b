// The two calls a bridge scheduler makes to vtime, when it runs under vtime.
//
// What it is for: a bridge hears of decisions after it has replied (Slurm's job agents, the
// Kubernetes scheduler's bindings); it asks the broker for a tick to hand them over, and declares
// that the timers of its daemons earn no tick by themselves (docs/design.md, "Ticks on
// request"). Both functions are exported by the shim and looked up at run time, so a bridge
// still runs without vtime, where they do nothing.
//
// Example:
//     ticks_on_request();   // once, at start
//     ...; request_tick();  // after queueing a decision for the next message
#pragma once

namespace vtime::bridges {

void request_tick();
void ticks_on_request();
// Returns once the rest of the tree is idle, at the same virtual instant (no-op without vtime).
void settle();
// The session's CPU-time model: 0 zero, 1 calls, 2 real; -1 without vtime.
int cpu_model();
// One process of the tree runs at a time from now on (vtime_serialize in vtime/vtime.h).
void serialize();
// One thread of a traced process at a time too (vtime_serialize_threads).
void serialize_threads();

}  // namespace vtime::bridges
