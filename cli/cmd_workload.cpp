// `vtime workload from-swf|stats|synth`: real traces (SWF) into Batsim workloads, what a workload
// holds, synthetic traces (docs/workloads.md).
#include "command.h"

#include <vtime/sim/workload.h>
#include <vtime/workload/from_swf.h>
#include <vtime/workload/stats.h>
#include <vtime/workload/synth.h>
#include <vtime/workload/trace_file.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace vtime::cli {
namespace {

namespace wl = vtime::workload;

struct FromSwfOptions {
  std::string trace, output;
  std::string window, window_length, max_duration, walltime = "requested", status = "completed,failed,cancelled,unknown";
  std::string too_big = "cap";
  double utilisation = -1;
  int64_t procs_per_host = 0, hosts = 0;
  bool shift = false, skip_bad = false, quiet = false;
};

struct StatsOptions {
  std::string input;
  int64_t hosts = 0;
  bool json = false;
};

struct SynthCliOptions {
  wl::SynthOptions synth;
  std::string output;
  std::string min_runtime = "10", max_runtime = "1d";
};

int fail(const std::string& msg) {
  fprintf(stderr, "vtime workload: %s\n", msg.c_str());
  return kExitUsage;
}

// Writes `text` to `path` ("-": stdout) through a temporary file, so a failed run leaves no half
// file behind.
bool write_output(const std::string& path, const std::string& text) {
  if (path == "-") return fwrite(text.data(), 1, text.size(), stdout) == text.size();
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(text.data(), static_cast<std::streamsize>(text.size()))) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

std::string utc(int64_t unix_time) {
  time_t t = static_cast<time_t>(unix_time);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

int from_swf(const FromSwfOptions& o) {
  wl::ConvertOptions c;
  if (!o.window.empty()) {
    auto colon = o.window.find(':');
    if (colon == std::string::npos) return fail("--window takes START:END (e.g. 0:10h)");
    auto a = wl::parse_duration(o.window.substr(0, colon)), b = wl::parse_duration(o.window.substr(colon + 1));
    if (!a) return fail("--window: " + a.error());
    if (!b) return fail("--window: " + b.error());
    c.window_start = *a;
    c.window_end = *b;
  }
  if (!o.window_length.empty()) {
    auto d = wl::parse_duration(o.window_length);
    if (!d) return fail("--window-length: " + d.error());
    c.window_length = *d;
  }
  if (o.utilisation >= 0) c.utilisation = o.utilisation;
  if (!o.max_duration.empty()) {
    auto d = wl::parse_duration(o.max_duration);
    if (!d) return fail("--max-duration: " + d.error());
    c.max_duration = *d;
  }
  if (o.procs_per_host) c.procs_per_host = o.procs_per_host;
  if (o.hosts) c.hosts = o.hosts;
  c.too_big = o.too_big == "drop" ? wl::TooBig::kDrop : o.too_big == "keep" ? wl::TooBig::kKeep : wl::TooBig::kCap;
  if (o.walltime == "requested") {
    c.walltime = wl::Walltime::kRequested;
  } else if (o.walltime == "runtime") {
    c.walltime = wl::Walltime::kRuntime;
  } else if (o.walltime == "none") {
    c.walltime = wl::Walltime::kNone;
  } else if (o.walltime.rfind("factor:", 0) == 0) {
    char* end = nullptr;
    c.walltime = wl::Walltime::kFactor;
    c.walltime_factor = strtod(o.walltime.c_str() + 7, &end);
    if (*end || end == o.walltime.c_str() + 7) return fail("--walltime factor:F: bad factor in '" + o.walltime + "'");
  } else {
    return fail("--walltime must be requested, runtime, factor:F or none");
  }
  auto statuses = wl::parse_statuses(o.status);
  if (!statuses) return fail("--status: " + statuses.error());
  c.statuses = *statuses;
  c.shift = o.shift;

  wl::SwfReadOptions ro;
  ro.skip_bad = o.skip_bad;
  auto trace = wl::read_swf_file(o.trace, ro);
  if (!trace) return fail(trace.error());
  auto conv = wl::convert(*trace, c);
  if (!conv) return fail(conv.error());
  if (!write_output(o.output, conv->json)) return fail("cannot write '" + o.output + "'");
  if (o.quiet) return 0;
  std::string report = "vtime workload: " + std::to_string(conv->jobs) + " jobs of " + std::to_string(trace->jobs.size()) +
                       " on " + std::to_string(conv->nb_res) + " resources -> " + o.output + "\n";
  if (conv->window) {
    char buf[200];
    snprintf(buf, sizeof buf, "  window %.0f:%.0f s of the trace, utilisation %.4f of %lld processors (asked %.4f)",
             conv->window->start, conv->window->end, conv->window->utilisation,
             static_cast<long long>(conv->window->capacity), o.utilisation);
    report += buf;
    if (trace->header.unix_start_time)
      report += ", from " + utc(*trace->header.unix_start_time + static_cast<int64_t>(conv->window->start));
    report += "\n";
  }
  if (conv->shift != 0) report += "  submissions shifted by -" + std::to_string(static_cast<long long>(conv->shift)) + " s\n";
  for (const auto& [why, n] : conv->dropped) report += "  left out: " + std::to_string(n) + " (" + why + ")\n";
  if (conv->capped_duration) report += "  durations capped: " + std::to_string(conv->capped_duration) + "\n";
  if (conv->capped_size) report += "  sizes capped to the hosts: " + std::to_string(conv->capped_size) + "\n";
  if (trace->skipped)
    report += "  malformed lines skipped: " + std::to_string(trace->skipped) + " (the first: " +
              trace->first_skipped_error + ")\n";
  fputs(report.c_str(), stderr);
  return 0;
}

int stats(const StatsOptions& o) {
  std::vector<wl::JobShape> jobs;
  int64_t resources = o.hosts;
  const char* unit = "hosts";
  if (wl::is_swf_path(o.input)) {
    auto t = wl::read_swf_file(o.input, {});
    if (!t) return fail(t.error());
    unit = "processors";
    for (const auto& j : t->jobs)
      if (j.run >= 0 && j.procs() > 0) jobs.push_back({j.submit, j.procs(), j.run});
    if (!resources && t->header.max_procs) resources = *t->header.max_procs;
  } else {
    // Read as the simulator reads it: job by job, so a million-job file stays small here too.
    auto w = sim::open_workload(o.input, "w0");
    if (!w) return fail(w.error());
    sim::JobSource& src = **w;
    const auto& profiles = src.info().profiles;
    while (src.next_subtime()) {
      auto batch = src.next_batch();
      if (!batch) return fail(batch.error());
      for (const auto& j : *batch) {
        double d = static_cast<double>(profiles[j.profile].delay.ns()) / 1e9;
        if (j.walltime) d = std::min(d, static_cast<double>(j.walltime->ns()) / 1e9);
        jobs.push_back({static_cast<double>(j.subtime.ns()) / 1e9, j.res, d});
      }
    }
    if (!resources) resources = src.info().nb_res.value_or(0);
  }
  std::string out = wl::format_stats(wl::describe_jobs(std::move(jobs)), o.input, resources, unit, o.json);
  fputs(out.c_str(), stdout);
  return 0;
}

int synth(SynthCliOptions& o) {
  auto lo = wl::parse_duration(o.min_runtime), hi = wl::parse_duration(o.max_runtime);
  if (!lo) return fail("--min-runtime: " + lo.error());
  if (!hi) return fail("--max-runtime: " + hi.error());
  if (!(*lo >= 1 && *hi >= *lo)) return fail("need 1 s <= --min-runtime <= --max-runtime");
  if (!(o.synth.utilisation > 0)) return fail("--utilisation must be positive");
  if (!(o.synth.serial_fraction >= 0 && o.synth.serial_fraction <= 1)) return fail("--serial-fraction must be in [0, 1]");
  if (o.synth.procs < 1) return fail("--procs must be at least 1");
  o.synth.min_runtime = *lo;
  o.synth.max_runtime = *hi;
  wl::SwfTrace t = wl::synthesise(o.synth);
  std::ostringstream out;
  wl::write_swf(out, t);
  if (!write_output(o.output, out.str())) return fail("cannot write '" + o.output + "'");
  return 0;
}

}  // namespace

Subcommand register_workload(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "workload",
      "Convert, inspect and synthesise workloads.\n"
      "Workload tools: from-swf (an SWF trace of the Parallel Workloads Archive into a Batsim\n"
      "workload, with windowing and trimming), stats (what a workload or trace holds), synth (a\n"
      "synthetic SWF trace). Exit status: 0 done; 2 bad command line or bad input (the message\n"
      "names the file, line and field). See docs/workloads.md.");
  app->require_subcommand(1);

  auto f = std::make_shared<FromSwfOptions>();
  CLI::App* fs = app->add_subcommand("from-swf", "Convert an SWF trace (.swf or .swf.gz) into a Batsim JSON workload");
  fs->add_option("trace", f->trace, "The SWF trace")->required();
  fs->add_option("-o,--output", f->output, "The Batsim workload to write ('-': stdout)")->required();
  fs->add_option("--window", f->window, "Keep the jobs submitted in [START, END) (trace seconds; units s, min, h, d)")
      ->option_text("START:END");
  fs->add_option("--window-length", f->window_length,
                 "With --utilisation: take the window of this length whose mean utilisation is closest to U")
      ->option_text("D");
  fs->add_option("--utilisation", f->utilisation, "Target mean utilisation of the window (0..1]")->option_text("U");
  fs->add_option("--max-duration", f->max_duration, "Cap every run time (units s, min, h, d)")->option_text("D");
  fs->add_option("--procs-per-host", f->procs_per_host, "Processors per host: requests become ceil(procs / N) hosts")
      ->check(CLI::PositiveNumber);
  fs->add_option("--hosts", f->hosts, "Hosts of the platform (nb_res); see --too-big")->check(CLI::PositiveNumber);
  fs->add_option("--too-big", f->too_big, "A request for more hosts than --hosts: cap it, drop the job, or keep it "
                                          "(the scheduler will have to reject it)")
      ->check(CLI::IsMember({"cap", "drop", "keep"}))
      ->capture_default_str();
  fs->add_option("--walltime", f->walltime, "requested (SWF field 9), runtime, factor:F (F x run time) or none")
      ->capture_default_str();
  fs->add_option("--status", f->status,
                 "SWF statuses kept: completed, failed, cancelled (if it ran), partial, unknown, or numbers")
      ->capture_default_str();
  fs->add_flag("--shift", f->shift, "Shift submissions so the first is at 0");
  fs->add_flag("--skip-bad", f->skip_bad, "Skip malformed lines (counted and reported) instead of failing");
  fs->add_flag("-q,--quiet", f->quiet, "No report");

  auto s = std::make_shared<StatsOptions>();
  CLI::App* st = app->add_subcommand("stats", "Jobs, span, size and duration distributions, offered utilisation");
  st->add_option("input", s->input, "A Batsim JSON workload or an SWF trace (.swf, .swf.gz)")->required();
  st->add_option("--hosts", s->hosts, "Resources for the offered utilisation (default: nb_res, or the trace's MaxProcs)");
  st->add_flag("--json", s->json, "JSON instead of text");

  auto y = std::make_shared<SynthCliOptions>();
  CLI::App* sy = app->add_subcommand("synth", "Write a synthetic SWF trace (model in docs/workloads.md)");
  sy->add_option("-o,--output", y->output, "The SWF trace to write ('-': stdout)")->required();
  sy->add_option("-n,--jobs", y->synth.jobs, "Number of jobs")->capture_default_str();
  sy->add_option("--procs", y->synth.procs, "Processors of the machine (MaxProcs)")->capture_default_str();
  sy->add_option("--seed", y->synth.seed, "Seed: the same seed gives the same trace everywhere")->capture_default_str();
  sy->add_option("--utilisation", y->synth.utilisation, "Offered utilisation")->capture_default_str();
  sy->add_option("--serial-fraction", y->synth.serial_fraction, "Fraction of one-processor jobs")->capture_default_str();
  sy->add_option("--min-runtime", y->min_runtime, "Shortest run time (units s, min, h, d)")->capture_default_str();
  sy->add_option("--max-runtime", y->max_runtime, "Longest run time")->capture_default_str();

  return {app, [=] {
            if (fs->parsed()) return from_swf(*f);
            if (st->parsed()) return stats(*s);
            if (sy->parsed()) return synth(*y);
            return kExitUsage;
          }};
}

}  // namespace vtime::cli
