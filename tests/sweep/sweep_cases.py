#!/usr/bin/python3
"""`vtime sweep` end to end (issue 13's acceptance): real `vtime run`s of the example schedulers on
a small workload (small_8.json: 8 jobs on 2 hosts), their tables and figures checked against the
runs' own outputs, resume after Ctrl-C, and every bad input; and the Slurm executor (issue 44)
through a private real-time Slurm cluster of Debian's daemons (slurmctld and three slurmd on
loopback, bench/slurm_validation.py's): the same tables as the local executor, a task cancelled
with scancel, and the options and clusters it must refuse. One case per ctest test:

    sweep_cases.py CASE --vtime BIN --periodic-fcfs BIN     (or --list)
"""
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bridge_cases import BridgeCase, Failure, Skip, check, main, read, rows  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "small_8.json")
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import slurm_validation as sv  # noqa: E402 (a private real-time Slurm cluster)

RUNS_COLUMNS = ["run", "workload", "sync", "reference", "repeat", "status", "exit_code", "makespan",
                "mean_waiting_time", "nb_jobs", "nb_jobs_rejected", "nb_jobs_killed", "mean_abs_start_delta",
                "max_abs_start_delta", "jobs_late", "jobs_early", "jobs_differ", "overlaps", "wall_s"]
METRICS = ["makespan", "mean_waiting_time", "mean_abs_start_delta", "max_abs_start_delta", "jobs_late",
           "jobs_differ", "overlaps", "wall_s"]
SUMMARY_COLUMNS = (["workload", "sync", "reference", "runs", "finished", "ok", "crashes", "hangs", "bad_replies",
                    "other_failures", "crash_rate", "makespan_vs_exact", "mean_waiting_time_vs_exact"] +
                   [m + s for m in METRICS for s in ("_mean", "_sd", "_ci95")])


class Case(BridgeCase):
    timeout = 300

    def sweep(self, out, params, sched_args, extra=(), expect=0):
        cmd = [self.a.vtime, "sweep", "--hosts", "2", "-w", WORKLOAD, "-o", out]
        for p in params:
            cmd += ["--param", p]
        cmd += list(extra) + ["--", self.a.periodic_fcfs, "-s", "{endpoint}"] + list(sched_args)
        return self.run(cmd, "sweep", expect=expect)


def table(path):
    with open(path) as f:
        r = list(csv.reader(f))
    return r[0], [dict(zip(r[0], x)) for x in r[1:]]


def start_times(path):
    return {(r["workload_name"], r["job_id"]): (float(r["starting_time"]) if r["starting_time"] else None)
            for r in rows(read(path))}


def check_png(path):
    with open(path, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    check(os.path.getsize(path) > 1000, "%s is too small to hold a figure" % path)


def check_svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise Failure("%s is not valid XML: %s" % (path, e))
    check(root.tag.endswith("svg"), "%s: root element %s, not svg" % (path, root.tag))


def grid(c):
    """2 x 2 x 2 runs: columns, the exact reference's zero deviation, deviations recomputed from the
    runs' own _jobs.csv, the summary's statistics recomputed from runs.csv, valid figures."""
    out = c.path("grid")
    c.sweep(out, ["timeout=1,3", "period=1,2"], ["--period", "{period}", "--decision-cost", "2"], ["--repeat", "2"])
    head, runs = table(os.path.join(out, "runs.csv"))
    check(head == RUNS_COLUMNS[:2] + ["timeout", "period"] + RUNS_COLUMNS[2:], "runs.csv columns: %s" % head)
    refs = [r for r in runs if r["reference"] == "1"]
    others = [r for r in runs if r["reference"] == "0"]
    check(len(refs) == 2 and len(others) == 8, "%d reference and %d other rows, expected 2 and 8" % (len(refs), len(others)))
    for r in runs:
        if r["status"] != "ok":
            # The run's own log says why (the broker's message, the scheduler's threads).
            log = read(os.path.join(out, "runs", r["run"], "run.log"))
            raise Failure("run %s ended %s (exit %s); its run.log:\n%s" % (r["run"], r["status"], r["exit_code"], log[-4000:]))
    for r in refs:
        check(r["sync"] == "exact" and r["timeout"] == "" and r["status"] == "ok", "reference row %s" % r)
        for k in ("mean_abs_start_delta", "max_abs_start_delta", "jobs_late", "jobs_early", "jobs_differ", "overlaps"):
            check(float(r[k]) == 0, "the exact reference %s has %s = %s" % (r["run"], k, r[k]))
    for r in others:
        check(r["sync"] == "timeout" and r["status"] == "ok", "row %s" % r)
        ref = [x for x in refs if x["period"] == r["period"]][0]
        exact = start_times(os.path.join(out, "runs", ref["run"], "out_jobs.csv"))
        mine = start_times(os.path.join(out, "runs", r["run"], "out_jobs.csv"))
        deltas = [abs(mine[j] - exact[j]) for j in exact]
        late = sum(1 for j in exact if mine[j] - exact[j] > 1e-6)
        check(abs(float(r["mean_abs_start_delta"]) - sum(deltas) / len(deltas)) < 1e-6 and
              abs(float(r["max_abs_start_delta"]) - max(deltas)) < 1e-6 and int(r["jobs_late"]) == late,
              "run %s: deviation %s/%s/%s, recomputed %g/%g/%d" % (r["run"], r["mean_abs_start_delta"],
                                                                   r["max_abs_start_delta"], r["jobs_late"],
                                                                   sum(deltas) / len(deltas), max(deltas), late))
        sched = rows(read(os.path.join(out, "runs", r["run"], "out_schedule.csv")))[0]
        check(float(sched["makespan"]) == float(r["makespan"]), "run %s: makespan %s, its _schedule.csv %s" %
              (r["run"], r["makespan"], sched["makespan"]))
    # Each run's log starts with its command; the non-exact runs end past 10 x their reference's
    # makespan (--sim-limit's default), the references have no limit.
    for r in refs + others:
        first = read(os.path.join(out, "runs", r["run"], "run.log")).splitlines()[0]
        check(first.startswith("$ ") and " run -q -e " in first, "run.log of %s starts with %r" % (r["run"], first))
        if r["reference"] == "1":
            check("--max-sim-time" not in first, "the reference %s has a simulated-time limit" % r["run"])
        else:
            ref = [x for x in refs if x["period"] == r["period"]][0]
            want = "--max-sim-time=%.6f" % (10 * float(ref["makespan"]))
            check(want in first, "%s: expected %s in its command: %s" % (r["run"], want, first))
    # With 2 ms of CPU per decision and a 1 ms budget, some decision comes late.
    check(any(int(r["jobs_late"]) > 0 for r in others if r["timeout"] == "1"),
          "no late job at timeout=1 with a 2 ms decision cost: the trade-off does not show")
    shead, summary = table(os.path.join(out, "summary.csv"))
    check(shead == SUMMARY_COLUMNS[:1] + ["timeout", "period"] + SUMMARY_COLUMNS[1:], "summary.csv columns: %s" % shead)
    check(len(summary) == 6, "%d summary rows, expected 6 (2 references + 4 configurations)" % len(summary))
    for s in summary:
        mine = [r for r in runs if r["timeout"] == s["timeout"] and r["period"] == s["period"]]
        check(int(s["runs"]) == len(mine) == (1 if s["reference"] == "1" else 2) and int(s["ok"]) == len(mine),
              "summary row %s" % s)
        ms = [float(r["makespan"]) for r in mine]
        mean = sum(ms) / len(ms)
        check(abs(float(s["makespan_mean"]) - mean) < 1e-6, "makespan_mean %s, runs give %g" % (s["makespan_mean"], mean))
        if len(ms) == 2:
            sd = abs(ms[0] - ms[1]) / 2 ** 0.5
            check(abs(float(s["makespan_sd"]) - sd) < 1e-6 and abs(float(s["makespan_ci95"]) - 12.706 * sd / 2 ** 0.5) < 1e-3,
                  "makespan sd/ci95 %s/%s for %s" % (s["makespan_sd"], s["makespan_ci95"], ms))
        ref = [r for r in refs if r["period"] == s["period"]][0]
        check(abs(float(s["makespan_vs_exact"]) - (mean - float(ref["makespan"]))) < 1e-6, "makespan_vs_exact %s" % s)
        check(float(s["crash_rate"]) == 0, "crash_rate %s" % s["crash_rate"])
    plots = os.path.join(out, "plots")
    for param in ("timeout", "period"):
        for metric in METRICS + ["failure_rate"]:
            base = os.path.join(plots, "small_8_%s-vs-%s" % (metric, param))
            check_png(base + ".png")
            check_svg(base + ".svg")
    dat = read(os.path.join(plots, "small_8_makespan-vs-timeout.dat"))
    check(dat.count("# period=1\n") >= 1 and dat.count("# period=2\n") >= 1,
          "makespan-vs-timeout: a curve per period expected:\n" + dat)
    check("exact reference" in read(os.path.join(plots, "small_8_makespan-vs-timeout.gp")), "no reference line")


def placeholder(c):
    """--param period=... fills {period}: each run's schedule is that of its own `vtime run`."""
    out = c.path("ph")
    c.sweep(out, ["period=1,2,5"], ["--period", "{period}"], ["--sync", "exact"])
    _, runs = table(os.path.join(out, "runs.csv"))
    check(sorted(r["period"] for r in runs) == ["1", "2", "5"], "runs: %s" % [r["period"] for r in runs])
    for r in runs:
        prefix = c.path("direct-%s" % r["period"])
        c.run([c.a.vtime, "run", "-q", "--hosts", "2", "-w", WORKLOAD, "-e", prefix, "--",
               c.a.periodic_fcfs, "-s", "{endpoint}", "--period", r["period"]], "run")
        mine = read(os.path.join(out, "runs", r["run"], "out_jobs.csv"))
        check(mine == read(prefix + "_jobs.csv"), "period %s: the sweep's _jobs.csv differs from vtime run's" % r["period"])
    distinct = {read(os.path.join(out, "runs", r["run"], "out_jobs.csv")) for r in runs}
    check(len(distinct) == 3, "the three periods gave %d distinct schedules: {period} was not substituted" % len(distinct))


def resume(c):
    """Ctrl-C keeps finished runs; --resume runs only the missing ones; the result equals an
    uninterrupted sweep's (exact rows byte-identical but for the wall time)."""
    params = ["timeout=2,4", "period=1,2"]
    args = ["--period", "{period}", "--decision-cost", "1"]
    extra = ["--repeat", "2", "-j", "1", "--no-plots"]
    whole = c.path("whole")
    c.sweep(whole, params, args, extra)
    cut = c.path("cut")
    cmd = ([c.a.vtime, "sweep", "--hosts", "2", "-w", WORKLOAD, "-o", cut] +
           sum((["--param", p] for p in params), []) + extra + ["--", c.a.periodic_fcfs, "-s", "{endpoint}"] + args)
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs_dir = os.path.join(cut, "runs")
    deadline = time.time() + 120
    while time.time() < deadline:
        done = [d for d in os.listdir(runs_dir) if os.path.exists(os.path.join(runs_dir, d, "result.json"))] \
            if os.path.isdir(runs_dir) else []
        if len(done) >= 3:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    sys.stderr.write(err)
    check(p.returncode == 130, "interrupted sweep exited %d, expected 130" % p.returncode)
    check("--resume" in err, "the interrupted sweep does not say how to finish it:\n" + err)
    _, before = table(os.path.join(cut, "runs.csv"))
    total = 2 + 8
    check(3 <= len(before) < total, "%d runs kept after Ctrl-C, expected 3..%d" % (len(before), total - 1))
    kept = {r["run"]: os.stat(os.path.join(runs_dir, r["run"], "result.json")).st_mtime_ns for r in before}
    err = c.sweep(cut, params, args, extra + ["--resume"])
    ran = err.count("] ")
    check(ran == total - len(before), "--resume ran %d runs, %d were missing" % (ran, total - len(before)))
    for run, mtime in kept.items():
        check(os.stat(os.path.join(runs_dir, run, "result.json")).st_mtime_ns == mtime, "--resume ran %s again" % run)
    _, a = table(os.path.join(whole, "runs.csv"))
    _, b = table(os.path.join(cut, "runs.csv"))
    check([r["run"] for r in a] == [r["run"] for r in b], "the runs differ")

    def exact_rows(path):
        with open(path) as f:
            lines = f.read().splitlines()
        return [line.rsplit(",", 1)[0] for line in lines if ",exact,1," in line]

    ea, eb = exact_rows(os.path.join(whole, "runs.csv")), exact_rows(os.path.join(cut, "runs.csv"))
    check(len(ea) == 2 and ea == eb, "exact rows differ:\n%s\n%s" % ("\n".join(ea), "\n".join(eb)))
    for r in a:
        if r["reference"] == "1":
            check(read(os.path.join(whole, "runs", r["run"], "out_jobs.csv")) ==
                  read(os.path.join(cut, "runs", r["run"], "out_jobs.csv")), "%s: _jobs.csv differs" % r["run"])


def failures(c):
    """A scheduler that dies: every run counted as a crash, crash_rate 1, exit 1 (no reference)."""
    out = c.path("fail")
    cmd = [c.a.vtime, "sweep", "--hosts", "2", "-w", WORKLOAD, "-o", out, "--param", "timeout=1,2", "--repeat", "2",
           "--no-plots", "--", "/usr/bin/python3", "-c", "import sys; sys.exit(9)"]
    err = c.run(cmd, "sweep", expect=1)
    check("exact reference" in err, "no word about the failed reference:\n" + err)
    _, runs = table(os.path.join(out, "runs.csv"))
    check(len(runs) == 5 and all(r["status"] == "crash" and r["exit_code"] == "4" for r in runs),
          "runs: %s" % [(r["run"], r["status"], r["exit_code"]) for r in runs])
    _, summary = table(os.path.join(out, "summary.csv"))
    for s in summary:
        check(s["crashes"] == s["finished"] and float(s["crash_rate"]) == 1 and s["makespan_mean"] == "",
              "summary row %s" % s)


BAD = [
    # (what, params, extra options, words the one error line must hold)
    ("unknown parameter", ["foo=1,2"], [], "unknown parameter 'foo'"),
    ("empty range", ["timeout=5:1:1"], [], "empty range"),
    ("empty log range", ["max-timestep=log:1:10:0"], [], "empty range"),
    ("unit mismatch", ["timeout=0ms:100:1ms"], [], "unit mismatch"),
    ("unit on a plain number", ["backoff-factor=2ms,3ms"], [], "takes no unit"),
    ("unknown unit", ["timeout=1kg"], [], "unknown unit"),
    ("empty value", ["timeout=1,,2"], [], "empty value"),
    ("bad text value", ["sync=fast"], [], "fast not in"),
    ("swept and fixed", ["timeout=1,2"], ["--timeout", "3"], "both swept"),
    ("given twice", ["timeout=1", "timeout=2"], [], "given twice"),
    ("unsweepable", ["export=a,b"], [], "cannot sweep 'export'"),
    ("no platform", ["timeout=1"], ["--no-hosts"], "give a platform"),
    ("broken workload", ["timeout=1"], ["--bad-workload"], "small_broken.json"),
]


def bad_input(c):
    broken = c.write("small_broken.json", '{"nb_res": 2, "jobs": [ {"id": "0", ')
    for what, params, extra, words in BAD:
        out = c.path("bad")
        cmd = [c.a.vtime, "sweep"]
        cmd += [] if "--no-hosts" in extra else ["--hosts", "2"]
        cmd += ["-w", broken if "--bad-workload" in extra else WORKLOAD, "-o", out]
        for p in params:
            cmd += ["--param", p]
        cmd += [e for e in extra if e not in ("--no-hosts", "--bad-workload")]
        cmd += ["--", c.a.periodic_fcfs, "-s", "{endpoint}", "--period", "1"]
        err = c.run(cmd, "sweep", expect=2)
        lines = [x for x in err.strip().splitlines() if x]
        check(len(lines) == 1 and words in lines[0], "%s: expected one line with %r, got:\n%s" % (what, words, err))
        check(not os.path.exists(out), "%s: %s was created although nothing may start" % (what, out))
    # {name} in the scheduler's arguments without a --param.
    err = c.run([c.a.vtime, "sweep", "--hosts", "2", "-w", WORKLOAD, "-o", c.path("bad"), "--param", "timeout=1", "--",
                 c.a.periodic_fcfs, "-s", "{endpoint}", "--period", "{period}"], "sweep", expect=2)
    check("{period}" in err, "a {placeholder} without --param: " + err)
    # A DIR holding another sweep: refused, untouched.
    out = c.path("other")
    c.sweep(out, ["period=1"], ["--period", "{period}"], ["--sync", "exact", "--no-plots"])
    before = sorted(os.listdir(os.path.join(out, "runs")))
    err = c.sweep(out, ["period=2"], ["--period", "{period}"], ["--sync", "exact", "--no-plots", "--resume"], expect=2)
    check("holds another sweep" in err, "another sweep's DIR: " + err)
    err = c.sweep(out, ["period=1"], ["--period", "{period}"], ["--sync", "exact", "--no-plots"], expect=2)
    check("--resume" in err, "this sweep's DIR without --resume: " + err)
    check(sorted(os.listdir(os.path.join(out, "runs"))) == before, "the refused sweeps changed " + out)
    os.makedirs(c.path("full"))
    c.write("full/x", "")
    err = c.sweep(c.path("full"), ["period=1"], ["--period", "{period}"], expect=2)
    check("not empty" in err, "a non-empty DIR: " + err)


class PrivateSlurm:
    """A private Slurm cluster of `nodes` one-CPU nodes on loopback, in real time, for the Slurm
    executor's tests; env() is the environment that talks to it (SLURM_CONF)."""

    def __init__(self, d, nodes=3):
        sv.NODES = nodes
        self.cluster = sv.RealCluster(d, ["SchedulerType=sched/builtin", "MinJobAge=600"])

    def __enter__(self):
        try:
            self.cluster.start()
        except sv.SetupError as e:
            raise Failure("the private Slurm cluster did not start: %s" % e)
        return self

    def __exit__(self, *exc):
        self.cluster.stop()

    def env(self):
        return dict(self.cluster.env)

    def tool(self, argv):
        return self.cluster.tool(argv)


def require_slurm():
    if not shutil.which("slurmctld") or not shutil.which("sbatch"):
        raise Skip("Slurm's daemons and client are not installed")


def slow_sweep(c, out, periods, more=()):
    """A sweep on Slurm of exact runs that take seconds each (every pass burns 150 ms of real CPU):
    long enough to be cancelled or interrupted mid-run."""
    params = ["period=" + periods]
    args = ["--period", "{period}", "--decision-cost", "150"]
    extra = ["--sync", "exact", "--no-plots", "--executor", "slurm", "--slurm-poll", "0.5"] + list(more)
    return slurm_sweep_cmd(c, out, params, args, extra)


def running_task(slurm, p, timeout=120):
    """The id of a running task of the queue, once one runs (None if none did before p ended)."""
    deadline = time.time() + timeout
    while time.time() < deadline and p.poll() is None:
        q = slurm.tool(["squeue", "-h", "-r", "-o", "%i %t"])
        running = sorted(line.split()[0] for line in q.stdout.splitlines() if line.endswith(" R"))
        if running:
            return running[0]
        time.sleep(0.2)
    return None


def slurm_sweep_cmd(c, out, params, sched_args, extra):
    cmd = [c.a.vtime, "sweep", "--hosts", "2", "-w", WORKLOAD, "-o", out]
    for p in params:
        cmd += ["--param", p]
    return cmd + list(extra) + ["--", c.a.periodic_fcfs, "-s", "{endpoint}"] + list(sched_args)


def decided_columns(path):
    """A table's lines without the columns that depend on real time (wall_s and its statistics)."""
    with open(path) as f:
        r = list(csv.reader(f))
    keep = [i for i, h in enumerate(r[0]) if not h.startswith("wall_s")]
    return [[row[i] for i in keep] for row in r]


def slurm_executor(c):
    """24 exact runs (12 periods x 2 workloads) as tasks of a Slurm job array, two runs per task, on
    a private 3-node cluster: runs.csv and summary.csv equal the local executor's (-j 2) but for
    the wall-time columns; progress lines are printed; the sweep leaves nothing queued."""
    require_slurm()
    second = c.write("small_8b.json", read(WORKLOAD))
    periods = ["period=1,2,3,4,5,6,7,8,9,10,11,12"]
    args = ["--period", "{period}"]
    common = ["--sync", "exact", "--no-plots", "-w", second]
    local = c.path("local")
    c.run(slurm_sweep_cmd(c, local, periods, args, common + ["-j", "2"]), "local sweep")
    with PrivateSlurm(c.path("cluster")) as slurm:
        out = c.path("on-slurm")
        err = c.run(slurm_sweep_cmd(c, out, periods, args, common + ["--executor", "slurm", "--runs-per-task", "2",
                                                                     "--slurm-poll", "0.5"]),
                    "slurm sweep", env=slurm.env())
        check(err.count("] ") == 24, "24 progress lines expected:\n" + err)
        check("as Slurm job arrays, 2 runs per task" in err, "the sweep does not say how it runs:\n" + err)
        q = slurm.tool(["squeue", "-h"])
        check(q.stdout.strip() == "", "tasks left in the queue:\n" + q.stdout)
        tasks = [f for f in os.listdir(os.path.join(out, "slurm")) if f.endswith(".out")]
        check(len(tasks) == 12, "12 task outputs expected (24 runs, 2 per task), found %d" % len(tasks))
    for name in ("runs.csv", "summary.csv"):
        a, b = decided_columns(os.path.join(local, name)), decided_columns(os.path.join(out, name))
        check(len(a) == (25 if name == "runs.csv" else len(a)) and a == b,
              "%s differs between the local and the Slurm executor:\n%s\n%s" % (name, a, b))
    for r in table(os.path.join(out, "runs.csv"))[1]:
        check(r["status"] == "ok", "run %s: %s" % (r["run"], r["status"]))
        check(read(os.path.join(out, "runs", r["run"], "out_jobs.csv")) ==
              read(os.path.join(local, "runs", r["run"], "out_jobs.csv")), "%s: _jobs.csv differs" % r["run"])


def slurm_cancel(c):
    """A task cancelled mid-run (scancel) is reported as cancelled, with Slurm's state and the
    task's output; --resume runs that run again and only it; a second sweep on the DIR while the
    first runs is refused."""
    require_slurm()
    with PrivateSlurm(c.path("cluster")) as slurm:
        out = c.path("cancel")
        cmd = slow_sweep(c, out, "1,2,3")
        resume_cmd = slow_sweep(c, out, "1,2,3", ["--resume"])
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=slurm.env())
        victim = running_task(slurm, p)
        check(victim is not None, "no task of the sweep ever ran")
        time.sleep(1.5)  # well inside its run
        # A second sweep on the same DIR meanwhile: refused, nothing touched.
        err2 = c.run(resume_cmd, "second sweep", expect=2, env=slurm.env())
        check("another vtime sweep" in err2, "a second sweep on a busy DIR: " + err2)
        r = slurm.tool(["scancel", victim])
        check(r.returncode == 0, "scancel %s: %s" % (victim, r.stderr))
        _, err = p.communicate(timeout=300)
        sys.stderr.write(err)
        check(p.returncode == 4, "the sweep exited %d, expected 4 (a task ended from outside):\n%s" % (p.returncode, err))
        check("--resume runs them again" in err, "the sweep does not say how to finish:\n" + err)
        _, runs = table(os.path.join(out, "runs.csv"))
        cancelled = [r for r in runs if r["status"] == "cancelled"]
        check(len(runs) == 3 and len(cancelled) == 1, "one cancelled run of 3 expected: %s" %
              [(r["run"], r["status"]) for r in runs])
        check("CANCELLED" in err and "cancelled" in err, "no reason for the cancelled run:\n" + err)
        result = read(os.path.join(out, "runs", cancelled[0]["run"], "result.json"))
        check("CANCELLED" in result, "result.json has no reason: " + result)
        kept = {r["run"]: os.stat(os.path.join(out, "runs", r["run"], "result.json")).st_mtime_ns
                for r in runs if r["status"] == "ok"}
        err = c.run(resume_cmd, "resume", env=slurm.env())
        check(err.count("] ") == 1, "--resume ran %d runs, 1 was cancelled:\n%s" % (err.count("] "), err))
        for run, mtime in kept.items():
            check(os.stat(os.path.join(out, "runs", run, "result.json")).st_mtime_ns == mtime, "--resume ran %s again" % run)
        _, runs = table(os.path.join(out, "runs.csv"))
        check(len(runs) == 3 and all(r["status"] == "ok" for r in runs), "after --resume: %s" %
              [(r["run"], r["status"]) for r in runs])


def slurm_interrupt(c):
    """Ctrl-C of a sweep on Slurm: its arrays are cancelled and leave the queue, it exits 130 and
    says how to finish; --resume completes it, every run ok."""
    require_slurm()
    with PrivateSlurm(c.path("cluster")) as slurm:
        out = c.path("interrupt")
        p = subprocess.Popen(slow_sweep(c, out, "1,2,3,4"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=slurm.env())
        check(running_task(slurm, p) is not None, "no task of the sweep ever ran")
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=180)
        sys.stderr.write(err)
        check(p.returncode == 130, "the interrupted sweep exited %d, expected 130:\n%s" % (p.returncode, err))
        check("--resume" in err, "the interrupted sweep does not say how to finish:\n" + err)
        q = slurm.tool(["squeue", "-h"])
        check(q.stdout.strip() == "", "tasks left in the queue after Ctrl-C:\n" + q.stdout)
        c.run(slow_sweep(c, out, "1,2,3,4", ["--resume"]), "resume", env=slurm.env())
        _, runs = table(os.path.join(out, "runs.csv"))
        check(len(runs) == 4 and all(r["status"] == "ok" for r in runs), "after --resume: %s" %
              [(r["run"], r["status"]) for r in runs])


SLURM_BAD = [
    # (what, extra options, exit status, words the one error line must hold)
    ("bad time limit", ["--executor", "slurm", "--time-limit", "1:2:3:4"], 2, "not a Slurm time"),
    ("an argument the sweep sets", ["--executor", "slurm", "--sbatch-arg=--array=0-3"], 2, "sets --array itself"),
    ("no runs per task", ["--executor", "slurm", "--runs-per-task", "0"], 2, "at least 1"),
    ("a Slurm option without the executor", ["--partition", "batch"], 2, "need --executor slurm"),
    ("an unknown executor", ["--executor", "k8s"], 2, "k8s not in {local,slurm}"),
]


def slurm_refuse(c):
    """Malformed executor options, a slurmctld that does not answer, no Slurm tools, a partition
    the cluster does not have: one clear line, a distinct exit status, nothing submitted or
    written."""
    for what, extra, code, words in SLURM_BAD:
        out = c.path("bad")
        err = c.run(slurm_sweep_cmd(c, out, ["period=1"], ["--period", "{period}"], ["--sync", "exact"] + extra),
                    what, expect=code)
        # One line (CLI11's own refusals add "Run with --help for more information.").
        lines = [x for x in err.strip().splitlines() if x and not x.startswith("Run with --help")]
        check(len(lines) == 1 and words in lines[0], "%s: expected one line with %r, got:\n%s" % (what, words, err))
        check(not os.path.exists(out), "%s: %s was created" % (what, out))
    require_slurm()
    ok = ["--sync", "exact", "--executor", "slurm"]
    # A configuration whose slurmctld is not running.
    d = c.path("down")
    os.makedirs(d)
    port = sv.free_ports(2)
    conf = os.path.join(d, "slurm.conf")
    with open(conf, "w") as f:
        f.write(sv.make_slurm_conf(d, port, []))
    env = dict(os.environ, SLURM_CONF=conf)
    out = c.path("bad")
    err = c.run(slurm_sweep_cmd(c, out, ["period=1"], ["--period", "{period}"], ok), "down", expect=3, env=env)
    check("slurmctld does not answer" in err and "nothing was submitted" in err, "slurmctld down: " + err)
    check(not os.path.exists(out), "slurmctld down: %s was created" % out)
    # No Slurm tools in PATH.
    env = dict(os.environ, PATH="/nonexistent")
    err = c.run(slurm_sweep_cmd(c, out, ["period=1"], ["--period", "{period}"], ok), "no tools", expect=3, env=env)
    check("not found in PATH" in err, "no Slurm tools: " + err)
    with PrivateSlurm(c.path("cluster"), nodes=1) as slurm:
        err = c.run(slurm_sweep_cmd(c, out, ["period=1"], ["--period", "{period}"], ok + ["--partition", "nosuch"]),
                    "no partition", expect=3, env=slurm.env())
        check("refuses" in err and "nothing was submitted" in err, "an unknown partition: " + err)
        check(not os.path.exists(out), "an unknown partition: %s was created" % out)
        q = slurm.tool(["squeue", "-h"])
        check(q.stdout.strip() == "", "something was queued:\n" + q.stdout)


CASES = {"grid": grid, "placeholder": placeholder, "resume": resume, "failures": failures, "bad_input": bad_input,
         "slurm_executor": slurm_executor, "slurm_cancel": slurm_cancel, "slurm_interrupt": slurm_interrupt,
         "slurm_refuse": slurm_refuse}

if __name__ == "__main__":
    sys.exit(main(CASES, ["--vtime", "--periodic-fcfs"], lambda a: Case(a, "sweep"), lambda: None))
