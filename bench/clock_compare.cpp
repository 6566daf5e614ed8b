// bench_clock_compare: clock reads natively, through the vtime shim and through Debian's
// libfaketime, in one run, as ratios (issue 2, first benchmark; target: clock_gettime through the
// shim at least 5x faster than native).
//
// It runs bench_clock_reads in three modes, interleaved over several rounds (so that a change in
// the machine's load hits every mode alike):
//   native    plain, no preload: glibc answers from the vDSO
//   shim      under a session this driver creates and drives with the controller loop of
//             `vtime exec` (VTIME_SESSION + LD_PRELOAD=libvtime-shim.so): the shim answers from
//             shared memory
//   faketime  LD_PRELOAD=libfaketime.so.1 FAKETIME="@2024-01-01 00:00:00"
// reads "ns_per_call" of every repetition from the JSON output, checks that each mode really saw
// the clock it should (the shim: frozen at the session epoch), and prints the median and the
// minimum per mode and their ratios. The target is judged on the ratio of the minima: on a shared
// machine other load only ever adds time, and it moved the native median by up to 50% between
// runs while the minima stayed within a few percent.
//
// Usage: bench_clock_compare [--rounds N] [--repetitions N] [--min-time S]
// Environment: VTIME_SHIM (default: the shim built with this benchmark), FAKETIME_LIB (default: Debian's /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1).
// Exit status: 0 all targets met, 1 a target missed, 2 a run failed or ran in the wrong mode.
#include "child_process.h"
#include "raw_clock.h"
#include "stats.h"
#include "session_driver.h"

#include <vtime/session.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr const char* kDefaultFaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
constexpr long long kSessionEpochS = 1704067200;  // vtime's default epoch: 2024-01-01T00:00:00Z
constexpr int64_t kTotalLimitNs = 55LL * 1000000000LL;  // every run together stays under a minute

struct Mode {
  const char* name;
  std::map<std::string, std::vector<double>> ns_per_call;  // benchmark -> ns per call, each repetition
  nlohmann::json context;
};

std::string self_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// Parses Google Benchmark's JSON: the ns_per_call of every repetition of every benchmark.
bool parse(const std::string& out, Mode& m) {
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.contains("benchmarks")) return false;
  m.context = j["context"];
  bool any = false;
  for (auto& b : j["benchmarks"]) {
    if (b.value("run_type", "") != "iteration" || !b.contains("ns_per_call")) continue;
    std::string name = b.value("run_name", "");  // "BM_time/manual_time"
    m.ns_per_call[name.substr(0, name.find('/'))].push_back(b["ns_per_call"].get<double>());
    any = true;
  }
  return any;
}

long long context_seconds(const Mode& m, const char* key) {
  return atoll(m.context.value(key, std::string("0")).c_str());
}

// Each mode must have run the way it claims, or its numbers mean nothing.
bool check_mode(const Mode& m) {
  long long seen = context_seconds(m, "clock_realtime_s");
  long long kernel = context_seconds(m, "kernel_realtime_s");
  bool frozen = m.context.value("clock_monotonic_frozen", std::string()) == "true";
  std::string what;
  if (strcmp(m.name, "native") == 0 && (std::llabs(seen - kernel) > 5 || frozen)) {
    what = "the native run did not see the real clock";
  } else if (strcmp(m.name, "shim") == 0 && (seen != kSessionEpochS || !frozen)) {
    what = "the shim run did not see a frozen virtual clock at the session epoch";
  } else if (strcmp(m.name, "faketime") == 0 && (std::llabs(seen - kSessionEpochS) > 86400 || frozen)) {
    what = "the libfaketime run did not see the faked date";
  }
  if (what.empty()) return true;
  fprintf(stderr, "bench_clock_compare: %s (CLOCK_REALTIME %lld s, kernel %lld s, monotonic %s)\n", what.c_str(),
          seen, kernel, frozen ? "frozen" : "running");
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string min_time = "0.1";
  std::string reps = "3";
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--min-time" && i + 1 < argc) {
      min_time = argv[++i];
    } else if (a == "--repetitions" && i + 1 < argc) {
      reps = argv[++i];
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_clock_compare [--rounds N] [--repetitions N] [--min-time SECONDS]\n");
      return 2;
    }
  }
  std::string reads = self_dir() + "/bench_clock_reads";
  std::string shim_lib = bench::shim_path();
  std::string faketime = env_or("FAKETIME_LIB", kDefaultFaketime);
  for (const std::string& f : {reads, shim_lib, faketime}) {
    if (access(f.c_str(), R_OK) != 0) {
      fprintf(stderr, "bench_clock_compare: %s not found (build the bench targets; see docs/performance.md)\n",
              f.c_str());
      return 2;
    }
  }
  std::vector<std::string> bench_args = {reads, "--benchmark_format=json", "--benchmark_min_time=" + min_time,
                                         "--benchmark_repetitions=" + reps};
  vtime::Session session = vtime::Session::create();

  Mode modes[3] = {{"native", {}, {}}, {"shim", {}, {}}, {"faketime", {}, {}}};
  struct Run {
    std::vector<std::pair<std::string, std::string>> env;
    bench::DriveFn drive;
  } runs[3] = {
      {{}, {}},
      {{{vtime::kSessionEnv, session.attach_spec()}, {"LD_PRELOAD", shim_lib}},
       [&](pid_t child, int64_t deadline_ns) { bench::drive_until_exit(session, child, deadline_ns); }},
      {{{"LD_PRELOAD", faketime}, {"FAKETIME", "@2024-01-01 00:00:00"}}, {}},
  };
  const int64_t end_ns = bench::raw_monotonic_ns() + kTotalLimitNs;
  for (int k = 0; k < 3 * rounds; ++k) {
    int i = k % 3;
    fprintf(stderr, "bench_clock_compare: round %d: %s\n", k / 3 + 1, modes[i].name);
    int left_s = static_cast<int>((end_ns - bench::raw_monotonic_ns()) / 1000000000LL);
    if (left_s < 1) {
      fprintf(stderr, "bench_clock_compare: out of time (lower --rounds, --repetitions or --min-time)\n");
      return 2;
    }
    bench::ChildResult r = bench::run_captured(bench_args, runs[i].env, left_s, runs[i].drive);
    if (!r.ok()) {
      fprintf(stderr, "bench_clock_compare: the %s run %s\n", modes[i].name,
              r.timed_out ? "timed out" : "failed");
      return 2;
    }
    if (!parse(r.out, modes[i])) {
      fprintf(stderr, "bench_clock_compare: the %s run printed no usable JSON\n", modes[i].name);
      return 2;
    }
    if (!check_mode(modes[i])) return 2;
  }

  struct Row {
    const char* bench;
    const char* label;
  } rows[] = {{"BM_clock_gettime_monotonic", "clock_gettime(MONOTONIC)"},
              {"BM_gettimeofday", "gettimeofday"},
              {"BM_time", "time"},
              {"BM_timer_overhead", "(timer+loop, included)"}};
  printf("clock reads, ns per call: %d rounds x %s repetitions per mode, each a >= %s s run of batches of\n"
         "20000 calls timed with a raw clock_gettime system call; median (min) over the repetitions.\n"
         "Ratios of the minima (the cost without interference: the machine's load only adds to it),\n"
         "ratios of the medians in brackets.\n",
         rounds, reps.c_str(), min_time.c_str());
  printf("%-26s %16s %16s %16s %15s %15s\n", "call", "native", "shim", "faketime", "native/shim", "faketime/shim");
  auto cell = [](const std::vector<double>& v) {
    bench::Stats st = bench::stats_of(v);
    char buf[40];
    snprintf(buf, sizeof buf, "%.2f (%.2f)", st.median, st.min);
    return std::string(buf);
  };
  auto ratio = [](const std::vector<double>& num, const std::vector<double>& den) {
    bench::Stats a = bench::stats_of(num), b = bench::stats_of(den);
    char buf[40];
    snprintf(buf, sizeof buf, "%.1fx [%.1fx]", b.min > 0 ? a.min / b.min : 0.0, b.median > 0 ? a.median / b.median : 0.0);
    return std::string(buf);
  };
  for (const Row& row : rows) {
    for (const Mode& m : modes) {
      if (!m.ns_per_call.count(row.bench)) {
        fprintf(stderr, "bench_clock_compare: no %s figure in the %s run\n", row.bench, m.name);
        return 2;
      }
    }
    auto& n = modes[0].ns_per_call[row.bench];
    auto& s = modes[1].ns_per_call[row.bench];
    auto& f = modes[2].ns_per_call[row.bench];
    printf("%-26s %16s %16s %16s %15s %15s\n", row.label, cell(n).c_str(), cell(s).c_str(), cell(f).c_str(),
           ratio(n, s).c_str(), ratio(f, s).c_str());
  }
  double native = bench::stats_of(modes[0].ns_per_call["BM_clock_gettime_monotonic"]).min;
  double shim = bench::stats_of(modes[1].ns_per_call["BM_clock_gettime_monotonic"]).min;
  bool ok = bench::report_result("clock_gettime_native_over_shim", shim > 0 ? native / shim : 0.0, "x", ">=", 5);
  return ok ? 0 : 1;
}
