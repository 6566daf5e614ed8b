#!/usr/bin/python3
"""Integration tests of vtime-k8s: Kubernetes' own etcd, kube-apiserver and kube-scheduler
(unmodified, as k8s/install-kubernetes builds them from Debian's source package) scheduling Batsim
workloads through `vtime k8s` / `vtime run`, as real processes with bounded time.

usage: k8s_cases.py CASE --vtime VTIME --k8s VTIME_K8S
       k8s_cases.py --list

Exit 0 when the case passes; 1 and the reason on stdout otherwise; 77 (skipped) when the
Kubernetes binaries or etcd are not installed.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bridge_cases  # noqa: E402
from bridge_cases import BridgeCase, check, read, rows  # noqa: E402
from run_processes import processes_mentioning  # noqa: E402


EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "k8s"))
REFERENCES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "references", "k8s"))


def k8s_bin():
    if os.environ.get("VTIME_K8S_BIN"):
        return os.environ["VTIME_K8S_BIN"]
    cache = os.environ.get("VTIME_K8S_CACHE", "/var/cache/vtime/kubernetes-1.20.2")
    return os.path.join(cache, "bin")


def job_starts(prefix):
    """Each job's start in PREFIX_jobs.csv, by job id."""
    return {r["job_id"]: float(r["starting_time"]) for r in rows(read(prefix + "_jobs.csv"))}


def contention_workload(path):
    """14 one-host jobs on 4 hosts with contention (jobs wait for a host to free), a job asking
    for two hosts (rejected: a Pod runs on one Node) and odd ids; the same bytes every time."""
    jobs, t = [], 0
    delays = [30, 45, 10, 60, 20, 15, 40, 25, 35, 10, 50, 20, 5, 30]
    for i, d in enumerate(delays):
        t += (i * 7) % 11
        jid = str(i) if i % 5 else "job %d 'x'" % i
        jobs.append({"id": jid, "subtime": t, "res": 1, "walltime": d + 60, "profile": "d%d" % d})
    jobs.append({"id": "wide", "subtime": 12, "res": 2, "walltime": 100, "profile": "d10"})
    profiles = {"d%d" % d: {"type": "delay", "delay": d} for d in set(delays)}
    with open(path, "w") as f:
        json.dump({"nb_res": 4, "jobs": jobs, "profiles": profiles}, f, indent=1, sort_keys=True)
    return len(jobs)


class Case(BridgeCase):
    def __init__(self, args):
        super().__init__(args, "k8s")

    def vtime_k8s(self, wl, tag, hosts, config=None, more=(), bridge=(), expect=0, on_started=None, env=None,
                  wrapper=()):
        """`vtime k8s` (in env, or this process's environment; after the command `wrapper`);
        returns (prefix, stderr), once no process of the run is left."""
        prefix = self.prefix(tag)
        cmd = list(wrapper) + [self.a.vtime, "k8s", "-w", wl, "-e", prefix, "-q", "--hosts", str(hosts)]
        if config:
            cmd += ["--scheduler-config", config]
        cmd += list(more)
        if bridge:
            cmd += ["--"] + list(bridge)
        err = self.run(cmd, tag, expect, on_started, prefix, env)
        self.nothing_left(prefix + "_k8s")
        return prefix, err


def contention(c):
    """Every job runs once a host is free (one cpu a Node), the two-host job is rejected with a
    reason, the scheduler's own logs and the run's directory are kept, and a second run (as
    root, with the pids wrapping around during its start-up, and another host name; in a run
    directory with a longer name, and with more variables in vtime's environment) gives the same
    _jobs.csv byte for byte and kube-scheduler starts its informers in the same order. That
    order is the most sensitive sign of a Go component's inputs: it changed with the length of
    the run's directory, of the host name, and with any variable more in the environment before
    the components got their own."""
    wl = c.path("contention.json")
    n = contention_workload(wl)
    first = None
    first_informers = None
    for i in range(2):
        if i == 1 and os.geteuid() == 0:
            # The second run with the pids wrapping around during the start-up (as root): whose
            # turn comes first at one instant must not follow pids. In CI a wrap between the
            # start of kubectl proxy and kube-scheduler's once moved the start of the
            # simulation by 10 ms and 6 jobs by 0.99 s.
            with open("/proc/sys/kernel/pid_max") as f:
                pid_max = int(f.read())
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid_max - 20))
        if i == 0:
            prefix, err = c.vtime_k8s(wl, "contention", hosts=4)
        else:
            env = dict(os.environ, VTIME_LOG="controller=error", XYZ="1")
            # As root, on a "machine" with another host name too (a UTS namespace of its own).
            wrapper = []
            if os.geteuid() == 0:
                wrapper = ["unshare", "-u", "sh", "-c", 'hostname "$0" && exec "$@"', "a-host-name-longer-than-most"]
            prefix, err = c.vtime_k8s(wl, "contention-in-a-directory-with-a-longer-name", hosts=4, env=env,
                                      wrapper=wrapper)
        text = read(prefix + "_jobs.csv")
        table = rows(text)
        check(len(table) == n, "%d rows in _jobs.csv, expected %d" % (len(table), n))
        for r in table:
            want = "REJECTED" if r["job_id"] == "wide" else "COMPLETED_SUCCESSFULLY"
            check(r["final_state"] == want, "job %s ended %s, expected %s" % (r["job_id"], r["final_state"], want))
        check("rejecting job w0!wide" in err and "one Node" in err, "the rejection of job 'wide' is not explained:\n" + err)
        # One host a job, never two jobs on a host at once (one cpu a Node).
        spans = sorted((float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
                       for r in table if r["final_state"] == "COMPLETED_SUCCESSFULLY")
        for a in range(len(spans)):
            for b in range(a + 1, len(spans)):
                if spans[a][2] == spans[b][2]:
                    check(spans[b][0] >= spans[a][1] - 1e-9, "two jobs on host %s at once: %s %s"
                          % (spans[a][2], spans[a], spans[b]))
        waited = [r for r in table if r["waiting_time"] and float(r["waiting_time"]) > 0]
        check(waited, "no job waited: the workload has no contention")
        log = read(prefix + "_k8s/log/kube-scheduler.log")
        check("Successfully bound pod to node" in log and "job-" in log,
              "the scheduler's log does not mention the pods")
        informers = [line.split("Starting reflector ")[1].split(" ")[0] for line in log.splitlines()
                     if "Starting reflector " in line]
        check(len(informers) >= 5, "kube-scheduler's log names %d informers" % len(informers))
        if first is None:
            first, first_informers = text, informers
        check(text == first, "run %d's _jobs.csv differs from run 1's:\n%s\n---\n%s" % (i + 1, first, text))
        check(informers == first_informers, "kube-scheduler started its informers in another order in run %d:\n%s\n---\n%s"
              % (i + 1, first_informers, informers))


def backoff_config(c):
    """A user's KubeSchedulerConfiguration is used: with examples/k8s/slow-backoff.yaml (a 10 s
    initial back-off; Kubernetes' default is 1 s), pods that found no free Node wait longer before
    they are tried again."""
    wl = c.path("contention.json")
    contention_workload(wl)
    waits = {}
    for tag, config in (("default", None), ("backoff10", os.path.join(EXAMPLES, "slow-backoff.yaml"))):
        prefix, _ = c.vtime_k8s(wl, tag, hosts=4, config=config)
        table = [r for r in rows(read(prefix + "_jobs.csv")) if r["final_state"] == "COMPLETED_SUCCESSFULLY"]
        waits[tag] = sum(float(r["waiting_time"]) for r in table) / len(table)
    check(waits["backoff10"] > waits["default"] + 1, "mean waiting time with a 10 s back-off %.3f s, with the default "
          "%.3f s: the configuration was not used" % (waits["backoff10"], waits["default"]))


def examples_configs(c):
    """The shipped example configurations work as they are."""
    wl = c.path("contention.json")
    n = contention_workload(wl)
    for name in sorted(os.listdir(EXAMPLES)):
        if name.endswith(".yaml"):
            prefix, _ = c.vtime_k8s(wl, name, hosts=4, config=os.path.join(EXAMPLES, name))
            check(len(rows(read(prefix + "_jobs.csv"))) == n, "%s: not every job ran" % name)


def bad_config(c):
    """A configuration kube-scheduler refuses: it fails to start, and the error names it and
    quotes its log. A key the bridge owns is refused before anything starts."""
    wl = c.path("contention.json")
    contention_workload(wl)
    bogus = c.write("bogus.yaml", "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "profiles:\n"
                                  "  - schedulerName: default-scheduler\n"
                                  "    plugins:\n"
                                  "      score:\n"
                                  "        enabled:\n"
                                  "          - name: NoSuchPlugin\n")
    _, err = c.vtime_k8s(wl, "bogus", hosts=2, config=bogus, expect=4)
    check("kube-scheduler" in err and "last lines of" in err and "NoSuchPlugin" in err,
          "the failure does not name kube-scheduler and quote its log:\n" + err)
    owned = c.write("owned.yaml", "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "leaderElection:\n"
                                  "  leaderElect: true\n")
    _, err = c.vtime_k8s(wl, "owned", hosts=2, config=owned, expect=4)
    check("owned.yaml:3: leaderElection is set by vtime-k8s" in err, "leaderElection was not refused:\n" + err)


def port_conflict(c):
    """On the host's network (--network host), the API server's port is taken by another program:
    the error names kube-apiserver and quotes its log."""
    wl = c.path("contention.json")
    contention_workload(wl)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        _, err = c.vtime_k8s(wl, "port", hosts=2, bridge=["--network", "host", "--apiserver-flag=--secure-port=%d" % port],
                             expect=4)
    finally:
        s.close()
    check("kube-apiserver" in err and "last lines of" in err and ("address already in use" in err or "bind" in err),
          "the failure does not name kube-apiserver and its port:\n" + err)


def port_conflict_private(c):
    """In the run's own network (the default) nothing outside can take a port, but a component
    given another's port still fails clearly: the API server on etcd's port (10000, the first of
    the block in a network of its own) names kube-apiserver and quotes its log."""
    wl = c.path("contention.json")
    contention_workload(wl)
    _, err = c.vtime_k8s(wl, "portpriv", hosts=2, bridge=["--apiserver-flag=--secure-port=10000"], expect=4)
    if "no network namespace" in err:
        raise bridge_cases.Skip("no private network here (not root)")
    check("kube-apiserver" in err and "last lines of" in err and "address already in use" in err,
          "the failure does not name kube-apiserver and its port:\n" + err)


def apiserver_killed(c):
    """kube-apiserver killed mid-run: vtime-k8s names it, vtime exits 4, the outputs so far are
    written and nothing is left running."""
    wl = c.path("contention.json")
    contention_workload(wl)

    def run_pids(prefix, name):
        return [pid for pid, cmd in processes_mentioning(prefix + "_k8s") if cmd.split(" ")[0].endswith(name)]

    def kill_apiserver(p, prefix):
        # The scheduler starts last, once the Nodes exist; the simulation is under way once a
        # job has ended (a fixed delay was too long on a fast machine: the run was over).
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None and not run_pids(prefix, "kube-scheduler"):
            time.sleep(0.05)
        jobs = prefix + "_jobs.csv"
        while time.time() < deadline and p.poll() is None and \
                not (os.path.exists(jobs) and len(read(jobs).splitlines()) > 1):
            time.sleep(0.02)
        pids = run_pids(prefix, "kube-apiserver")
        check(pids and p.poll() is None, "no kube-apiserver of the run to kill")
        os.kill(pids[0], signal.SIGKILL)

    prefix, err = c.vtime_k8s(wl, "killed", hosts=4, expect=4, on_started=kill_apiserver)
    check("kube-apiserver" in err and "signal 9" in err, "the failure does not name kube-apiserver:\n" + err)
    check(os.path.exists(prefix + "_jobs.csv"), "no _jobs.csv after the failure")


def run_equals_shorthand(c):
    """`vtime k8s` is `vtime run --cpu-model zero -- vtime-k8s ...`: the same schedule. With the
    start and crash timeouts `vtime k8s` sets (180 s: under two busy loops the control plane's
    start-up took over `vtime run`'s 30 s and the long form failed, exit 5), and unpinned where
    the shorthand pins the run to one cpu: the schedule must not depend on that either."""
    wl = c.path("contention.json")
    contention_workload(wl)
    prefix, _ = c.vtime_k8s(wl, "short", hosts=4)
    long_prefix = c.prefix("long")
    cmd = [c.a.vtime, "run", "--cpu-model", "zero", "--start-timeout", "180", "--crash-timeout", "180", "--hosts", "4",
           "-w", wl, "-e", long_prefix, "-q", "--", c.a.k8s, "-s", "{endpoint}"]
    c.run(cmd, "long")
    c.nothing_left(long_prefix + "_k8s")
    check(read(prefix + "_jobs.csv") == read(long_prefix + "_jobs.csv"), "vtime k8s and vtime run differ")
    check(os.path.isdir(long_prefix + "_k8s/log"), "the run's directory is not kept as PREFIX_k8s")


def sweep(c):
    """`vtime sweep` runs vtime-k8s like any other scheduler (the timeout-vs-accuracy study with
    the real kube-scheduler): an exact reference, equal to `vtime k8s`, and runs under the
    timeout policy with 2 ms and 10 ms a step. Such a run either completes every job or ends
    in one of the failures the study counts: `crash` (exit 4: the budget is too short for the API
    server, vtime-k8s gives up on an API call after 60 virtual s) or `busy` (exit 5: the bridge
    waits on the API server, whose timers wait on a clock the policy moves only between
    replies, until --crash-timeout). The crash timeout is real time per message, and the first
    message's reply waits for the whole control plane to start: 10 s, then 30 s, were too short
    for the exact reference in CI (long Slurm runs loading both cpus; exit 5 `busy`), hence a start
    timeout of its own, as `vtime k8s` has."""
    wl = c.path("sweep.json")
    jobs = [{"id": str(i), "subtime": 2 * i, "res": 1, "walltime": 100, "profile": "d%d" % d}
            for i, d in enumerate([10, 30, 20, 10])]
    with open(wl, "w") as f:
        json.dump({"nb_res": 2, "jobs": jobs, "profiles": {"d%d" % d: {"type": "delay", "delay": d} for d in (10, 20, 30)}},
                  f)
    out = c.path("sweep")
    cmd = [c.a.vtime, "sweep", "--hosts", "2", "-w", wl, "-o", out, "--param", "timeout=2,10", "--repeat", "1", "-j",
           "1", "--cpu-model", "zero", "--crash-timeout", "30", "--start-timeout", "120", "--no-plots", "-q", "--",
           c.a.k8s, "-s", "{endpoint}"]
    c.run(cmd, "sweep")
    runs = rows(read(os.path.join(out, "runs.csv")))
    print("runs: %s" % [(r["run"], r["status"], r["exit_code"], r["wall_s"]) for r in runs])
    check(sorted(r["timeout"] for r in runs) == ["", "10", "2"], "runs.csv: %s" % runs)
    for r in runs:
        if r["sync"] == "exact" or r["status"] == "ok":
            check(r["status"] == "ok" and r["nb_jobs"] == "4" and r["nb_jobs_rejected"] == "0", "run %s: %s" % (r["run"], r))
        else:
            check((r["status"], r["exit_code"]) in (("crash", "4"), ("busy", "5")), "run %s: %s" % (r["run"], r))
            log = read(os.path.join(out, "runs", r["run"], "run.log"))
            check("vtime-k8s" in log, "the crash's reason is not in %s's run.log: %s" % (r["run"], log[-1000:]))
        c.nothing_left(os.path.join(out, "runs", r["run"], "out_k8s"))
    summary = rows(read(os.path.join(out, "summary.csv")))
    check(len(summary) == 3 and all("crash_rate" in r for r in summary), "summary.csv: %s" % summary)
    exact = [r["run"] for r in runs if r["sync"] == "exact"][0]
    prefix, _ = c.vtime_k8s(wl, "alone", hosts=2)
    check(read(os.path.join(out, "runs", exact, "out_jobs.csv")) == read(prefix + "_jobs.csv"),
          "the sweep's exact reference differs from `vtime k8s`")


def replay(c):
    """A recorded run replays record for record with `vtime replay` (every timer, clock advance and
    message of the control plane, against the recorded simulator's messages), and with `--compare
    scheduler` (the embedded simulator runs again and answers the replay's own CALL_ME_LATERs)
    without divergence; with another scheduler configuration it diverges."""
    wl = c.path("contention.json")
    contention_workload(wl)
    trace = c.path("k8s.trace")
    c.vtime_k8s(wl, "recorded", hosts=4, more=["--record", trace])
    def replay_cmd(compare):
        return [c.a.vtime, "replay", trace, "--compare", compare, "--report", "json"]
    for compare in ("all", "scheduler"):
        r = subprocess.run(replay_cmd(compare), cwd=c.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=c.timeout)
        check(r.returncode == 0, "the replay (--compare %s) exited %d:\n%s\n%s" %
              (compare, r.returncode, r.stdout[-6000:], r.stderr[-2000:]))
        rep = json.loads(r.stdout)
        check(rep["result"] == "match" and rep["complete"] and rep["records_matched"] > 50,
              "replay (--compare %s): %s" % (compare, r.stdout[-3000:]))
    slow = os.path.join(EXAMPLES, "slow-backoff.yaml")
    out = c.run_stdout(replay_cmd("scheduler") + ["--", c.a.k8s, "-s", "{endpoint}", "--scheduler-config", slow],
                       "replay-slow", expect=1)
    rep = json.loads(out)
    check(rep["result"] == "divergence", "another configuration replayed without divergence: %s" % out[-3000:])


def start_latency(c):
    """--job-start-latency: a job starts that long after kube-scheduler binds its Pod (and so ends
    that long after its delay), exactly, in virtual time; without it, at the binding."""
    wl = c.write("free.json", json.dumps({"nb_res": 3, "profiles": {"d5": {"type": "delay", "delay": 5}},
        "jobs": [{"id": "10", "subtime": 1, "res": 1, "profile": "d5"},
                 {"id": "9", "subtime": 1, "res": 1, "profile": "d5"},
                 {"id": "3", "subtime": 2, "res": 1, "profile": "d5"}]}))
    starts = {}
    for tag, bridge in (("none", ("--job-start-latency", "0")), ("late", ("--job-start-latency", "50ms"))):
        # No sync latency: a Pod on a free Node is then bound at its submission's instant.
        prefix, _ = c.vtime_k8s(wl, tag, hosts=3, bridge=bridge + ("--etcd-sync-latency", "0"))
        starts[tag] = {r["job_id"]: (float(r["starting_time"]), float(r["finish_time"]))
                       for r in rows(read(prefix + "_jobs.csv"))}
    for j, (s, e) in starts["none"].items():
        s2, e2 = starts["late"][j]
        check(abs(s2 - s - 0.05) < 1e-6 and abs(e2 - e - 0.05) < 1e-6,
              "job %s: start/end %.6f/%.6f with a 50 ms start latency, %.6f/%.6f without" % (j, s2, e2, s, e))
    check(sorted(starts["none"]) == ["10", "3", "9"], "jobs: %s" % sorted(starts["none"]))
    check(abs(starts["none"]["9"][0] - 1.0) < 1e-6 and abs(starts["none"]["3"][0] - 2.0) < 1e-6,
          "free hosts: jobs did not start at their submission: %s" % starts["none"])


def client_latency(c):
    """--client-latency: the API client makes one request at a time, each that long, as a real
    client waits for each answer. The Pods due at one instant are created one after another, the
    first at once (exact starts on free Nodes). A job's end waits its turn behind the creations
    asked for before it: a Node freed at 1.01 s is deleted after the three Pods of 1 s, each of
    which found it taken (the first start is a flush's, not job 3's creation at 1.02 s, as when the
    deletion came at once); a deletion asked for at the very instant of the creations goes first,
    as the reference client takes them (bench/k8s_reference.py), so job 2 takes the Node at its
    creation, 1.02 s."""
    exact = ("--job-start-latency", "0", "--etcd-sync-latency", "0")
    wl = c.write("spaced.json", json.dumps({"nb_res": 3, "profiles": {"d5": {"type": "delay", "delay": 5}},
        "jobs": [{"id": str(i), "subtime": 1, "res": 1, "profile": "d5"} for i in (1, 2, 3)]}))
    for tag, latency, want in (("none", "0", (1.0, 1.0, 1.0)), ("spaced", "20ms", (1.0, 1.02, 1.04))):
        prefix, _ = c.vtime_k8s(wl, tag, hosts=3, bridge=exact + ("--client-latency", latency))
        starts = job_starts(prefix)
        got = tuple(starts[str(i)] for i in (1, 2, 3))
        check(all(abs(g - w) < 1e-6 for g, w in zip(got, want)),
              "%s: jobs 1-3 started at %s, expected %s" % (tag, got, want))

    def freed(delay):
        return c.write("freed%s.json" % delay, json.dumps({"nb_res": 1, "profiles": {
            "d5": {"type": "delay", "delay": 5}, "long": {"type": "delay", "delay": delay}},
            "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "long"}] +
                    [{"id": str(i), "subtime": 1, "res": 1, "profile": "d5"} for i in (2, 3, 4)]}))
    prefix, _ = c.vtime_k8s(freed(1.01), "freed-queued", hosts=1, bridge=exact + ("--client-latency", "20ms"))
    starts = job_starts(prefix)
    first = min(("2", "3", "4"), key=lambda j: starts[j])
    check(starts[first] > 1.5, "job %s took the Node job 1 freed at %.6f: the deletion did not wait for the "
          "creations asked for before it (starts %s)" % (first, starts[first], starts))
    prefix, _ = c.vtime_k8s(freed(1.0), "freed-tie", hosts=1, bridge=exact + ("--client-latency", "20ms"))
    starts = job_starts(prefix)
    check(abs(starts["2"] - 1.02) < 1e-6, "job 2 started at %.6f, not at its creation after the deletion "
          "asked for at the same instant (1.02 s; starts %s)" % (starts["2"], starts))


def loop_phase(c):
    """--loop-phase and --flush-drift: a Pod that waits out its back-off starts at a flush of
    kube-scheduler's back-off queue, which falls that far into a second of the workload (its middle
    by default), to within the millisecond at which the bridge sees the scheduler start (no sync
    latency or attempt cost here: the Pod's binding would come that much later); with each flush 10 ms later than
    a second after the one before (--flush-drift 10ms; the default, 1 ms, is left out for the
    exact phases), the fifth flush of the workload comes 40 ms late."""
    wl = c.write("phase.json", json.dumps({"nb_res": 1, "profiles": {"d2": {"type": "delay", "delay": 2},
                                                                     "d1": {"type": "delay", "delay": 1}},
        "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d2"},
                 {"id": "2", "subtime": 2, "res": 1, "profile": "d1"}]}))
    # Job 2 finds the Node taken at 2 s (tried twice: back-off 2 s, to 4 s); the Node frees at 3 s,
    # while job 2 still backs off: it starts at the first flush after 4 s.
    for tag, bridge, want in (("default", ("--flush-drift", "0"), 4.5), ("quarter", ("--loop-phase", "250ms", "--flush-drift", "0"), 4.25),
                              ("drift", ("--flush-drift", "10ms"), 4.54)):
        prefix, _ = c.vtime_k8s(wl, tag, hosts=1, bridge=bridge + ("--etcd-sync-latency", "0", "--job-start-latency", "0", "--attempt-cost", "0"))
        starts = job_starts(prefix)
        check(abs(starts["1"] - 1.0) < 1e-6, "%s: job 1 started at %.6f, not at its submission" % (tag, starts["1"]))
        check(want - 0.0015 <= starts["2"] <= want + 1e-6, "%s: job 2 started at %.6f, expected a flush at %.3f"
              % (tag, starts["2"], want))


def queue_order(c):
    """Priority 0 (the default, as Pods without a PriorityClass): kube-scheduler's queue takes the
    Pods a freed Node wakes in the order of their last failed attempt, not of their submission.
    On the K8s reference k8s9 (bench/references/k8s/), job 21 (submitted at 49 s) last failed in
    the back-off flush of 51.5 s, job 27 (submitted at 51 s) at its own submission; when job 8's
    Node frees at 56 s, job 27 takes it, as in 4 of the 5 real runs made of that workload, and
    job 21 waits until 74 s. Two runs give the same _jobs.csv (the attempt cost keeps the
    attempts' instants, the queue's keys, distinct), and so does a run with kube-scheduler's log at
    --v=4 (only the lines that stand for an attempt are charged). With --pod-priority submission
    the queue is first-submitted first: job 21 takes that Node."""
    wl = os.path.join(REFERENCES, "k8s9.json")
    texts = []
    for tag in ("priority0", "priority0-again"):
        prefix, _ = c.vtime_k8s(wl, tag, hosts=8)
        texts.append(read(prefix + "_jobs.csv"))
        starts = job_starts(prefix)
        check(56.0 <= starts["27"] < 56.1 and starts["21"] > 70,
              "%s: job 27 started at %.6f, job 21 at %.6f: not job 27 first at 56 s (the older last "
              "attempt)" % (tag, starts["27"], starts["21"]))
    check(texts[0] == texts[1], "two runs with priority 0 differ:\n%s\n---\n%s" % (texts[0], texts[1]))
    # A more verbose log (each attempt and event logged) changes nothing but the log: only the lines
    # that stand for an attempt are charged --attempt-cost.
    prefix, _ = c.vtime_k8s(wl, "verbose", hosts=8, bridge=("--scheduler-flag=--v=4",))
    log = read(prefix + "_k8s/log/kube-scheduler.log")
    check("Attempting to schedule pod" in log, "kube-scheduler at --v=4 did not log its attempts")
    check(read(prefix + "_jobs.csv") == texts[0], "kube-scheduler at --v=4 scheduled otherwise than at --v=2:\n%s\n---\n%s"
          % (texts[0], read(prefix + "_jobs.csv")))
    prefix, _ = c.vtime_k8s(wl, "submission", hosts=8, bridge=("--pod-priority", "submission"))
    starts = job_starts(prefix)
    check(56.0 <= starts["21"] < 56.1 and starts["27"] > 60,
          "--pod-priority submission: job 21 started at %.6f, job 27 at %.6f: not job 21 (submitted first) "
          "at 56 s" % (starts["21"], starts["27"]))


def reference_flush_phase(c):
    """The reference harness reads where each run's back-off flush fell in the second from the
    jobs it started (a start neither on its submission nor on another job's end), for the kept
    real runs of swf2 (bench/references/k8s/) and for vtime, and when vtime's is far from theirs
    prints the --loop-phase that places it there; with that option vtime's flush starts fall
    within 0.1 s of the real runs' median phase and the hint is gone."""
    harness = os.path.normpath(os.path.join(REFERENCES, "..", "..", "k8s_reference.py"))
    wl, real = os.path.join(REFERENCES, "swf2.json"), os.path.join(REFERENCES, "swf2.default.real.json")

    def run(*more):
        # --keep: the vtime runs' directories in this case's own, not in the harness's temporary
        # vtime-k8s-reference-* ones, whose processes validate_small must find none of.
        work = tempfile.mkdtemp(dir=c.dir)
        r = subprocess.run([sys.executable, harness, "-w", wl, "--real-from", real, "--vtime", c.a.vtime,
                            "--keep", work] + list(more),
                           capture_output=True, text=True, timeout=600, cwd=c.dir, stdin=subprocess.DEVNULL)
        sys.stdout.write(r.stdout[-2500:])
        check(r.returncode in (0, 1), "k8s_reference.py exited %d: %s" % (r.returncode, r.stdout[-2000:]))
        return r.stdout
    out = run()
    # The kept real runs: two flushes at 0.32-0.35 s into the second at 63 s, one at 0.72 s.
    for n, at in ((1, "0.72"), (2, "0.32"), (3, "0.35")):
        check(("real run %d: 4 flush starts, %s s into the second at 6" % (n, at)) in out,
              "real run %d's flush phase not read as %s s" % (n, at))
    vt = [line for line in out.splitlines() if line.startswith("  vtime: ")]
    check(len(vt) == 1 and "0.58 s into the second at 64 s" in vt[0], "vtime's flush (0.5 s, drifting 1 ms/s, plus the "
          "start's latencies) not read at 0.58 s at 64 s: %s" % vt)
    hint = [line for line in out.splitlines() if "to compare at theirs: --bridge-arg=--loop-phase=" in line]
    check(len(hint) == 1 and "later in the second" in hint[0], "no --loop-phase hint (vtime's flush later): %s" % hint)
    suggested = hint[0].split("--bridge-arg=")[1].strip()
    phase = int(suggested.split("=")[1].rstrip("ms"))
    check(250 <= phase <= 330, "the hint's phase %d ms is not near the real median's origin (~290 ms)" % phase)
    out = run("--bridge-arg=" + suggested)
    check("to compare at theirs" not in out, "a hint again with %s" % suggested)
    vt = [line for line in out.splitlines() if line.startswith("  vtime: ")]
    at = float(vt[0].split(" s into the second")[0].split(", ")[-1]) if vt else -1
    check(0.28 <= at <= 0.45, "with %s vtime's first flush start is %.2f s into the second, not near the real "
          "median's 0.35 s: %s" % (suggested, at, vt))


def latency_models(c):
    """--etcd-sync-latency and --attempt-cost: with every fsync of etcd taking 5 ms, a job on a
    free Node starts later than its submission by at least the two durable writes of its Pod's
    creation and binding (and well under a second), and the tracer charges exactly
    kube-scheduler's attempt lines and etcd's syncs; with every scheduling attempt costing 1 ms at its log
    line (alone), the two failed attempts of a Pod that finds no Node are logged at least 1 ms
    apart (they share one instant without it), twice the same _jobs.csv; with the sync latency
    too."""
    wl = c.write("latency.json", json.dumps({"nb_res": 1, "profiles": {"d2": {"type": "delay", "delay": 2}},
        "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d2"},
                 {"id": "2", "subtime": 1, "res": 1, "profile": "d2"}]}))
    env = dict(os.environ, VTIME_LOG="tracer=info")  # the tracer names each charged process
    prefix, err = c.vtime_k8s(wl, "sync", hosts=1, bridge=("--etcd-sync-latency", "5ms", "--attempt-cost", "1ms"), env=env)
    for who, what in (("kube-scheduler", "each write to descriptor 2 containing 'Unable to schedule|Error scheduling "
                                         "pod|Successfully bound pod' costs 1000000 ns, each sync 0 ns"),
                      ("etcd", "each write to descriptor -1 costs 0 ns, each sync 5000000 ns")):
        check(("(%s): %s" % (who, what)) in err, "vtime's tracer does not say that %s is charged: %s" % (who, what))
    starts = job_starts(prefix)
    check(1.010 <= starts["1"] < 1.5, "job 1 started at %.6f: not two 5 ms syncs after its submission" % starts["1"])
    check(starts["2"] >= starts["1"] + 2, "job 2 started at %.6f, before job 1 ended" % starts["2"])
    again, _ = c.vtime_k8s(wl, "sync-again", hosts=1, bridge=("--etcd-sync-latency", "5ms", "--attempt-cost", "1ms"))
    check(read(again + "_jobs.csv") == read(prefix + "_jobs.csv"), "two runs with a 5 ms sync latency differ")
    first = None
    for tag in ("cost1", "cost2"):
        prefix, _ = c.vtime_k8s(wl, tag, hosts=1, bridge=("--attempt-cost", "1ms", "--etcd-sync-latency", "0"))
        text = read(prefix + "_jobs.csv")
        stamps = [line.split()[1] for line in read(prefix + "_k8s/log/kube-scheduler.log").splitlines()
                  if "Unable to schedule pod" in line and 'pod="default/job-1"' in line]
        check(len(stamps) >= 2, "%s: job 2's Pod was not tried twice before a Node freed: %s" % (tag, stamps))
        secs = [float(t.split(":")[2]) for t in stamps[:2]]
        check(secs[1] - secs[0] >= 0.001 - 1e-7, "%s: job 2's first two attempts at %s: not 1 ms apart" % (tag, stamps[:2]))
        if first is None:
            first = text
        check(text == first, "the two runs' _jobs.csv differ:\n%s\n---\n%s" % (first, text))


def validate_bad_input(c):
    """`vtime validate k8s` refuses what its real-time harness cannot run, before starting anything,
    each with one clear line and exit status 2."""
    one = {"d2": {"type": "delay", "delay": 2}}
    good = c.write("good.json", json.dumps({"nb_res": 2, "profiles": one,
                                            "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d2"}]}))
    cases = [
        (["k8s", "-w", c.write("broken.json", '{"jobs": [')], "is not JSON"),
        (["k8s", "-w", c.write("two.json", json.dumps({"nb_res": 2, "profiles": one, "jobs": [
            {"id": "w", "subtime": 0, "res": 2, "profile": "d2"}]}))], "a Pod runs on one Node"),
        (["k8s", "-w", good, "--slurm-conf", c.write("x.conf", "SchedulerType=sched/builtin\n")], "--slurm-conf is for slurm"),
        (["k8s", "-w", good, "--scheduler-config", c.write("owned.yaml", "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
                                                                          "kind: KubeSchedulerConfiguration\n"
                                                                          "leaderElection:\n  leaderElect: true\n")],
         "leaderElection is set by vtime-k8s"),
        (["k8s", "-w", good, "--scheduler-config", c.path("missing.yaml")], "cannot read --scheduler-config"),
        # The options of the virtual runs, checked by `vtime k8s --check` (vtime's, then vtime-k8s's).
        (["k8s", "-w", good, "--vtime-arg=--timer-slack=-5us"], "--timer-slack must be a duration"),
        (["k8s", "-w", good, "--bridge-arg=--etcd-sync-latency=abc"], "--etcd-sync-latency: abc unit not recognized"),
        (["k8s", "-w", good, "--bridge-arg=--no-such-option"], "--no-such-option"),
        (["k8s", "-w", good, "--vtime-arg=--hosts=3"], "validate sets --hosts itself"),
    ]
    bridge_cases.validate_refuses(c, cases)
    # What validate runs: `vtime k8s --check` accepts good options and starts nothing.
    r = subprocess.run([c.a.vtime, "k8s", "--check", "-w", good, "--hosts", "2", "-e", c.prefix("check"),
                        "--timer-slack", "50us", "--", "--etcd-sync-latency", "2ms", "--loop-phase", "500ms"],
                       capture_output=True, text=True, timeout=60, cwd=c.dir, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "vtime k8s --check exited %d: %s" % (r.returncode, r.stderr))
    check(not os.path.exists(c.prefix("check") + "_k8s"), "vtime k8s --check started a cluster")


def validate_small(c):
    """`vtime validate k8s` end to end on a small workload with ties: two real-time runs (the
    harness's own API client, plain priority-0 Pods, etcd + kube-apiserver + kube-scheduler with no
    vtime) and two virtual ones; per-job CSV, every run in JSON, the figure. Whether each job
    falls within reality's range is what it reports (exit 0 or 1), not what this test asserts:
    the real runs' timing is the machine's."""
    wl = c.write("small.json", json.dumps({"nb_res": 2, "profiles": {"d2": {"type": "delay", "delay": 2},
                                                                     "d3": {"type": "delay", "delay": 3}},
        "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d3"},
                 {"id": "2", "subtime": 1, "res": 1, "profile": "d2"},
                 {"id": "3", "subtime": 2, "res": 1, "profile": "d2"},
                 {"id": "10", "subtime": 2, "res": 1, "profile": "d3"}]}))
    bridge_cases.validate_small_run(c, "k8s", wl, [], ["1", "10", "2", "3"], "vtime_start")
    # The real runs' control planes ran in the harness's own directories (vtime-k8s-reference-*).
    root = os.path.join(tempfile.gettempdir(), "vtime-k8s-reference-")
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink("/proc/%s/cwd" % pid).startswith(root):
                left.append(pid)
        except OSError:
            pass
    check(not left, "processes of the real runs are left: %s" % left)


CASES = {
    "replay": replay,
    "sweep": sweep,
    "contention": contention,
    "backoff_config": backoff_config,
    "examples_configs": examples_configs,
    "bad_config": bad_config,
    "port_conflict": port_conflict,
    "port_conflict_private": port_conflict_private,
    "apiserver_killed": apiserver_killed,
    "run_equals_shorthand": run_equals_shorthand,
    "start_latency": start_latency,
    "client_latency": client_latency,
    "loop_phase": loop_phase,
    "queue_order": queue_order,
    "reference_flush_phase": reference_flush_phase,
    "latency_models": latency_models,
    "validate_bad_input": validate_bad_input,
    "validate_small": validate_small,
}


def missing_binaries():
    missing = [b for b in ("kube-apiserver", "kube-scheduler", "kubectl")
               if not os.access(os.path.join(k8s_bin(), b), os.X_OK)]
    if missing or not shutil.which("etcd"):
        return "%s not installed (k8s/install-kubernetes builds them; etcd comes from etcd-server)" % (
            ", ".join(missing or ["etcd"]))
    return None


if __name__ == "__main__":
    sys.exit(bridge_cases.main(CASES, ["--vtime", "--k8s"], Case, missing_binaries))
