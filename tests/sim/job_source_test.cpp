// The streaming reader (open_workload) against the whole-file reader (parse_workload): the same
// jobs in the same batches for every layout, the same message for every broken file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "vtime/sim/workload.h"

using namespace vtime::sim;

namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/vtime-job-source-XXXXXX";
    int fd = mkstemp(name);
    close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every batch as "t: id json | id json", in order.
std::vector<std::string> batches(JobSource& s) {
  std::vector<std::string> out;
  while (auto t = s.next_subtime()) {
    auto b = s.next_batch();
    EXPECT_TRUE(b) << b.error();
    if (!b) break;
    std::string line = std::to_string(t->ns()) + ":";
    for (const auto& j : *b) line += " " + j.id + " " + j.json.text + " |";
    out.push_back(line);
  }
  return out;
}

// Opens `text` both ways; both must agree (success with the same batches, or the same error).
std::string both(const std::string& text) {
  TempFile f(text);
  auto whole = load_workload(f.path(), "w0");
  auto streamed = open_workload(f.path(), "w0");
  EXPECT_EQ(bool(whole), bool(streamed)) << text;
  if (!whole || !streamed) {
    std::string a = whole ? "(accepted)" : whole.error(), b = streamed ? "(accepted)" : streamed.error();
    EXPECT_EQ(a, b) << text;
    // Messages name the file: compare without its random name.
    auto at = b.find(f.path());
    return at == std::string::npos ? b : b.replace(at, f.path().size(), "wl.json");
  }
  auto mem = memory_source(std::move(*whole));
  EXPECT_EQ(batches(*mem), batches(**streamed)) << text;
  EXPECT_EQ((*streamed)->info().profiles_json.text, mem->info().profiles_json.text);
  EXPECT_EQ((*streamed)->info().nb_res, mem->info().nb_res);
  return "(accepted)";
}

const std::string kProfiles = R"("profiles": {"d": {"type": "delay", "delay": 1}, "p": {"type": "parallel_homogeneous", "cpu": 1, "com": 8}})";

}  // namespace

TEST(JobSource, EveryLayoutGivesTheSameBatches) {
  const std::string jobs =
      R"("jobs": [{"id": "b", "subtime": 5, "res": 1, "profile": "d"}, {"id": "a", "subtime": 5, "res": 2, "profile": "d", "x": "],}{\"["},
                  {"id": 3, "subtime": 0.5, "walltime": -1, "res": 1, "profile": "d"}, {"id": "c", "subtime": 0, "res": 1, "profile": "d"}])";
  EXPECT_EQ(both("{" + jobs + ", " + kProfiles + ", \"nb_res\": 4}"), "(accepted)");
  EXPECT_EQ(both("{\"nb_res\": 4,\n" + kProfiles + ",\n\t" + jobs + "\r\n}\n"), "(accepted)");
  EXPECT_EQ(both("{\"meta\": {\"a\": [1, {\"b\": \"}\"}]}, " + kProfiles + ", " + jobs + ", \"z\": null}"), "(accepted)");
  EXPECT_EQ(both("{\"jobs\": [], " + kProfiles + "}"), "(accepted)");
  // A key given twice: the whole-file reader decides (nlohmann keeps the last).
  EXPECT_EQ(both("{\"nb_res\": 1, \"nb_res\": 2, " + jobs + ", " + kProfiles + "}"), "(accepted)");
}

TEST(JobSource, BatchesAreInSubmissionThenIdOrder) {
  TempFile f(R"({"jobs": [{"id": "z", "subtime": 9, "res": 1, "profile": "d"}, {"id": "y", "subtime": 1, "res": 1, "profile": "d"},
                          {"id": "x", "subtime": 9, "res": 1, "profile": "d"}], "profiles": {"d": {"type": "delay", "delay": 1}}})");
  auto s = open_workload(f.path(), "w0");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ((*s)->size(), 3u);
  auto all = batches(**s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NE(all[0].find("w0!y"), std::string::npos);
  EXPECT_LT(all[1].find("w0!x"), all[1].find("w0!z"));
  // Slots are file positions; every id of the workload has one, whatever has been read.
  EXPECT_EQ((*s)->slot("z"), 0u);
  EXPECT_EQ((*s)->slot("x"), 2u);
  EXPECT_FALSE((*s)->slot("w"));
  EXPECT_EQ((*s)->subtime(1), Nanos::seconds(1));
  EXPECT_FALSE((*s)->next_subtime());
}

TEST(JobSource, BrokenFilesGetTheWholeFileReadersMessage) {
  auto job = [](const std::string& id, const std::string& extra = "") {
    return R"({"id": ")" + id + R"(", "subtime": 0, "res": 1, "profile": "d")" + extra + "}";
  };
  EXPECT_EQ(both("{\"jobs\": [" + job("1") + ", " + job("1") + "], " + kProfiles + "}"),
            "workload 'wl.json': job 1 (id '1'): duplicate job id");
  // Three of a kind: the second is the fault. A duplicate before a broken job comes first.
  EXPECT_EQ(both("{\"jobs\": [" + job("1") + ", " + job("2") + ", " + job("1") + ", " + job("1") + "], " + kProfiles + "}"),
            "workload 'wl.json': job 2 (id '1'): duplicate job id");
  EXPECT_EQ(both("{\"jobs\": [" + job("1") + ", " + job("1") + ", " + job("3", ", \"res\": 0") + "], " + kProfiles + "}"),
            "workload 'wl.json': job 1 (id '1'): duplicate job id");
  EXPECT_EQ(both("{\"jobs\": [" + job("1", ", \"walltime\": 0") + "], " + kProfiles + "}"),
            "workload 'wl.json': job 0 (id '1'): field 'walltime' must be -1 (none) or strictly positive (got number 0)");
  EXPECT_EQ(both(R"({"jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}], )" + kProfiles + "}"),
            "workload 'wl.json': job 0 (id '1'): profile 'p': a parallel task that communicates needs SimGrid's "
            "flow-level network sharing, which vtime sim does not model (com = 8 bytes); use --batsim with real Batsim");
  EXPECT_EQ(both("{\"jobs\": [" + job("1") + "]}"), "workload 'wl.json': missing object 'profiles'");
  EXPECT_EQ(both("{\"jobs\": 5, " + kProfiles + "}"), "workload 'wl.json': missing array 'jobs'");
  EXPECT_EQ(both("[1, 2]"), "workload 'wl.json': must be a JSON object with 'jobs' and 'profiles'");
  // Syntax errors: nlohmann's own message, line and column included.
  const std::vector<std::string> broken = {std::string("{"), "{\"jobs\": [" + job("1") + ",], " + kProfiles + "}", "{\"jobs\": [" + job("1"),
        "{\"jobs\": [" + job("1") + "] " + kProfiles + "}", "{\"jobs\": [{\"id\": \"1\" \"subtime\": 0}], " + kProfiles + "}",
        "{\"jobs\": [" + job("1") + "], " + kProfiles + "} x", "{\"a\": tru, " + kProfiles + "}", "{\"a\": , \"b\": 1}",
        "{\"jobs\": [" + job("1") + "}, " + kProfiles + "}", ""};
  for (const std::string& text : broken) {
    std::string msg = both(text);
    EXPECT_NE(msg.find("is not valid JSON: parse error"), std::string::npos) << text << " -> " << msg;
  }
  EXPECT_FALSE(open_workload("/nonexistent.json", "w0"));
}

// Found by fuzz_workload: the streaming reader counted other members before "jobs" in a job's
// index, and reported a job's or a profile's fault before a syntax error later in the file.
TEST(JobSource, AgreesWithTheWholeFileReaderOnOrderAndIndex) {
  auto job = [](const std::string& id, const std::string& profile) {
    return R"({"id": ")" + id + R"(", "subtime": 0, "res": 1, "profile": ")" + profile + "\"}";
  };
  EXPECT_EQ(both("{\"nb_res\": 2, \"jobs\": [" + job("1", "d") + ", " + job("2", "x") + "], " + kProfiles + "}"),
            "workload 'wl.json': job 1 (id '2'): profile 'x' is not defined in 'profiles'");
  std::string msg = both("{\"jobs\": [" + job("1", "x") + ", {\"id\": -}], " + kProfiles + "}");
  EXPECT_NE(msg.find("is not valid JSON"), std::string::npos) << msg;
  msg = both(R"({"profiles": {"d": {"delay": 1}}, "jobs": [{"id": "1", "res": 1 : 2}]})");
  EXPECT_NE(msg.find("is not valid JSON"), std::string::npos) << msg;
  // A syntax error in a job, then a number beyond a double in a member (which the streaming reader
  // reads first): the syntax error, as a whole parse says.
  msg = both("{\"jobs\": [{\"id\": \"1\xff\"}], \"x\": 1e3083, " + kProfiles + "}");
  EXPECT_NE(msg.find("is not valid JSON"), std::string::npos) << msg;
  // A NUL byte: nlohmann reads it as the end of the input, so a piece cut there parsed alone.
  msg = both("{\"nb_res\": 2" + std::string(2, '\0') + ", \"jobs\": [" + job("1", "d") + "], " + kProfiles + "}");
  EXPECT_NE(msg.find("is not valid JSON"), std::string::npos) << msg;
}
