// Unit tests of vtime/recorder/tools.h on the fixtures of tests/data/traces (make_fixtures.py)
// and on damaged copies made here. The cml_* fixtures are real Batsim 4.2.1 transcripts, so
// their jobs-csv export is checked against what real Batsim wrote.
#include <vtime/recorder/tools.h>
#include <vtime/recorder/trace.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace vtime::recorder;
using namespace vtime::recorder::tools;

namespace {

const std::string kSrc = VTIME_SOURCE_DIR;
const std::string kTraces = kSrc + "/tests/data/traces/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A private scratch directory per test.
class Tools : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vtime-tools-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Rewrites a fixture through TraceWriter, editing records (return false to drop one), so the
  // copy is a sound trace (right seq, counts and digest) that differs only where told.
  std::string rewrite(const std::string& fixture, const std::string& name, const std::function<bool(Json&)>& edit,
                      const std::function<void(Json&)>& edit_header = {}) {
    std::string err;
    auto r = TraceReader::open(kTraces + fixture, &err);
    EXPECT_TRUE(r) << err;
    Json h = r->header();
    if (edit_header) edit_header(h);
    std::string out = path(name);
    auto w = TraceWriter::create(out, h, &err);
    EXPECT_TRUE(w) << err;
    Json rec;
    while (r->next(rec)) {
      if (edit(rec)) w->write(rec);
    }
    w->finish(r->trailer()->value("status", ""), r->trailer()->value("exit_code", 0), r->trailer()->value("t", int64_t{0}));
    return out;
  }

  std::string dir_;
};

struct Outcome {
  int rc;
  std::string out, err;
};

template <class F>
Outcome capture(F f) {
  std::ostringstream out, err;
  int rc = f(out, err);
  return {rc, out.str(), err.str()};
}

Outcome run_show(const std::string& p, const ShowOptions& o = {}) {
  return capture([&](auto& out, auto& err) { return show(p, o, out, err); });
}
Outcome run_validate(const std::string& p) {
  return capture([&](auto& out, auto& err) { return validate(p, out, err); });
}
Outcome run_stats_json(const std::string& p) {
  return capture([&](auto& out, auto& err) { return stats(p, StatsOptions{true}, out, err); });
}
Outcome run_export(const std::string& p, ExportFormat f, const std::string& output = "-") {
  return capture([&](auto& out, auto& err) { return export_trace(p, ExportOptions{f, output}, out, err); });
}
Outcome run_diff(const std::string& a, const std::string& b, const DiffOptions& o = {}) {
  return capture([&](auto& out, auto& err) { return diff(a, b, o, out, err); });
}

// ---- show --------------------------------------------------------------------------------------

TEST_F(Tools, ShowSummarisesEveryRecordType) {
  Outcome r = run_show(kTraces + "small.trace");
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 48u);  // header, 46 records, trailer
  EXPECT_NE(lines[0].find("header   vtime-trace v1 by vtime 0.1.0, command run"), std::string::npos);
  EXPECT_NE(r.out.find("      8         0.000000 msg      from_batsim now=0.000000 JOB_SUBMITTED(w0!1) "
                       "JOB_SUBMITTED(w0!2) JOB_SUBMITTED(w0!3)"),
            std::string::npos);
  EXPECT_NE(r.out.find("decision EXECUTE_JOB w0!2 alloc 0-1 (msg 28)"), std::string::npos);
  EXPECT_NE(r.out.find("timer    arm #1 0.1 cond deadline 1.000000"), std::string::npos);
  EXPECT_NE(r.out.find("timer    cancel #2 1.* timerfd deadline 5.000000"), std::string::npos);
  EXPECT_NE(r.out.find("advance  1.000000 -> 6.000000 message woke 0"), std::string::npos);
  EXPECT_NE(r.out.find("clock    proc 0 reads 5 digest 00000000000000b2"), std::string::npos);
  EXPECT_NE(r.out.find("process  spawn proc 1 parent 0"), std::string::npos);
  EXPECT_NE(lines.back().find("trailer  ok exit 0, 46 records"), std::string::npos);
}

TEST_F(Tools, ShowFiltersByTypeAndSeq) {
  ShowOptions o;
  o.types = {"decision", "timer"};
  o.from = 16;
  o.to = 29;
  Outcome r = run_show(kTraces + "small.trace", o);
  ASSERT_EQ(r.rc, kTraceOk);
  auto lines = lines_of(r.out);
  // 16 fire #1, 20 decision w0!1, 21 cancel #2, 29 decision w0!2.
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0].substr(0, 7), "     16");
  EXPECT_EQ(lines[3].substr(0, 7), "     29");
}

TEST_F(Tools, ShowJsonGivesBackTheLinesVerbatim) {
  ShowOptions o;
  o.json = true;
  Outcome r = run_show(kTraces + "small.trace", o);
  ASSERT_EQ(r.rc, kTraceOk);
  EXPECT_EQ(r.out, read_file(kTraces + "small.trace"));
}

TEST_F(Tools, ShowsANonUtf8MessageAsHexAndTheError) {
  Outcome r = run_show(kTraces + "bad_reply.trace");
  ASSERT_EQ(r.rc, kTraceOk);
  EXPECT_NE(r.out.find("from_scheduler not UTF-8 (3 bytes): hex 7bff7d"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error    bad-reply (exit 3): the scheduler's reply"), std::string::npos);
  EXPECT_NE(r.out.find("trailer  bad-reply exit 3"), std::string::npos);
}

// ---- stats -------------------------------------------------------------------------------------

TEST_F(Tools, StatsCountRecordsJobsTimersAndAdvances) {
  Outcome r = run_stats_json(kTraces + "small.trace");
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  Json s = Json::parse(r.out);
  EXPECT_EQ(s["records"], 46);
  EXPECT_EQ(s["types"]["msg"], 28);
  EXPECT_EQ(s["types"]["decision"], 3);
  EXPECT_EQ(s["messages"]["from_batsim"], 7);
  EXPECT_EQ(s["messages"]["to_batsim"], 7);
  EXPECT_EQ(s["span"]["last_ns"], 7000000000LL);
  EXPECT_EQ(s["decisions"]["EXECUTE_JOB"], 2);
  EXPECT_EQ(s["decisions"]["REJECT_JOB"], 1);
  EXPECT_EQ(s["jobs"], Json::parse(R"({"submitted":3,"started":2,"completed":2,"rejected":1,"killed":0})"));
  EXPECT_EQ(s["timers"]["arm"], 2);
  EXPECT_EQ(s["timers"]["fire"], 1);
  EXPECT_EQ(s["timers"]["cancel"], 1);
  EXPECT_EQ(s["timers"]["by_wait"]["timerfd"], Json::parse(R"({"arm":1,"fire":0,"cancel":1})"));
  EXPECT_EQ(s["advances"]["message"], 3);
  EXPECT_EQ(s["advances"]["timer"], 1);
  EXPECT_EQ(s["processes"].size(), 2u);
  EXPECT_EQ(s["processes"][1]["status"], "exited 0");
  EXPECT_EQ(s["trailer"]["status"], "ok");
  EXPECT_TRUE(s["problems"].empty());
}

TEST_F(Tools, StatsTextNamesTheEnding) {
  Outcome r = capture([&](auto& out, auto& err) { return stats(kTraces + "bad_reply.trace", {}, out, err); });
  ASSERT_EQ(r.rc, kTraceOk);
  EXPECT_NE(r.out.find("ended           bad-reply (exit code 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error           bad-reply: the scheduler's reply"), std::string::npos);
  EXPECT_NE(r.out.find("(1 unparsable)"), std::string::npos);
}

// ---- validate ----------------------------------------------------------------------------------

TEST_F(Tools, ValidateAcceptsEveryFixture) {
  for (const char* f : {"small.trace", "bad_reply.trace", "cml_basic.trace", "cml_vs_completion.trace"}) {
    Outcome r = run_validate(kTraces + f);
    EXPECT_EQ(r.rc, kTraceOk) << f << ": " << r.out << r.err;
    EXPECT_NE(r.out.find(": ok: "), std::string::npos) << r.out;
  }
}

TEST_F(Tools, ValidateReportsACutTraceAndWhatWasRecovered) {
  std::string text = read_file(kTraces + "small.trace");
  // Cut in the middle of line 31 (seq 30): 29 records before it are whole.
  size_t pos = 0;
  for (int i = 0; i < 30; ++i) pos = text.find('\n', pos) + 1;
  write_file(path("cut.trace"), text.substr(0, pos + 25));
  Outcome r = run_validate(path("cut.trace"));
  EXPECT_EQ(r.rc, kTraceProblems);
  EXPECT_NE(r.out.find("VT005 line 31: the last line is cut short"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("VT007: no trailer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cut short: 29 records recovered"), std::string::npos) << r.out;
  // The other commands still work on what was recovered, and say so in their exit code.
  Outcome s = run_show(path("cut.trace"));
  EXPECT_EQ(s.rc, kTraceProblems);
  EXPECT_EQ(lines_of(s.out).size(), 30u);
  EXPECT_NE(s.err.find("VT007"), std::string::npos);
}

TEST_F(Tools, ValidateReportsGarbageAndStopsThere) {
  std::string text = read_file(kTraces + "small.trace");
  size_t pos = 0;
  for (int i = 0; i < 12; ++i) pos = text.find('\n', pos) + 1;
  text.replace(pos, 4, "\x01\xfe\x02#");  // line 13 starts with garbage
  write_file(path("garbage.trace"), text);
  Outcome r = run_validate(path("garbage.trace"));
  EXPECT_EQ(r.rc, kTraceProblems);
  EXPECT_NE(r.out.find("VT004 line 13: not valid JSON"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("damaged: 11 records recovered"), std::string::npos) << r.out;
}

TEST_F(Tools, ValidateRefusesAnotherVersionAndNonTraces) {
  std::string text = read_file(kTraces + "small.trace");
  text.replace(text.find("\"version\":1"), 11, "\"version\":2");
  write_file(path("v2.trace"), text);
  Outcome r = run_validate(path("v2.trace"));
  EXPECT_EQ(r.rc, kTraceUnreadable);
  EXPECT_NE(r.err.find("VT003"), std::string::npos) << r.err;

  r = run_validate(path("missing.trace"));
  EXPECT_EQ(r.rc, kTraceUnreadable);
  EXPECT_NE(r.err.find("VT001"), std::string::npos) << r.err;

  write_file(path("notes.txt"), "hello\n");
  r = run_validate(path("notes.txt"));
  EXPECT_EQ(r.rc, kTraceUnreadable);
  EXPECT_NE(r.err.find("VT002"), std::string::npos) << r.err;
}

TEST_F(Tools, ValidateCatchesATamperedRecordAndABadField) {
  // Same length, still valid JSON: only the trailer's digest can tell.
  std::string text = read_file(kTraces + "small.trace");
  text.replace(text.find("\"reads\":5"), 9, "\"reads\":6");
  write_file(path("tampered.trace"), text);
  Outcome r = run_validate(path("tampered.trace"));
  EXPECT_EQ(r.rc, kTraceProblems);
  EXPECT_NE(r.out.find("VT008 line 48: the trailer does not match"), std::string::npos) << r.out;

  // A sound file (right digest) whose timer record has an unknown op.
  std::string bad = rewrite("small.trace", "badfield.trace", [](Json& rec) {
    if (rec["type"] == "timer" && rec["id"] == 2 && rec["op"] == "cancel") rec["op"] = "explode";
    return true;
  });
  r = run_validate(bad);
  EXPECT_EQ(r.rc, kTraceProblems);
  EXPECT_NE(r.out.find("VT010 line 22: a timer record needs \"op\""), std::string::npos) << r.out;
}

TEST_F(Tools, CompressedTracesReadTheSameAndACutOneIsReported) {
  Outcome c = capture([&](auto& out, auto& err) { return compress(kTraces + "cml_basic.trace", path("c.trace.zst"), out, err); });
  ASSERT_EQ(c.rc, kTraceOk) << c.err;
  EXPECT_EQ(run_show(path("c.trace.zst")).out, run_show(kTraces + "cml_basic.trace").out);
  EXPECT_EQ(run_validate(path("c.trace.zst")).rc, kTraceOk);
  // Compressing a compressed trace would make garbage: refused.
  Outcome again = capture([&](auto& out, auto& err) { return compress(path("c.trace.zst"), "", out, err); });
  EXPECT_EQ(again.rc, kTraceUsage);
  EXPECT_NE(again.err.find("already compressed"), std::string::npos);

  std::string z = read_file(path("c.trace.zst"));
  write_file(path("cut.trace.zst"), z.substr(0, z.size() * 2 / 3));
  Outcome r = run_validate(path("cut.trace.zst"));
  EXPECT_EQ(r.rc, kTraceProblems);
  EXPECT_NE(r.out.find("VT009"), std::string::npos) << r.out;
}

// ---- export jobs-csv ---------------------------------------------------------------------------

TEST_F(Tools, JobsCsvOfRealBatsimTranscriptsEqualsRealBatsimsOutput) {
  for (auto [trace, out] : {std::pair{"cml_basic.trace", "nonet_cml_basic"}, {"cml_vs_completion.trace", "nonet_cml_vs_completion"}}) {
    Outcome r = run_export(kTraces + trace, ExportFormat::jobs_csv);
    ASSERT_EQ(r.rc, kTraceOk) << r.err;
    EXPECT_EQ(r.out, read_file(kSrc + "/tests/data/batsim-4.2.1/outputs/" + out + "/out_jobs.csv")) << trace;
  }
}

TEST_F(Tools, JobsCsvPutsAJobEndedByALaterStampedDecisionBeforeTheRejection) {
  // small.trace: the reply at 6 s starts job 2 (walltime 1 s) and rejects job 3 stamped 7 s; the
  // simulator ends job 2 at 7 s first, so its row comes before job 3's.
  Outcome r = run_export(kTraces + "small.trace", ExportFormat::jobs_csv);
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "1,w0,delay5,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,1.000000,5.000000,6.000000,"
                      "1.000000,6.000000,1.200000,0,-1.000000,\"\"");
  EXPECT_EQ(lines[2], "2,w0,delay3,0.000000,2,1.000000,0,COMPLETED_WALLTIME_REACHED,6.000000,1.000000,7.000000,"
                      "6.000000,7.000000,7.000000,0-1,-1.000000,\"\"");
  EXPECT_EQ(lines[3], "3,w0,delay5,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,\"\"");
}

TEST_F(Tools, ExportWritesToAFileAndReportsAnUnwritableOne) {
  Outcome r = run_export(kTraces + "small.trace", ExportFormat::jobs_csv, path("jobs.csv"));
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  EXPECT_EQ(read_file(path("jobs.csv")), run_export(kTraces + "small.trace", ExportFormat::jobs_csv).out);
  r = run_export(kTraces + "small.trace", ExportFormat::jobs_csv, path("no/such/dir/jobs.csv"));
  EXPECT_EQ(r.rc, kTraceOutputFailed);
  EXPECT_NE(r.err.find("cannot create"), std::string::npos);
}

// ---- export perfetto ---------------------------------------------------------------------------

TEST_F(Tools, PerfettoHoldsEveryJobEveryMessageAndEveryTimer) {
  Outcome r = run_export(kTraces + "small.trace", ExportFormat::perfetto);
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  Json doc = Json::parse(r.out);
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::set<int64_t> msg_seqs;
  std::map<std::string, std::set<int>> job_tracks;
  int begins = 0, ends = 0;
  std::set<std::string> names;
  for (const Json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid"));
    std::string ph = e["ph"];
    if (ph != "M") {
      ASSERT_TRUE(e["ts"].is_number()) << e.dump();
    }
    if (ph == "i" && e["cat"] == "msg") {
      msg_seqs.insert(e["args"]["seq"].get<int64_t>());
      EXPECT_TRUE(e["args"].contains("bytes"));
    }
    if (ph == "X") {
      job_tracks[e["name"]].insert(e["tid"].get<int>());
      if (e["name"] == "w0!2") {
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 6e6);
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1e6);
      }
    }
    if (ph == "b") ++begins;
    if (ph == "e") ++ends;
    if (ph == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"]);
  }
  // Every msg record (28 of them) is there, by seq.
  EXPECT_EQ(msg_seqs.size(), 28u);
  EXPECT_TRUE(msg_seqs.count(2) && msg_seqs.count(45));
  // Every job that ran is on each of its machines; the rejected one is nowhere.
  EXPECT_EQ(job_tracks["w0!1"], (std::set<int>{0}));
  EXPECT_EQ(job_tracks["w0!2"], (std::set<int>{0, 1}));
  EXPECT_FALSE(job_tracks.count("w0!3"));
  EXPECT_EQ(begins, 2);
  EXPECT_EQ(ends, 2);
  EXPECT_TRUE(names.count("host0 (0)") && names.count("host1 (1)") && names.count("from_scheduler"));
}

// ---- export gantt ------------------------------------------------------------------------------

TEST_F(Tools, GanttDrawsAPngOrAnSvgWithGnuplot) {
  Outcome r = run_export(kTraces + "cml_basic.trace", ExportFormat::gantt, path("g.png"));
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  EXPECT_EQ(read_file(path("g.png")).substr(0, 8), "\x89PNG\r\n\x1a\n");
  r = run_export(kTraces + "small.trace", ExportFormat::gantt, path("g.svg"));
  ASSERT_EQ(r.rc, kTraceOk) << r.err;
  std::string svg = read_file(path("g.svg"));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("w0!2"), std::string::npos);  // few jobs: labelled

  r = run_export(kTraces + "small.trace", ExportFormat::gantt, path("g.jpg"));
  EXPECT_EQ(r.rc, kTraceUsage);
  r = run_export(kTraces + "bad_reply.trace", ExportFormat::gantt, path("none.png"));
  EXPECT_EQ(r.rc, kTraceOutputFailed);
  EXPECT_NE(r.err.find("nothing to draw"), std::string::npos);
}

TEST_F(Tools, GanttWithoutGnuplotIsAClearError) {
  std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", dir_.c_str(), 1);  // an empty directory: no gnuplot
  Outcome r = run_export(kTraces + "small.trace", ExportFormat::gantt, path("g.png"));
  setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(r.rc, kTraceOutputFailed);
  EXPECT_NE(r.err.find("cannot run gnuplot"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gnuplot-nox"), std::string::npos);
}

// ---- diff --------------------------------------------------------------------------------------

TEST_F(Tools, DiffOfATraceWithItselfAndItsCompressedCopyIsIdentical) {
  Outcome r = run_diff(kTraces + "small.trace", kTraces + "small.trace");
  EXPECT_EQ(r.rc, kTraceOk);
  EXPECT_NE(r.out.find("identical: 46 records"), std::string::npos) << r.out;
  ASSERT_TRUE(compress_trace(kTraces + "small.trace", path("s.zst"), nullptr));
  EXPECT_EQ(run_diff(kTraces + "small.trace", path("s.zst")).rc, kTraceOk);
}

TEST_F(Tools, DiffFindsTheFirstDifferenceInsideAMessageAndAlignsDecisions) {
  // Job 1 goes onto resource 1 instead of 0: the scheduler's reply, its decision, the answer
  // to Batsim and Batsim's JOB_COMPLETED all change.
  auto move = [](std::string s) {
    for (auto [from, to] : {std::pair<std::string, std::string>{"\"alloc\": \"0\"", "\"alloc\": \"1\""},
                            {"\"alloc\":\"0\"", "\"alloc\":\"1\""}}) {
      for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p)) s.replace(p, from.size(), to);
    }
    return s;
  };
  std::string b = rewrite(
      "small.trace", "moved.trace",
      [&](Json& rec) {
        if (rec["type"] == "msg") rec["bytes"] = move(rec["bytes"]);
        if (rec["type"] == "decision" && rec["job"] == "w0!1") rec["event"]["data"]["alloc"] = "1";
        return true;
      },
      [](Json& h) { h["scheduler"][4] = "2"; });
  Outcome r = run_diff(kTraces + "small.trace", b, DiffOptions{true, false, false, 10});
  EXPECT_EQ(r.rc, kTraceProblems) << r.err;
  EXPECT_NE(r.out.find("$.scheduler[4]: \"1\" vs \"2\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first difference at seq 19:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at bytes$.events[0].data.alloc: \"0\" vs \"1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decisions: 3 vs 3: 2 same, 1 differ (0 in time, 1 in content)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EXECUTE_JOB w0!1: $.event.data.alloc \"0\" vs \"1\""), std::string::npos) << r.out;
  // The job table lists only job 1, with its two allocations.
  auto lines = lines_of(r.out);
  auto row = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("w0!1 ", 0) == 0; });
  ASSERT_NE(row, lines.end()) << r.out;
  EXPECT_NE(row->find("1.000000       1.000000              0       6.000000       6.000000              0  0            1"),
            std::string::npos)
      << *row;
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("w0!", 0) == 0; }), 1);
}

TEST_F(Tools, DiffAlignsDecisionsByJobWhenSeqsShift) {
  // B makes the same decisions but has one more clock record early: every later seq shifts by
  // one, yet no decision differs. Job 2 also starts one second later in B.
  bool added = false;
  std::string b = rewrite("small.trace", "shifted.trace", [&](Json& rec) {
    if (rec["type"] == "decision" && rec["job"] == "w0!2") rec["t"] = 7000000000LL;
    if (!added && rec["type"] == "clock") {
      added = true;  // dropping the first clock record shifts everything after it
      return false;
    }
    return true;
  });
  DiffOptions o;
  o.json = true;
  o.jobs = true;
  o.all_jobs = true;
  Outcome r = run_diff(kTraces + "small.trace", b, o);
  EXPECT_EQ(r.rc, kTraceProblems);
  Json j = Json::parse(r.out);
  EXPECT_FALSE(j["identical"]);
  EXPECT_EQ(j["records"]["a"], 46);
  EXPECT_EQ(j["records"]["b"], 45);
  EXPECT_EQ(j["records"]["first_difference"]["seq"], 6);
  EXPECT_EQ(j["decisions"]["same"], 2);
  EXPECT_EQ(j["decisions"]["differ_in_time"], 1);
  EXPECT_EQ(j["decisions"]["listed"][0]["job"], "w0!2");
  EXPECT_EQ(j["jobs"]["table"].size(), 3u);  // --all
  EXPECT_EQ(j["jobs"]["differ"], 0);         // the messages (what Batsim did) are the same
}

TEST_F(Tools, UnreadableInputsGiveExitCode3) {
  EXPECT_EQ(run_show(path("nope.trace")).rc, kTraceUnreadable);
  EXPECT_EQ(run_stats_json(path("nope.trace")).rc, kTraceUnreadable);
  EXPECT_EQ(run_export(path("nope.trace"), ExportFormat::perfetto).rc, kTraceUnreadable);
  EXPECT_EQ(run_diff(kTraces + "small.trace", path("nope.trace")).rc, kTraceUnreadable);
}

}  // namespace
