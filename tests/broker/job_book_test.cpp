// The broker's job book against a plain model: its compact table (open addressing, deletion by
// backward shift, growth) and the retired ids must answer exactly what a std::map would, over
// many submissions and ends in random order, with ids of every length (and any byte).
#include "job_book.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace vtime::broker {
namespace {

using protocol::Event;

Event submitted(const std::string& id, int res) {
  protocol::JobSubmitted s;
  s.job_id = id;
  s.job.id = id;
  s.job.res = res;
  return Event{protocol::Nanos::zero(), std::move(s), {}};
}

Event completed(const std::string& id) {
  protocol::JobCompleted c;
  c.job_id = id;
  return Event{protocol::Nanos::zero(), std::move(c), {}};
}

Event executed(const std::string& id) {
  protocol::ExecuteJob x;
  x.job_id = id;
  return Event{protocol::Nanos::zero(), std::move(x), {}};
}

Event rejected(const std::string& id) {
  protocol::RejectJob r;
  r.job_id = id;
  return Event{protocol::Nanos::zero(), std::move(r), {}};
}

std::string make_id(std::mt19937& rng, int n) {
  switch (n % 4) {
    case 0: return "w0!" + std::to_string(n);
    case 1: return "w0!" + std::string(300 + n % 50, 'x') + std::to_string(n);  // longer than 255 bytes
    case 2: return std::string("w\0!", 3) + std::to_string(n);                  // a NUL inside
    default: {
      std::string s = "w1!";
      for (int i = 0; i < 1 + static_cast<int>(rng() % 20); ++i) s += static_cast<char>(rng() % 256);
      return s + "#" + std::to_string(n);
    }
  }
}

TEST(JobBook, AgreesWithAMapOverManySubmissionsAndEnds) {
  std::mt19937 rng(42);
  JobBook book;
  std::map<std::string, std::pair<JobBook::State, int>> live;
  std::vector<std::string> ended;
  std::vector<std::string> ids;
  for (int n = 0; n < 60000; ++n) ids.push_back(make_id(rng, n));
  size_t next = 0, done = 0;
  for (int step = 0; step < 200000; ++step) {
    const unsigned what = rng() % 10;
    if (what < 4 && next < ids.size()) {
      const int res = 1 + static_cast<int>(rng() % 64);
      book.on_batsim_event(submitted(ids[next], res));
      live[ids[next]] = {JobBook::State::kSubmitted, res};
      ++next;
    } else if (what < 6 && !live.empty()) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      book.on_decision(executed(it->first));
      it->second.first = JobBook::State::kRunning;
    } else if (what < 9 && !live.empty()) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      if (rng() % 3 == 0) book.on_decision(rejected(it->first));
      else book.on_batsim_event(completed(it->first));
      ended.push_back(it->first);
      live.erase(it);
      ++done;
    } else if (!ended.empty()) {
      // A second submission of an ended job is ignored.
      book.on_batsim_event(submitted(ended[rng() % ended.size()], 1));
    }
    if (step % 1000 == 0) {
      for (const auto& [id, v] : live) {
        const JobBook::State* s = book.find(id);
        ASSERT_NE(s, nullptr) << "step " << step;
        EXPECT_EQ(*s, v.first);
        EXPECT_EQ(book.requested(id), v.second);
      }
      for (size_t i = 0; i < ended.size(); i += 7) {
        const JobBook::State* s = book.find(ended[i]);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(*s, JobBook::State::kDone);
        EXPECT_EQ(book.requested(ended[i]), 0);
      }
      for (size_t i = next; i < ids.size() && i < next + 50; ++i) EXPECT_EQ(book.find(ids[i]), nullptr);
      EXPECT_EQ(book.submitted(), next);
      EXPECT_EQ(book.done(), done);
    }
  }
  EXPECT_GT(done, 20000u);
}

TEST(JobBook, AllDoneOnlyAfterTheLastSubmissionEnds) {
  JobBook book;
  book.on_batsim_event(submitted("w0!1", 2));
  protocol::Notify no_more;
  no_more.type = "no_more_static_job_to_submit";
  book.on_batsim_event(Event{protocol::Nanos::zero(), no_more, {}});
  EXPECT_FALSE(book.all_done());
  book.on_batsim_event(completed("w0!1"));
  EXPECT_TRUE(book.all_done());
}

}  // namespace
}  // namespace vtime::broker
