// The order in which a bridge hands jobs due at one instant to its scheduler.
//
// Batsim lists the jobs submitted at one instant in the string order of their ids ("w0!10"
// before "w0!9"). A person or a script replaying a trace submits them in the trace's order,
// which for numbered jobs (every SWF trace, `vtime workload from-swf`) is numeric: 9 before 10.
// Under FCFS that order is the priority order, so a bridge that kept Batsim's order would run a
// different experiment from the real cluster's (issue 41: job 9 started 15 s late on a real
// workload). `natural_id_less` compares ids that way: the workload part as text, then the job
// part numerically where both are numbers, as text otherwise.
//
// Example: std::stable_sort(ids.begin(), ids.end(), natural_id_less);  // w0!2, w0!9, w0!10
#pragma once

#include <string_view>

namespace vtime::bridges {

bool natural_id_less(std::string_view a, std::string_view b);

}  // namespace vtime::bridges
