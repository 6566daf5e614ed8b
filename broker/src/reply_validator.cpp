// Semantic checks of a scheduler's reply (see reply_validator.h).
#include "reply_validator.h"

#include <vtime/protocol/codec.h>

#include <set>

namespace vtime::broker {

using namespace vtime::protocol;

std::optional<std::string> validate_reply(const Message& reply, Nanos received_now, const JobBook& jobs) {
  std::set<std::string> executed_here;
  for (size_t i = 0; i < reply.events.size(); ++i) {
    const Event& e = reply.events[i];
    std::string where = "event " + std::to_string(i) + " (" + std::string(type_name(e.payload)) + ")";
    if (e.timestamp > reply.now) {
      return where + ": timestamp " + format_seconds(e.timestamp) + " is after the reply's now " +
             format_seconds(reply.now);
    }
    if (auto* x = std::get_if<ExecuteJob>(&e.payload)) {
      const JobBook::State* st = jobs.find(x->job_id);
      if (!st) return where + ": unknown job '" + x->job_id + "'";
      if (*st != JobBook::State::kSubmitted || executed_here.count(x->job_id)) {
        return where + ": job '" + x->job_id + "' was already executed, rejected or finished";
      }
      executed_here.insert(x->job_id);
      int want = jobs.requested(x->job_id);
      if (static_cast<int>(x->alloc.size()) != want) {
        return where + ": job '" + x->job_id + "' requests " + std::to_string(want) + " resources but the allocation '" +
               x->alloc.to_string() + "' has " + std::to_string(x->alloc.size());
      }
      for (int r : x->alloc.ids()) {
        if (r < 0 || (jobs.nb_resources() > 0 && r >= jobs.nb_resources())) {
          return where + ": resource " + std::to_string(r) + " does not exist (" +
                 std::to_string(jobs.nb_resources()) + " resources)";
        }
      }
    } else if (auto* rj = std::get_if<RejectJob>(&e.payload)) {
      const JobBook::State* st = jobs.find(rj->job_id);
      if (!st) return where + ": unknown job '" + rj->job_id + "'";
      if (*st != JobBook::State::kSubmitted) return where + ": job '" + rj->job_id + "' cannot be rejected any more";
    } else if (auto* k = std::get_if<KillJob>(&e.payload)) {
      for (auto& id : k->job_ids) {
        if (!jobs.find(id)) return where + ": unknown job '" + id + "'";
      }
    } else if (auto* c = std::get_if<CallMeLater>(&e.payload)) {
      Nanos now = reply.now > received_now ? reply.now : received_now;
      if (c->target <= now) {
        return where + ": target " + format_seconds(c->target) + " is not after now " + format_seconds(now) +
               " (Batsim aborts on this)";
      }
    } else if (auto* o = std::get_if<OtherEvent>(&e.payload)) {
      return where + ": unknown event type '" + o->type + "'";
    } else if (!std::holds_alternative<Notify>(e.payload)) {
      return where + ": a scheduler cannot send this event";
    }
  }
  return std::nullopt;
}

}  // namespace vtime::broker
