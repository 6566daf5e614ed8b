// What the broker knows of the jobs (see job_book.h).
#include "job_book.h"

#include <functional>

namespace vtime::broker {

using namespace vtime::protocol;

void JobBook::on_batsim_event(const Event& e) {
  if (auto* b = std::get_if<SimulationBegins>(&e.payload)) {
    nb_resources_ = b->nb_compute_resources;
  } else if (auto* s = std::get_if<JobSubmitted>(&e.payload)) {
    if (!retired_.contains(s->job_id) && !lookup(s->job_id)) {
      insert(s->job_id, s->job.res);
      ++submitted_;
    }
  } else if (auto* c = std::get_if<JobCompleted>(&e.payload)) {
    if (Slot* j = lookup(c->job_id)) retire(j);
  } else if (auto* k = std::get_if<JobKilled>(&e.payload)) {
    for (auto& id : k->job_ids) {
      if (Slot* j = lookup(id)) retire(j);
    }
  } else if (auto* n = std::get_if<Notify>(&e.payload)) {
    if (n->type == "no_more_static_job_to_submit") no_more_static_ = true;
  }
}

void JobBook::on_decision(const Event& e) {
  if (auto* x = std::get_if<ExecuteJob>(&e.payload)) {
    if (Slot* j = lookup(x->job_id)) j->state = State::kRunning;
  } else if (auto* r = std::get_if<RejectJob>(&e.payload)) {
    if (Slot* j = lookup(r->job_id)) retire(j);
  }
}

bool JobBook::all_done() const { return no_more_static_ && done_ == submitted_; }

const JobBook::State* JobBook::find(const std::string& id) const {
  // Ended jobs are not told apart (done or rejected): the checks treat both alike.
  static constexpr State kEnded = State::kDone;
  if (const Slot* j = lookup(id)) return &j->state;
  return retired_.contains(id) ? &kEnded : nullptr;
}

int JobBook::requested(const std::string& id) const {
  const Slot* j = lookup(id);
  return j ? j->res : 0;
}

// ---- the table of jobs in flight -------------------------------------------------------------

size_t JobBook::home(std::string_view id) const { return std::hash<std::string_view>{}(id) & (table_.size() - 1); }

const JobBook::Slot* JobBook::lookup(std::string_view id) const {
  if (table_.empty()) return nullptr;
  const size_t mask = table_.size() - 1;
  for (size_t i = home(id);; i = (i + 1) & mask) {
    const Slot& s = table_[i];
    if (s.id == kEmpty) return nullptr;
    if (arena_.view(s.id) == id) return &s;
  }
}

JobBook::Slot* JobBook::lookup(std::string_view id) {
  return const_cast<Slot*>(static_cast<const JobBook*>(this)->lookup(id));
}

void JobBook::insert(std::string_view id, int res) {
  if (4 * (in_flight_ + 1) > 3 * table_.size()) grow();
  const size_t mask = table_.size() - 1;
  size_t i = home(id);
  while (table_[i].id != kEmpty) i = (i + 1) & mask;
  table_[i] = Slot{arena_.add(id), res, State::kSubmitted};
  ++in_flight_;
}

void JobBook::grow() {
  std::vector<Slot> old = std::move(table_);
  table_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
  const size_t mask = table_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kEmpty) continue;
    size_t i = home(arena_.view(s.id));
    while (table_[i].id != kEmpty) i = (i + 1) & mask;
    table_[i] = s;
  }
}

void JobBook::retire(Slot* s) {
  retired_.insert(s->id);
  ++done_;
  --in_flight_;
  // Backward shift: later slots of the probe sequence move into the hole when their home is not
  // between the hole and themselves, so that no look-up stops early at it.
  const size_t mask = table_.size() - 1;
  size_t hole = static_cast<size_t>(s - table_.data());
  table_[hole] = Slot{};
  for (size_t j = (hole + 1) & mask; table_[j].id != kEmpty; j = (j + 1) & mask) {
    const size_t k = home(arena_.view(table_[j].id));
    const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    table_[hole] = table_[j];
    table_[j] = Slot{};
    hole = j;
  }
}

}  // namespace vtime::broker
