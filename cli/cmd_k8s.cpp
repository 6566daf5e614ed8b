// `vtime k8s`: `vtime run` with vtime-k8s as the scheduler (docs/k8s.md).
#include "command.h"
#include "companions.h"
#include "run_action.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace vtime::cli {
namespace {

struct K8sOptions {
  RunOptions run;
  std::string scheduler_config;
  std::vector<std::string> bridge_args;
};

int k8s_action(K8sOptions& o) {
  std::string why;
  std::string bridge = find_k8s_bridge(why);
  if (bridge.empty()) {
    fprintf(stderr, "vtime k8s: %s\n", why.c_str());
    return kExitInternal;
  }
  o.run.command = {bridge, "-s", "{endpoint}"};
  // How often Go's runtime and the components' goroutines read the clock depends on how their
  // threads interleave; their decisions do not. Traces of Kubernetes runs compare messages,
  // decisions and timers, not clock reads.
  for (const char* p : {"proc:etcd", "proc:kube-*", "proc:kubectl", "proc:vtime-k8s"}) o.run.clock_ignore.push_back(p);
  if (!o.scheduler_config.empty()) {
    o.run.command.push_back("--scheduler-config");
    o.run.command.push_back(std::filesystem::absolute(o.scheduler_config).string());
  }
  o.run.command.insert(o.run.command.end(), o.bridge_args.begin(), o.bridge_args.end());
  return run_action(o.run);
}

}  // namespace

Subcommand register_k8s(CLI::App& root) {
  auto o = std::make_shared<K8sOptions>();
  CLI::App* app = root.add_subcommand(
      "k8s",
      "Schedule the workload with a private, unmodified Kubernetes in virtual time.\n"
      "Shorthand for `vtime run ... -- vtime-k8s -s {endpoint} [--scheduler-config FILE] [ARGS]`:\n"
      "the workload is scheduled by Kubernetes' own kube-scheduler, with a private etcd and\n"
      "kube-apiserver, unmodified, in virtual time. Every compute host is a Node, every job a Pod.\n"
      "The run's directory (configuration, logs, etcd's data) is kept as PREFIX_k8s/. Same options\n"
      "and exit codes as `vtime run` (4: vtime-k8s failed, e.g. a component died; its message names\n"
      "it). The CPU-time model defaults to zero here (docs/k8s.md). See docs/k8s.md.");
  // Kubernetes' components read the clock on every request, and how often depends on how their
  // goroutines interleave: under `calls` they would pay for it in virtual time that differs from
  // run to run. They never wait by spinning, so `zero` is exact for them (docs/k8s.md).
  o->run.broker.cpu.model = "zero";
  // The control plane's start-up (answering SIMULATION_BEGINS) is seconds of computation while the
  // clock stands still, about 6 s of real time on an idle 2-vCPU machine; on a loaded one it
  // took over 30 s (the default of `vtime run`) and the run failed as a hung scheduler. Later
  // decisions keep the same bound: none has been measured near 30 s, but neither under every load.
  o->run.broker.start_timeout = 180;
  o->run.broker.crash_timeout = 180;
  // The control plane runs one thread at a time (vtime-k8s's thread turns): on one CPU each of its
  // hand-overs is a context switch instead of a wake-up across CPUs, 0.74x the wall time.
  o->run.pin_cpu = "auto";
  add_run_options(*app, o->run);
  add_check_option(*app, o->run);
  app->add_option("--scheduler-config", o->scheduler_config,
                  "A KubeSchedulerConfiguration (YAML, kubescheduler.config.k8s.io/v1beta1): profiles, plugins, weights")
      ->option_text("FILE")
      ->check(CLI::ExistingFile);
  app->add_option("bridge-args", o->bridge_args,
                  "More vtime-k8s options (after --), e.g. --node-cpus 2 --scheduler-flag=--v=4");
  app->positionals_at_end(true);
  return {app, [o] { return k8s_action(*o); }};
}

}  // namespace vtime::cli
