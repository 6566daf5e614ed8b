// Walks every message of every real Batsim 4.2.1 transcript (tests/data/batsim-4.2.1): Batsim's
// messages must parse and re-serialise byte-for-byte; schedulers' replies must parse and
// re-serialise to the same JSON (numbers compared at nanosecond resolution), except the replies
// the capture proxy made invalid on purpose, which must be rejected with a precise error.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "vtime/protocol/codec.h"

using nlohmann::json;
using namespace vtime::protocol;
namespace fs = std::filesystem;

namespace {

fs::path transcripts_dir() { return fs::path(VTIME_TEST_DATA_DIR) / "batsim-4.2.1" / "transcripts"; }

// Replies real Batsim aborted on for structural reasons: (transcript, seq) -> expected error.
const std::map<std::pair<std::string, int>, std::string> kRejected = {
    {{"malformed_json", 1}, "message is not valid JSON: parse error at line 1, column 74"},
    {{"empty_reply", 1}, "message is empty (0 bytes)"},
    {{"missing_events", 1}, "message: missing field 'events'"},
    {{"now_string", 1}, "message: field 'now' must be a number of seconds (got string \"10.0006\")"},
    {{"ts_gt_now", 1}, "event 0 (EXECUTE_JOB): timestamp 11.000600 is later than the message's now 10.000600"},
    {{"cml_extra_key", 0}, "event 0 (CALL_ME_LATER): 'data' must have exactly 1 member (Batsim 4.2.1 aborts otherwise), got 2: 'timestamp', 'id'"},
};

// JSON equality with numbers compared after rounding to nanoseconds, objects as maps.
bool same(const json& a, const json& b, std::string& path) {
  if (a.is_number() && b.is_number()) {
    if (std::llround(a.get<double>() * 1e9) == std::llround(b.get<double>() * 1e9)) return true;
    path += " (" + a.dump() + " vs " + b.dump() + ")";
    return false;
  }
  if (a.type() != b.type()) { path += " (type)"; return false; }
  if (a.is_object()) {
    if (a.size() != b.size()) { path += " (member count)"; return false; }
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) { path += "." + it.key() + " (missing)"; return false; }
      std::string sub = path + "." + it.key();
      if (!same(it.value(), b.at(it.key()), sub)) { path = sub; return false; }
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) { path += " (array size)"; return false; }
    for (size_t i = 0; i < a.size(); ++i) {
      std::string sub = path + "[" + std::to_string(i) + "]";
      if (!same(a[i], b[i], sub)) { path = sub; return false; }
    }
    return true;
  }
  if (a == b) return true;
  path += " (" + a.dump() + " vs " + b.dump() + ")";
  return false;
}

std::vector<std::string> transcript_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(transcripts_dir()))
    if (e.path().extension() == ".jsonl") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class Transcript : public ::testing::TestWithParam<std::string> {};

TEST_P(Transcript, EveryMessageParsesAndRoundTrips) {
  std::ifstream in(transcripts_dir() / (GetParam() + ".jsonl"));
  ASSERT_TRUE(in) << "cannot open transcript " << GetParam();
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    json rec = json::parse(line);
    int seq = rec.at("seq").get<int>();
    std::string dir = rec.at("dir").get<std::string>();
    std::string raw = rec.at("raw").get<std::string>();
    SCOPED_TRACE(GetParam() + " seq " + std::to_string(seq) + " " + dir);
    ++n;
    if (dir == "batsim->sched") {
      auto m = parse_message(raw, Direction::to_scheduler);
      ASSERT_TRUE(m) << m.error();
      EXPECT_EQ(serialise(*m), raw);  // byte-for-byte: same key order, same "%f" numbers
      continue;
    }
    ASSERT_EQ(dir, "sched->batsim");
    auto m = parse_message(raw, Direction::to_batsim);
    auto bad = kRejected.find({GetParam(), seq});
    if (bad != kRejected.end()) {
      ASSERT_FALSE(m) << "accepted a reply Batsim rejected: " << raw;
      EXPECT_NE(m.error().find(bad->second), std::string::npos) << m.error();
      continue;
    }
    ASSERT_TRUE(m) << m.error();
    std::string path = "$";
    EXPECT_TRUE(same(json::parse(raw), json::parse(serialise(*m)), path)) << "differs at " << path;
  }
  EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(Batsim421, Transcript, ::testing::ValuesIn(transcript_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(Transcripts, AllReferenceTranscriptsArePresent) {
  EXPECT_EQ(transcript_names().size(), 34u);
  for (const auto& [key, why] : kRejected)
    EXPECT_TRUE(fs::exists(transcripts_dir() / (key.first + ".jsonl"))) << key.first;
}

}  // namespace
