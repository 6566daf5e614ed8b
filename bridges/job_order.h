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
//          order_submissions(events, is_submission, id_of, time_of);  // a Batsim message's events
#pragma once

#include <algorithm>
#include <string_view>

namespace vtime::bridges {

bool natural_id_less(std::string_view a, std::string_view b);

// Each run of consecutive submissions among `events` (is_submission(e)) in the order above, by
// timestamp first (time_of(e)) then natural_id_less of id_of(e); other events keep their places.
template <class Events, class IsSubmission, class IdOf, class TimeOf>
void order_submissions(Events& events, IsSubmission is_submission, IdOf id_of, TimeOf time_of) {
  for (size_t i = 0; i < events.size(); ++i) {
    size_t j = i;
    while (j < events.size() && is_submission(events[j])) ++j;
    std::stable_sort(events.begin() + i, events.begin() + j, [&](const auto& a, const auto& b) {
      if (time_of(a) != time_of(b)) return time_of(a) < time_of(b);
      return natural_id_less(id_of(a), id_of(b));
    });
    i = j;
  }
}

}  // namespace vtime::bridges
