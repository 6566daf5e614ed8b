#!/usr/bin/python3
"""Independent real-time Slurm reference (issue 41): a workload run by unmodified Slurm daemons in
real time, built without any of vtime-slurm's conventions.

Each job is submitted by `sbatch --wrap "sleep D"` at its whole-second submission instant (jobs
due at the same second in the workload file's order, as a user's script replaying a trace would),
with no phase alignment to anything; starts and ends come from Slurm's own records (jobcomp/filetxt,
whole seconds). The cluster is private (slurmctld -D and one `slurmd -D -N nX` per node on free
loopback ports, in a private directory) and its slurm.conf is vtime-slurm's generated one with the
user's lines on top (--slurm-conf, the same meaning as `vtime slurm --slurm-conf`). The run is
repeated (--runs, default 3) to measure reality's own spread.

With --vtime, the same workload also goes through `vtime slurm` (twice: the runs must be
identical) and every job's start is compared with the median of the real runs: a job passes when
it is within max(1 s, the real runs' spread) of that median (issue 41's acceptance).

usage: slurm_reference.py -w WORKLOAD [--slurm-conf FILE] [--runs N] [--vtime PATH] [--keep DIR]
       [--debug] [--out FILE.json] [--real-from FILE.json]
exit: 0 done (and with --vtime every job passes), 1 some job off, 2 set-up error.
"""
import argparse
import csv
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import slurm_validation as sv  # noqa: E402 (the private cluster and Slurm's records)
import reference_report as report  # noqa: E402 (the job-by-job comparison, CSV and figure)

ROOT = sv.ROOT


def log(msg):
    print(msg, flush=True)


def load_workload(path):
    """Jobs of a Batsim workload: id, subtime (whole seconds, as sbatch at a second), nodes, delay,
    walltime. Only delay profiles: the real job is `sleep D`."""
    try:
        with open(path) as f:
            wl = json.load(f)
    except (OSError, ValueError) as e:
        raise sv.SetupError("workload %s: %s" % (path, e))
    profiles = wl.get("profiles", {})
    jobs = []
    for j in wl.get("jobs", []):
        p = profiles.get(j.get("profile"))
        if not p or p.get("type") != "delay":
            raise sv.SetupError("workload %s: job %s: only delay profiles can run as `sleep`"
                                % (path, j.get("id")))
        jobs.append({"id": str(j["id"]), "subtime": float(j["subtime"]), "res": int(j["res"]),
                     "delay": float(p["delay"]), "walltime": float(j.get("walltime", -1))})
    if not jobs:
        raise sv.SetupError("workload %s has no jobs" % path)
    return jobs, int(wl.get("nb_res", 0))


def delays(jobs):
    return {j["id"]: j["delay"] for j in jobs}


def real_run(jobs, nodes, extra, work, tag, debug, conf_seen, latencies, clocks):
    d = os.path.join(work, tag)
    sv.NODES = nodes
    if debug:
        extra = extra + ["SlurmctldDebug=debug3", "SlurmdDebug=debug4", "LogTimeFormat=iso8601_ms"]
    c = sv.RealCluster(d, extra)
    try:
        c.start()
        # The origin: a whole second, a few seconds after every node is idle (slurmctld's start-up
        # scheduling over), not aligned with anything of Slurm's.
        origin = math.floor(time.time()) + 5
        # Where the run fell on the wall clock: backfill rounds its plans to bf_resolution (60 s)
        # of absolute time, so the origin's second within its minute is one more arbitrary phase.
        clocks.append({"origin": origin, "slurmctld_start": round(c.t_ctld, 3)})
        ids = {}
        lags = []
        last_note = time.monotonic()
        for j in jobs:  # the workload file's order: ties submitted as listed
            due = origin + math.floor(j["subtime"])
            time.sleep(max(0.0, due - time.time()))
            lags.append(time.time() - due)
            argv = ["sbatch", "--parsable", "-J", j["id"], "-N", str(j["res"]), "-o", "/dev/null",
                    "-D", d]
            if j["walltime"] > 0:
                argv += ["--time", str(math.ceil(j["walltime"] / 60))]
            argv += ["--wrap", "sleep %g" % j["delay"]]
            r = c.tool(argv)
            if r.returncode != 0:
                raise sv.SetupError("sbatch refused job %s: %s" % (j["id"], r.stderr.strip()))
            ids[j["id"]] = r.stdout.strip().split(";")[0]
            c.check_alive()
            if time.monotonic() - last_note >= 15:
                last_note = time.monotonic()
                log("  real %s: %d of %d jobs submitted, %.0f s since the origin" % (tag, len(ids), len(jobs), time.time() - origin))
        jc = os.path.join(d, "jobcomp.txt")
        last = [time.monotonic()]

        def finished():
            n = len(sv.jobcomp_records(jc))
            if time.monotonic() - last[0] >= 15:
                last[0] = time.monotonic()
                log("  real %s: %d of %d jobs finished, %.0f s since the origin" % (tag, n, len(jobs), time.time() - origin))
            return n >= len(jobs)

        c.wait_until("every job to finish", finished, 3600)
        recs = sv.jobcomp_records(jc)
        out = {}
        for j in jobs:
            r = recs.get(j["id"])
            if not r or r.get("JobState") != "COMPLETED" or r["StartTime"] is None:
                raise sv.SetupError("real run %s: job %s did not complete: %s" % (tag, j["id"], r))
            out[j["id"]] = (r["StartTime"] - origin, r["EndTime"] - origin)
        log("  real %s: submissions late by at most %.3f s" % (tag, max(lags)))
        settings = sv.conf_settings(c.conf_text, d, c.port)
        if debug:  # the debug lines are the harness's own, not the configuration's
            settings -= {"SlurmctldDebug=debug3", "SlurmdDebug=debug4", "LogTimeFormat=iso8601_ms"}
        conf_seen.append(sorted(settings))
        latencies.append(sv.slurm_latencies(os.path.join(d, "log", "slurmctld.log"), jc, delays(jobs)))
        log("  real %s: %s" % (tag, sv.describe_latencies(latencies[-1])))
        return out
    finally:
        c.stop()


def vtime_epoch(vtime_args):
    """The wall-clock second of the tree's virtual time 0: vtime's default, or an --epoch given
    to `vtime slurm` (ISO-8601, UTC unless it says otherwise)."""
    for i, arg in enumerate(vtime_args):
        text = arg[len("--epoch="):] if arg.startswith("--epoch=") else (
            vtime_args[i + 1] if arg == "--epoch" and i + 1 < len(vtime_args) else None)
        if text is not None:
            try:
                when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise sv.SetupError("--epoch %s: not an ISO-8601 time this harness can place vtime's records by" % text)
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.timezone.utc)
            return int(when.timestamp())
    return sv.VTIME_EPOCH


def vtime_run(vtime, wl, jobs, extra_path, nodes, work, tag, bridge_args=(), vtime_args=()):
    prefix = os.path.join(work, tag)
    cmd = [vtime, "slurm", "--hosts", str(nodes), "-w", wl, "-e", prefix, "-q"]
    if extra_path:
        cmd += ["--slurm-conf", extra_path]
    cmd += list(vtime_args)
    if bridge_args:
        cmd += ["--"] + list(bridge_args)
    t0 = time.monotonic()
    env = dict(os.environ, VTIME_LOG="broker=info")  # for the "set-up took" line
    r = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise sv.SetupError("vtime slurm exited %d:\n%s" % (r.returncode, r.stderr.strip()[-3000:]))
    # Slurm's own records, as for the real runs, from the whole second of the tree's clock nearest
    # Batsim's time 0 (vtime-slurm's set-up ends 50 ms before a whole second, docs/slurm.md).
    m = re.findall(r"set-up took (\d+) ns of virtual time", r.stderr)
    setup = int(m[-1]) / 1e9 if m else 0.0
    recs = sv.jobcomp_records(prefix + "_slurm/jobcomp.txt")
    out = {}
    with open(prefix + "_jobs.csv") as f:
        for row in csv.DictReader(f):
            out[row["job_id"]] = (float(row["starting_time"]), float(row["finish_time"]))
    origin = vtime_epoch(vtime_args) + round(setup)
    slurm = {n: (rec["StartTime"] - origin, rec["EndTime"] - origin)
             for n, rec in recs.items() if rec["StartTime"] is not None}
    with open(prefix + "_slurm/slurm.conf") as f:
        text = f.read()
    port = int(re.search(r"SlurmctldPort=(\d+)", text).group(1))
    conf = sorted(sv.conf_settings(text, prefix + "_slurm", port))
    lat = sv.slurm_latencies(prefix + "_slurm/log/slurmctld.log", prefix + "_slurm/jobcomp.txt", delays(jobs))
    return {"batsim": out, "slurm": slurm, "setup": setup, "origin": origin, "wall": time.monotonic() - t0,
            "conf": conf, "latencies": lat}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    report.add_options(ap, "slurm")
    ap.add_argument("--slurm-conf", metavar="FILE", help="slurm.conf lines on top of the generated ones")
    ap.add_argument("--nodes", type=int, default=0, help="nodes of the cluster (default: the workload's nb_res)")
    ap.add_argument("--debug", action="store_true", help="Slurm's debug logs with millisecond times")
    a = ap.parse_args()
    if os.geteuid() != 0:
        log("slurm_reference: the real-time cluster needs root (slurmd)")
        return 2
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    for tool in ("slurmctld", "slurmd", "sbatch", "scontrol", "sinfo"):
        if not shutil.which(tool):
            log("slurm_reference: %s is not installed (Debian: slurmctld slurmd slurm-client)" % tool)
            return 2
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="vtime-slurm-reference-")
    os.makedirs(work, exist_ok=True)
    try:
        jobs, nb_res = load_workload(a.workload)
        extra = sv.extra_lines(a.slurm_conf) if a.slurm_conf else []
        nodes = a.nodes or nb_res or max(j["res"] for j in jobs)
        log("workload %s: %d jobs on %d nodes; %d real-time runs" % (a.workload, len(jobs), nodes, a.runs))
        real, conf_seen, latencies, clocks = [], [], [], []
        if a.real_from:
            saved, real = report.load_real(a.real_from)
            if saved.get("slurm_conf") != extra:
                raise sv.SetupError("%s was made with other slurm.conf lines: %s" % (a.real_from, saved.get("slurm_conf")))
            conf_seen = saved.get("conf", [])
            latencies = saved.get("latencies", [])
            clocks = saved.get("clocks", [])
            a.runs = 0
            log("  %d real runs from %s" % (len(real), a.real_from))
        for i in range(a.runs):
            t0 = time.monotonic()
            real.append(real_run(jobs, nodes, extra, work, "real%d" % (i + 1), a.debug, conf_seen, latencies, clocks))
            log("  real run %d of %d: %.0f s" % (i + 1, a.runs, time.monotonic() - t0))
        result = {"workload": os.path.abspath(a.workload), "slurm_conf": extra, "real": real,
                  "conf": conf_seen[:1], "latencies": latencies, "clocks": clocks}
        status = 0
        if a.vtime:
            vt = [vtime_run(os.path.abspath(a.vtime), a.workload, jobs, a.slurm_conf, nodes, work, "vtime%d" % k,
                            a.bridge_arg, a.vtime_arg)
                  for k in (1, 2)]
            same = vt[0]["batsim"] == vt[1]["batsim"]
            if conf_seen and set(conf_seen[0]) != set(vt[0]["conf"]):
                raise sv.SetupError("the real runs' slurm.conf differs from vtime-slurm's:\n  only real: %s\n  only vtime: %s"
                                    % (sorted(set(conf_seen[0]) - set(vt[0]["conf"])),
                                       sorted(set(vt[0]["conf"]) - set(conf_seen[0]))))
            result["vtime"] = [v["slurm"] for v in vt]
            # What decides the races that chain jobs, side by side (docs/slurm.md): the real
            # cluster's latencies against those vtime-slurm charges.
            log("\nlatencies in slurmctld's log:")
            for i, lat in enumerate(latencies):
                log("  real run %d: %s" % (i + 1, sv.describe_latencies(lat)))
            log("  vtime:      %s" % sv.describe_latencies(vt[0]["latencies"]))
            log("\nthe origin on the wall clock (backfill rounds its plans to whole minutes of it):")
            for i, ck in enumerate(clocks):
                log("  real run %d: %2d s past a minute, %.1f s after slurmctld's start"
                    % (i + 1, ck["origin"] % 60, ck["origin"] - ck["slurmctld_start"]))
            log("  vtime:      %2d s past a minute, %.1f s after slurmctld's start (`--vtime-arg=--epoch=...` moves it)"
                % (vt[0]["origin"] % 60, vt[0]["setup"]))
            status = report.report(a, jobs, real, vt[0]["slurm"], vt[0]["batsim"], same, vt[0]["wall"],
                                   "; ".join(extra) if extra else "generated slurm.conf", "slurm_reference",
                                   what="vt slurm", csv_column="vtime_start_slurm")
        report.save(a.out, result)
        return status
    except sv.SetupError as e:
        log("slurm_reference: set-up error: %s" % e)
        return 2
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
