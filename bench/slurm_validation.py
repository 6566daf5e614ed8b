#!/usr/bin/python3
"""Validation of vtime-slurm against reality (issue 11, docs/slurm.md "Validation against a bridge-shaped real run").

One small Batsim workload (fixed seed: 8 nodes, jobs of 1-4 nodes that sleep, walltimes,
submissions spread over about a minute) is scheduled twice per Slurm configuration by Debian's
unmodified slurmctld + slurmd:

  * in REAL time, with no vtime at all: a private cluster (slurmctld -D and 8 `slurmd -D -N nX`,
    the slurm.conf vtime-slurm generates, on free loopback ports, in a private directory), each
    job submitted with `sbatch` at its real submission instant, its batch script sleeping for the
    job's delay and stamping its own start and end;
  * through `vtime slurm` (virtual time), which writes Batsim's PREFIX_jobs.csv.

Times are compared relative to each run's own origin: Batsim's time 0 for vtime (which comes
after vtime-slurm's set-up, docs/slurm.md "How it works" point 1), and for the real run the
instant the workload starts. Slurm's timers are phased on slurmctld's start (its 100 ms
background loop, its whole-second clock, the backfill pass every bf_interval=30 s), so the real
origin is placed at the same phase after slurmctld's start as vtime's: slurmctld starts on a whole
second in both runs (the virtual epoch is one), and the real origin follows it by vtime's measured
set-up (~20 ms) plus a multiple of --align seconds (default 30, bf_interval; the real cluster
needs about a second to come up). Otherwise a backfilled job's start would measure which phase
each run happened to get, not vtime. The first job is submitted FIRST_SUB = 5 s after the origin
in both runs (see below). Jobs due at the same instant are submitted in the order vtime-slurm
submitted them (Batsim's order, read from its Slurm job ids): under FCFS the first submitted
starts first, so a different tie order would be a different experiment.

Target: every job starts and finishes within 2 s of its real-time counterpart.

usage: slurm_validation.py [--vtime PATH] [--quick] [--configs builtin,backfill] [--align S] [--keep DIR]
exit: 0 every configuration PASSes, 1 some FAIL, 2 set-up error (missing tool, a daemon failed).
"""
import argparse
import csv
import json
import math
import os
import pwd
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from run_processes import processes_mentioning  # noqa: E402 (the tests' own leftover check)
EXAMPLES = os.path.join(ROOT, "examples", "slurm")
CONFIGS = {"builtin": "fcfs.conf", "backfill": "backfill.conf"}
NODES = 8
SEED = 1
TARGET_S = 2.0
VTIME_EPOCH = 1704067200  # kDefaultEpochNs (libvtime/include/vtime/session.h): virtual time 0
# The first submission comes this long after the origin: longer than batch_sched_delay (3 s), so
# that in both runs slurmctld's own start-up scheduling is over (in virtual time the cluster is
# up only ~20 ms before Batsim's time 0; a job submitted at 0 waits for the rate limit there).
FIRST_SUB = 5


class SetupError(Exception):
    pass


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Workload

def make_workload(path, quick):
    """Fixed seed: n jobs, sizes 1-4, delays 5-24 s, walltimes delay + 10..100 s (Slurm: 1 or 2
    minutes), submissions from FIRST_SUB on, spread so that the run takes about two minutes
    (quick: ~40 s)."""
    rng = random.Random(SEED)
    n, spread = (8, 20) if quick else (22, 60)
    jobs, profiles = [], {}
    for i in range(n):
        size = rng.randint(1, 4)
        delay = rng.randint(5, 24) if not quick else rng.randint(4, 12)
        walltime = delay + rng.randint(10, 100)
        sub = FIRST_SUB + (0 if i == 0 else round(rng.uniform(0, spread)))
        jobs.append({"id": str(i), "subtime": sub, "res": size, "walltime": walltime, "profile": "d%d" % delay})
        profiles["d%d" % delay] = {"type": "delay", "delay": delay}
    jobs.sort(key=lambda j: (j["subtime"], int(j["id"])))
    with open(path, "w") as f:
        json.dump({"nb_res": NODES, "jobs": jobs, "profiles": profiles}, f, indent=1, sort_keys=True)
    return jobs, profiles


# ---------------------------------------------------------------------------------------------
# slurm.conf, as slurm/slurm_conf.cpp generates it

def extra_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


def make_slurm_conf(d, base_port, extra):
    user = pwd.getpwuid(os.getuid()).pw_name
    gen = [
        ("ClusterName", "vtime"), ("SlurmctldHost", "localhost(127.0.0.1)"), ("SlurmctldPort", str(base_port)),
        ("SlurmUser", user), ("SlurmdUser", user), ("AuthType", "auth/none"), ("CredType", "cred/none"),
        ("ProctrackType", "proctrack/pgid"), ("TaskPlugin", "task/none"),
        ("JobAcctGatherType", "jobacct_gather/none"), ("AccountingStorageType", "accounting_storage/none"),
        ("JobCompType", "jobcomp/filetxt"), ("JobCompLoc", d + "/jobcomp.txt"), ("StateSaveLocation", d + "/state"),
        ("SlurmdSpoolDir", d + "/spool/%n"), ("SlurmctldPidFile", d + "/slurmctld.pid"),
        ("SlurmdPidFile", d + "/slurmd-%n.pid"), ("SlurmctldLogFile", d + "/log/slurmctld.log"),
        ("SlurmdLogFile", d + "/log/slurmd-%n.log"), ("SelectType", "select/linear"), ("MpiDefault", "none"),
        ("ReturnToService", "2"), ("MailProg", "/bin/true"), ("EnforcePartLimits", "ALL"),
    ]
    keys = {l.split("=", 1)[0].strip().lower() for l in extra}
    out = ["# Generated by bench/slurm_validation.py like vtime-slurm's (slurm/slurm_conf.cpp)."]
    out += ["%s=%s" % (k, v) for k, v in gen if k.lower() not in keys]
    for i in range(NODES):
        out.append("NodeName=n%d NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=1 State=UNKNOWN"
                   % (i, base_port + 1 + i))
    if "partitionname" not in keys:
        out.append("PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    if extra:
        out.append("# EXTRA")
    out += extra
    return "\n".join(out) + "\n"


def conf_settings(text, d, port):
    """The settings of a slurm.conf with its directory and ports made neutral, for comparison."""
    out = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        line = line.replace(d, "DIR")
        line = re.sub(r"(SlurmctldPort=)\d+", r"\1PORT", line)
        m = re.match(r"NodeName=n(\d+) (.*)Port=(\d+)(.*)", line)
        if m:
            line = "NodeName=n%s %sPort=PORT+%d%s" % (m.group(1), m.group(2), int(m.group(3)) - port, m.group(4))
        out.add(line)
    return out


def free_ports(n):
    """A run of n free TCP ports on 127.0.0.1."""
    start = 20000 + (os.getpid() * 37) % 20000
    for base in range(start, 60000, n + 3):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise SetupError("no run of %d free ports on 127.0.0.1" % n)


# ---------------------------------------------------------------------------------------------
# Slurm's job records (jobcomp/filetxt)

def jobcomp_records(path):
    """Name -> {StartTime, EndTime, SubmitTime (epoch s), JobState, JobId} from jobcomp.txt."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            rec = {}
            # Values have no spaces except Name= (ours have none).
            for m in re.finditer(r"(\w+)=(\S*)", line):
                rec[m.group(1)] = m.group(2)
            if "Name" not in rec:
                continue
            for k in ("StartTime", "EndTime", "SubmitTime"):
                v = rec.get(k, "")
                try:
                    rec[k] = time.mktime(time.strptime(v, "%Y-%m-%dT%H:%M:%S"))
                except ValueError:
                    rec[k] = None
            out[rec["Name"].split("!", 1)[-1]] = rec  # the Batsim id: "w0!3" -> "3"
    return out


def slurm_latencies(log_path, jobcomp_path, delays):
    """The two latencies vtime-slurm models, as a slurmctld's own log shows them (real or virtual:
    docs/slurm.md "What Slurm's settings mean in virtual time"), or None where the log is missing:
    - the job start latency: from `sched: Allocate` to `_job_complete: ... done`, less the job's
      `sleep` (`delays`: Batsim id -> seconds): the launch and the teardown; median, range, and
      the medians of the jobs started alone and with others in one pass;
    - the drift of slurmctld's background passes, seconds per second: the passes that allocate
      come whole seconds apart plus what their ten 100 ms sleeps and their own work lost.
    Whether a job chained behind another starts in the second of its end depends on the two
    together (the end against the pass a job's length later)."""
    if not os.path.exists(log_path):
        return None
    name = {r.get("JobId"): n for n, r in jobcomp_records(jobcomp_path).items()}
    alloc, done = {}, {}
    stamp = re.compile(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] "
                       r"(?:sched: Allocate JobId=(\d+) |_job_complete: JobId=(\d+) done)")
    with open(log_path, errors="replace") as f:
        for line in f:
            m = stamp.match(line)
            if not m:
                continue
            t = time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S")) + int(m.group(1)[20:]) / 1000
            (alloc if m.group(2) else done).setdefault(m.group(2) or m.group(3), t)
    passes = []  # the passes that allocated: their first instant and their jobs
    for t, j in sorted((t, j) for j, t in alloc.items()):
        if passes and t - passes[-1][0] < 0.5:
            passes[-1][1].append(j)
        else:
            passes.append((t, [j]))
    together = {j for _, js in passes if len(js) > 1 for j in js}
    lat = {j: done[j] - alloc[j] - delays[name[j]] for j in alloc if j in done and name.get(j) in delays}
    if not lat:
        return None

    def med(v):
        v = list(v)
        return statistics.median(v) if v else None
    excess = iters = 0
    for (a, _), (b, _) in zip(passes, passes[1:]):
        k = round(b - a)
        if k >= 1:
            excess += (b - a) - k
            iters += k
    return {"job_start_latency": med(lat.values()), "job_start_latency_range": [min(lat.values()), max(lat.values())],
            "jobs": len(lat), "alone": med(v for j, v in lat.items() if j not in together),
            "together": med(v for j, v in lat.items() if j in together),
            "pass_drift": excess / iters if iters else None, "passes": len(passes)}


def describe_latencies(lat):
    """One line of slurm_latencies' result."""
    if not lat:
        return "no slurmctld.log"
    ms = lambda v: "-" if v is None else "%.1f" % (v * 1e3)  # noqa: E731
    drift = "-" if lat["pass_drift"] is None else "%.2f" % (lat["pass_drift"] * 1e3)
    return ("job start %s ms (%s-%s, %d jobs; alone %s, with others %s), passes drift %s ms/s (%d passes)"
            % (ms(lat["job_start_latency"]), ms(lat["job_start_latency_range"][0]), ms(lat["job_start_latency_range"][1]),
               lat["jobs"], ms(lat["alone"]), ms(lat["together"]), drift, lat["passes"]))


# ---------------------------------------------------------------------------------------------
# The vtime run

def run_vtime(vtime, wl, extra_path, work, tag):
    prefix = os.path.join(work, "vtime-" + tag)
    cmd = [vtime, "slurm", "--hosts", str(NODES), "-w", wl, "-e", prefix, "-q", "--slurm-conf", extra_path]
    env = dict(os.environ, VTIME_LOG="broker=info")
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise SetupError("vtime slurm exited %d:\n%s" % (r.returncode, r.stderr.strip()[-3000:]))
    m = re.findall(r"set-up took (\d+) ns of virtual time", r.stderr)
    setup = int(m[-1]) / 1e9 if m else 0.0
    jobs = {}
    with open(prefix + "_jobs.csv") as f:
        for row in csv.DictReader(f):
            if row["final_state"] != "COMPLETED_SUCCESSFULLY":
                raise SetupError("vtime run: job %s ended %s" % (row["job_id"], row["final_state"]))
            jobs[row["job_id"]] = (float(row["starting_time"]), float(row["finish_time"]))
    recs = jobcomp_records(prefix + "_slurm/jobcomp.txt")
    origin = VTIME_EPOCH + setup
    slurm = {n: (r["StartTime"] - origin, r["EndTime"] - origin) for n, r in recs.items()
             if r["StartTime"] is not None and r["EndTime"] is not None}
    with open(prefix + "_slurm/slurm.conf") as f:
        conf = f.read()
    port = int(re.search(r"SlurmctldPort=(\d+)", conf).group(1))
    # The order in which vtime-slurm submitted jobs due at one instant (Batsim's order, not the
    # workload file's): Slurm's job ids. Under FCFS it decides which of them starts first.
    order = {n: int(r["JobId"]) for n, r in recs.items() if r.get("JobId", "").isdigit()}
    return {"jobs": jobs, "slurm": slurm, "setup": setup, "wall": wall, "order": order,
            "conf": conf_settings(conf, prefix + "_slurm", port)}


# ---------------------------------------------------------------------------------------------
# The real-time run

JOB_SCRIPT = """#!/bin/sh
# $1: seconds to sleep, $2: stamp file. Stamps the job's own start and end (epoch seconds).
echo "start $(date +%s.%N)" > "$2"
sleep "$1"
echo "end $(date +%s.%N)" >> "$2"
"""


class RealCluster:
    def __init__(self, d, extra):
        self.d = d
        self.procs = []
        for sub in ("state", "log", "stamps") + tuple("spool/n%d" % i for i in range(NODES)):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        self.port = free_ports(NODES + 1)
        self.conf_path = os.path.join(d, "slurm.conf")
        self.conf_text = make_slurm_conf(d, self.port, extra)
        with open(self.conf_path, "w") as f:
            f.write(self.conf_text)
        self.script = os.path.join(d, "job.sh")
        with open(self.script, "w") as f:
            f.write(JOB_SCRIPT)
        os.chmod(self.script, 0o755)
        self.env = dict(os.environ, SLURM_CONF=self.conf_path)
        for k in list(self.env):
            if k.startswith(("VTIME", "LD_PRELOAD")):
                del self.env[k]

    def spawn(self, name, argv):
        out = open(os.path.join(self.d, "log", name + ".out"), "w")
        try:
            p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, cwd=self.d)
        finally:
            out.close()
        self.procs.append((name, p))
        return p

    def check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                tail = ""
                lp = os.path.join(self.d, "log", (name if name == "slurmctld" else "slurmd-" + name[7:]) + ".log")
                if os.path.exists(lp):
                    with open(lp) as f:
                        tail = "".join(f.readlines()[-8:])
                raise SetupError("%s (pid %d) exited with %s; end of its log:\n%s" % (name, p.pid, p.returncode, tail))

    def tool(self, argv, timeout=20):
        return subprocess.run(argv, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)

    def wait_until(self, what, ready, timeout):
        end = time.monotonic() + timeout
        while True:
            self.check_alive()
            if ready():
                return
            if time.monotonic() > end:
                raise SetupError("timed out after %d s waiting for %s (logs in %s/log)" % (timeout, what, self.d))
            time.sleep(0.1)

    def start(self):
        # slurmctld starts on a whole second, as it does in virtual time (the virtual epoch is one).
        t_ctld = math.floor(time.time()) + 1
        time.sleep(max(0.0, t_ctld - time.time()))
        self.t_ctld = time.time()
        self.spawn("slurmctld", ["slurmctld", "-D", "-c", "-f", self.conf_path])
        self.wait_until("slurmctld to answer", lambda: self.tool(["scontrol", "ping"]).stdout.find("UP") >= 0, 30)
        for i in range(NODES):
            self.spawn("slurmd n%d" % i, ["slurmd", "-D", "-N", "n%d" % i, "-f", self.conf_path])

        def all_idle():
            r = self.tool(["sinfo", "-h", "-N", "-o", "%N %T"])
            states = [l.split()[1] for l in r.stdout.splitlines() if len(l.split()) == 2]
            return len(states) == NODES and all(s == "idle" for s in states)

        self.wait_until("every node to be idle", all_idle, 60)
        return t_ctld

    def submit(self, job, delay, minutes):
        stamp = os.path.join(self.d, "stamps", "job-%s" % job["id"])
        # Named as vtime-slurm names it (the Batsim id, workload "w0").
        argv = ["sbatch", "--parsable", "-J", "w0!" + job["id"], "-N", str(job["res"]), "-o", "/dev/null",
                "-e", "/dev/null",
                "-D", self.d]
        if minutes > 0:
            argv += ["--time", str(minutes)]
        argv += [self.script, str(delay), stamp]
        r = self.tool(argv)
        if r.returncode != 0:
            raise SetupError("sbatch refused job %s: %s" % (job["id"], r.stderr.strip()))
        return r.stdout.strip().split(";")[0]

    def stop(self):
        """Orderly: `scontrol shutdown` stops slurmctld and every slurmd; then signal what is left."""
        if not self.procs:
            return
        try:
            if any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
                # Jobs still there (an error cut the run short) are cancelled first: a shutdown
                # leaves running jobs alone.
                if self.tool(["squeue", "-h", "-o", "%i"]).stdout.strip():
                    self.tool(["scancel", "--full", "-u", pwd.getpwuid(os.getuid()).pw_name])
                    end = time.monotonic() + 10
                    while time.monotonic() < end and self.tool(["squeue", "-h", "-o", "%i"]).stdout.strip():
                        time.sleep(0.2)
                self.tool(["scontrol", "shutdown"], timeout=10)
            end = time.monotonic() + 15
            while time.monotonic() < end and any(p.poll() is None for _, p in self.procs):
                time.sleep(0.1)
        except (subprocess.TimeoutExpired, OSError):
            pass
        finally:
            self.kill_all()

    def kill_all(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = [(n, p) for n, p in self.procs if p.poll() is None]
            for _, p in alive:
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + 5
            while time.monotonic() < end and any(p.poll() is None for _, p in alive):
                time.sleep(0.05)
        for _, p in self.procs:
            try:
                p.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []
        # Job scripts the cluster started and did not stop (their path is in our directory): their
        # process groups (proctrack/pgid: one per job) are killed too.
        for pid, _ in processes_mentioning(os.path.abspath(self.d)):
            try:
                pgid = os.getpgid(pid)
                if pgid != os.getpgrp():
                    os.killpg(pgid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def run_real(jobs, profiles, extra, work, tag, setup, align, order):
    d = os.path.join(work, "real-" + tag)
    c = RealCluster(d, extra)
    try:
        t_ctld = c.start()
        # The origin: vtime's set-up after slurmctld's start, plus whole seconds (the cluster's
        # start-up in real time), rounded up to a multiple of `align`.
        k = math.ceil(time.time() + 1.0 - t_ctld - setup)
        k = int(math.ceil(k / align) * align)
        origin = t_ctld + setup + k
        log("  real %s: cluster up in %.1f s; origin = slurmctld start + %.3f s; submitting %d jobs"
            % (tag, time.time() - c.t_ctld, origin - c.t_ctld, len(jobs)))
        lags, slurm_ids = [], {}
        for j in sorted(jobs, key=lambda j: (j["subtime"], order.get(j["id"], 1 << 30))):
            due = origin + j["subtime"]
            time.sleep(max(0.0, due - time.time()))
            lags.append(time.time() - due)
            delay = profiles[j["profile"]]["delay"]
            minutes = math.ceil(j["walltime"] / 60) if j.get("walltime", -1) > 0 else 0
            slurm_ids[j["id"]] = c.submit(j, delay, minutes)
            c.check_alive()
        last_sub = time.time() - origin
        jc = os.path.join(d, "jobcomp.txt")
        c.wait_until("every job to finish", lambda: len(jobcomp_records(jc)) >= len(jobs), 600)
        wall = time.time() - origin
        recs = jobcomp_records(jc)
        out, slurm = {}, {}
        for j in jobs:
            stamp = {}
            path = os.path.join(d, "stamps", "job-%s" % j["id"])
            if os.path.exists(path):
                with open(path) as f:
                    for line in f:
                        k_, v = line.split()
                        stamp[k_] = float(v) - origin
            r = recs.get(j["id"])
            if not r or r.get("JobState") != "COMPLETED" or "start" not in stamp or "end" not in stamp:
                raise SetupError("real run: job %s did not complete (record %s, stamps %s)" % (j["id"], r, stamp))
            out[j["id"]] = (stamp["start"], stamp["end"])
            slurm[j["id"]] = (r["StartTime"] - origin, r["EndTime"] - origin)
        return {"jobs": out, "slurm": slurm, "lag_max": max(lags), "last_sub": last_sub, "wall": wall,
                "conf": conf_settings(c.conf_text, d, c.port)}
    finally:
        c.stop()


# ---------------------------------------------------------------------------------------------
# Comparison

def metrics(jobs, times):
    waits = [times[j["id"]][0] - j["subtime"] for j in jobs]
    return max(t[1] for t in times.values()), sum(waits) / len(waits)


def compare(tag, jobs, real, vt):
    log("\n== sched/%s: per job (seconds from each run's origin)" % tag)
    log("%4s %4s %5s | %8s %8s %6s | %8s %8s %6s" % ("job", "size", "sub", "real st", "vtime st", "|dst|",
                                                   "real fin", "vtime fin", "|dfin|"))
    ds, df = [], []
    for j in jobs:
        rs, rf = real["jobs"][j["id"]]
        vs, vf = vt["jobs"][j["id"]]
        ds.append(abs(rs - vs))
        df.append(abs(rf - vf))
        log("%4s %4d %5d | %8.3f %8.3f %6.3f | %8.3f %8.3f %6.3f%s" % (
            j["id"], j["res"], j["subtime"], rs, vs, ds[-1], rf, vf, df[-1],
            "  <-- over %g s" % TARGET_S if max(ds[-1], df[-1]) > TARGET_S else ""))
    r_mk, r_wait = metrics(jobs, real["jobs"])
    v_mk, v_wait = metrics(jobs, vt["jobs"])
    # Slurm's own records (whole seconds) of both runs, the same comparison.
    sds = [abs(real["slurm"][j["id"]][0] - vt["slurm"][j["id"]][0]) for j in jobs if j["id"] in vt["slurm"]]
    sdf = [abs(real["slurm"][j["id"]][1] - vt["slurm"][j["id"]][1]) for j in jobs if j["id"] in vt["slurm"]]
    ok = max(ds) <= TARGET_S and max(df) <= TARGET_S
    log("sched/%s: max |start dev| %.3f s (mean %.3f), max |finish dev| %.3f s (mean %.3f); jobs over %g s: %d"
        % (tag, max(ds), sum(ds) / len(ds), max(df), sum(df) / len(df), TARGET_S,
           sum(1 for a, b in zip(ds, df) if max(a, b) > TARGET_S)))
    log("sched/%s: makespan real %.3f s, vtime %.3f s; mean waiting time real %.3f s, vtime %.3f s"
        % (tag, r_mk, v_mk, r_wait, v_wait))
    if sds:
        log("sched/%s: Slurm's own records (jobcomp StartTime/EndTime, whole s, vtime's shifted by its set-up): "
            "max |start dev| %.3f s, max |end dev| %.3f s" % (tag, max(sds), max(sdf)))
    log("sched/%s: real run: submissions late by at most %.3f s; wall %.1f s from origin. vtime: set-up %.3f s "
        "(virtual), wall %.1f s" % (tag, real["lag_max"], real["wall"], vt["setup"], vt["wall"]))
    log("sched/%s: %s (target: every job within %g s)" % (tag, "PASS" if ok else "FAIL", TARGET_S))
    return {"ok": ok, "max_ds": max(ds), "max_df": max(df), "mk": (r_mk, v_mk), "wait": (r_wait, v_wait)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vtime", default=os.path.join(ROOT, "build", "release", "cli", "vtime"))
    ap.add_argument("--quick", action="store_true", help="8 jobs over ~40 s: a smoke run")
    ap.add_argument("--configs", default="builtin,backfill", help="comma-separated: builtin, backfill")
    ap.add_argument("--align", type=int, default=30, metavar="SECONDS",
                    help="the real origin comes vtime's set-up plus a multiple of SECONDS after slurmctld's start "
                         "(default 30: bf_interval; 60 also matches sched_interval; 1: only the second's phase)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (logs, slurm.conf, outputs)")
    a = ap.parse_args()

    configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    for c in configs:
        if c not in CONFIGS:
            log("slurm_validation: unknown configuration '%s' (builtin, backfill)" % c)
            return 2
    if os.geteuid() != 0:
        log("slurm_validation: the real-time cluster needs root (slurmd)")
        return 2
    for tool in ("slurmctld", "slurmd", "sbatch", "scontrol", "sinfo"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            log("slurm_validation: %s is not installed (Debian: slurmctld slurmd slurm-client)" % tool)
            return 2
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    if not os.access(a.vtime, os.X_OK):
        log("slurm_validation: no vtime at %s (--vtime PATH)" % a.vtime)
        return 2
    a.vtime = os.path.abspath(a.vtime)

    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        work = os.path.abspath(a.keep)
    else:
        work = tempfile.mkdtemp(prefix="vtime-slurm-validation-")
    results = {}
    try:
        wl = os.path.join(work, "workload.json")
        jobs, profiles = make_workload(wl, a.quick)
        log("workload: %d jobs on %d nodes, sizes %d-%d, delays %d-%d s, last submission at %d s (seed %d)" % (
            len(jobs), NODES, min(j["res"] for j in jobs), max(j["res"] for j in jobs),
            min(p["delay"] for p in profiles.values()), max(p["delay"] for p in profiles.values()),
            max(j["subtime"] for j in jobs), SEED))
        for tag in configs:
            extra_path = os.path.join(EXAMPLES, CONFIGS[tag])
            extra = extra_lines(extra_path)
            log("\n-- sched/%s (EXTRA %s: %s)" % (tag, os.path.relpath(extra_path, ROOT), "; ".join(extra)))
            vt = run_vtime(a.vtime, wl, extra_path, work, tag)
            log("  vtime %s: done in %.1f s of wall time, set-up %.6f s of virtual time" % (tag, vt["wall"], vt["setup"]))
            real = run_real(jobs, profiles, extra, work, tag, vt["setup"], max(1, a.align), vt["order"])
            if real["conf"] != vt["conf"]:
                raise SetupError("the real run's slurm.conf differs from vtime-slurm's:\n  only real: %s\n  only vtime: %s"
                                 % (sorted(real["conf"] - vt["conf"]), sorted(vt["conf"] - real["conf"])))
            results[tag] = compare(tag, jobs, real, vt)
    except SetupError as e:
        log("slurm_validation: set-up error: %s" % e)
        return 2
    except subprocess.TimeoutExpired as e:
        log("slurm_validation: set-up error: timed out: %s" % e)
        return 2
    finally:
        left = processes_mentioning(os.path.abspath(work))
        if left:
            log("slurm_validation: processes left running:\n" + "\n".join("%d: %s" % p for p in left))
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    log("\n== summary (target: every job within %g s)" % TARGET_S)
    log("%-10s %12s %12s %21s %21s %6s" % ("config", "max |dst|", "max |dfin|", "makespan real/vtime",
                                           "mean wait real/vtime", ""))
    for tag, r in results.items():
        log("%-10s %10.3f s %10.3f s %9.1f / %7.1f s %9.2f / %7.2f s %6s" % (
            "sched/" + tag, r["max_ds"], r["max_df"], r["mk"][0], r["mk"][1], r["wait"][0], r["wait"][1],
            "PASS" if r["ok"] else "FAIL"))
    return 0 if all(r["ok"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
