#!/usr/bin/python3
"""`vtime trace` on real recorded runs: `vtime run --record` of real schedulers (periodic_fcfs,
the tiny in-tree schedulers of tests/sim), then every trace command on the trace, its .zst form
and damaged copies of it.

usage: trace_cases.py CASE --vtime VTIME --periodic-fcfs BIN    (or --list)
Exit status: 0 pass ("PASS"), 1 fail ("FAIL ..."), 77 skipped (this vtime has no --record).
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

from recorded import PLATFORM16, PYTHON, ROOT, SPACED, Failure, Scratch, check

DATA = os.path.join(ROOT, "tests", "data", "batsim-4.2.1", "inputs")
TINY = os.path.join(ROOT, "tests", "sim", "tiny_schedulers.py")
TIMEOUT = 60


class Env(Scratch):
    def __init__(self, args):
        super().__init__(args, "vtime-trace-cases-")
        self.periodic = args.periodic_fcfs

    def record(self, name, sched, platform=None, hosts=None, workload=SPACED):
        """`vtime run --record`; returns (trace path, _jobs.csv text)."""
        prefix, trace = self.path(name), self.path(name + ".trace")
        where = ["-p", platform] if platform else ["--hosts", str(hosts)]
        cmd = [self.vtime, "run", "-q"] + where + ["-w", workload, "-e", prefix, "--record", trace, "--"] + sched
        r = subprocess.run(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(r.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
        with open(prefix + "_jobs.csv") as f:
            return trace, f.read()

    def periodic_run(self, name, period):
        return self.record(name, [self.periodic, "-s", "{endpoint}", "--period", str(period)], platform=PLATFORM16)

    def trace(self, *args, rc=0, env=None):
        """`vtime trace ARGS`; checks the exit status, returns (stdout, stderr)."""
        r = subprocess.run([self.vtime, "trace"] + [str(a) for a in args], capture_output=True, timeout=TIMEOUT,
                           env=env)
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        check(r.returncode == rc, "vtime trace %s exited %d, expected %d\nstdout: %s\nstderr: %s"
              % (" ".join(map(str, args)), r.returncode, rc, out[-2000:], err[-2000:]))
        return out, err, r.stdout


def same_text(got, want, what):
    if got == want:
        return
    g, w = got.splitlines(), want.splitlines()
    for i, (a, b) in enumerate(zip(g, w)):
        check(a == b, "%s: line %d differs\n  export:    %s\n  simulator: %s" % (what, i + 1, a, b))
    check(False, "%s: %d lines, the simulator wrote %d" % (what, len(g), len(w)))


def jobs_csv_periodic(env):
    trace, jobs = env.periodic_run("p1", 1)
    out, _, _ = env.trace("export", trace, "-f", "jobs-csv")
    same_text(out, jobs, "jobs-csv of periodic_fcfs --period 1")
    env.trace("compress", trace)
    out, _, _ = env.trace("export", trace + ".zst", "-f", "jobs-csv", "-o", env.path("from_zst.csv"))
    with open(env.path("from_zst.csv")) as f:
        same_text(f.read(), jobs, "jobs-csv of the compressed trace")


def tiny(behaviour):
    def case(env):
        platform = os.path.join(DATA, "energy_platform_homogeneous_no_net_128.xml")
        trace, jobs = env.record(behaviour, [PYTHON, TINY, behaviour, "{endpoint}"], platform=platform,
                                 workload=os.path.join(DATA, "wl20.json"))
        out, _, _ = env.trace("export", trace, "-f", "jobs-csv")
        same_text(out, jobs, "jobs-csv of the %s run" % behaviour)
        states = {r["final_state"] for r in csv.DictReader(io.StringIO(jobs))}
        want = {"rejecter": "REJECTED", "killer": "COMPLETED_KILLED", "decision_time": "COMPLETED_SUCCESSFULLY"}
        check(want[behaviour] in states, "the %s run has no %s job: %s" % (behaviour, want[behaviour], states))
    return case


def records(env, trace, type_):
    out, _, _ = env.trace("show", trace, "--type", type_, "--json")
    return [json.loads(l) for l in out.splitlines()]


def show_stats_validate(env):
    trace, jobs = env.periodic_run("p1", 1)
    n_jobs = len(jobs.splitlines()) - 1
    env.trace("compress", trace, "-o", env.path("p1.zst"))
    for t in (trace, env.path("p1.zst")):
        out, _, _ = env.trace("validate", t)
        check(": ok: " in out and "complete (run status ok, exit code 0)" in out, "validate %s: %s" % (t, out))
        st = json.loads(env.trace("stats", t, "--json")[0])
        check(st["jobs"]["submitted"] == n_jobs and st["jobs"]["completed"] == n_jobs,
              "stats %s: jobs %s, expected %d" % (t, st["jobs"], n_jobs))
        check(st["decisions"].get("EXECUTE_JOB") == n_jobs, "stats %s: decisions %s" % (t, st["decisions"]))
        check(st["timers"]["arm"] > 0 and st["advances"].get("timer", 0) > 0, "stats %s: no timer activity" % t)
        check(st["trailer"]["status"] == "ok" and st["problems"] == [], "stats %s: %s" % (t, st["trailer"]))
        out, _, _ = env.trace("show", t, "--type", "decision")
        check(len(out.splitlines()) == n_jobs and "EXECUTE_JOB w0!0 alloc 0" in out, "show %s: %s" % (t, out[:500]))
    plain, _, _ = env.trace("show", trace)
    packed, _, _ = env.trace("show", env.path("p1.zst"))
    check(plain == packed, "show differs between the trace and its compressed form")


def perfetto(env):
    trace, jobs = env.periodic_run("p1", 1)
    out, _, _ = env.trace("export", trace, "-f", "perfetto", "-o", env.path("p.json"))
    with open(env.path("p.json")) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    job_ids = {"w0!" + r["job_id"] for r in csv.DictReader(io.StringIO(jobs))}
    ran = {e["name"] for e in events if e["ph"] == "X"}
    check(ran == job_ids, "perfetto jobs: %d of %d, missing %s" % (len(ran & job_ids), len(job_ids),
                                                                   sorted(job_ids - ran)[:5]))
    msgs = {r["seq"]: r for r in records(env, trace, "msg")}
    shown = {e["args"]["seq"]: e for e in events if e["ph"] == "i" and e.get("cat") == "msg"}
    check(set(shown) == set(msgs), "perfetto holds %d messages, the trace %d" % (len(shown), len(msgs)))
    for seq, rec in msgs.items():
        check(shown[seq]["args"].get("bytes") == rec.get("bytes"), "message %d: bytes differ" % seq)
        check(abs(shown[seq]["ts"] - rec["t"] / 1000.0) < 1e-3, "message %d: ts %s" % (seq, shown[seq]["ts"]))
    begins = sum(1 for e in events if e["ph"] == "b")
    ends = sum(1 for e in events if e["ph"] == "e")
    check(begins > 0 and begins == ends, "timer spans: %d begins, %d ends" % (begins, ends))


def gantt(env):
    trace, _ = env.periodic_run("p1", 1)
    env.trace("export", trace, "-f", "gantt")  # default: TRACE.png
    with open(trace + ".png", "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the gantt chart is not a PNG")
    env.trace("export", trace, "-f", "gantt", "-o", env.path("g.svg"))
    with open(env.path("g.svg")) as f:
        check("<svg" in f.read(), "the .svg chart is not SVG")
    no_gnuplot = dict(os.environ, PATH=env.dir)
    _, err, _ = env.trace("export", trace, "-f", "gantt", "-o", env.path("x.png"), rc=4, env=no_gnuplot)
    check("cannot run gnuplot" in err, "missing gnuplot: %s" % err)


def damaged(env):
    trace, _ = env.periodic_run("p1", 1)
    with open(trace, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    # Cut in the middle of line 1001.
    cut = b"\n".join(lines[:1000]) + b"\n" + lines[1000][:20]
    with open(env.path("cut.trace"), "wb") as f:
        f.write(cut)
    out, _, _ = env.trace("validate", env.path("cut.trace"), rc=1)
    check("VT005 line 1001" in out and "VT007" in out and "cut short: 999 records recovered" in out,
          "cut trace: %s" % out)
    out, err, _ = env.trace("stats", env.path("cut.trace"), rc=1)
    check("cut short (no trailer)" in out and "VT007" in err, "stats of the cut trace: %s %s" % (out, err))
    # Garbage bytes over line 501.
    start = len(b"\n".join(lines[:500])) + 1
    garbage = data[:start] + b"\x00\xff garbage \x01" + data[start + 12:]
    with open(env.path("garbage.trace"), "wb") as f:
        f.write(garbage)
    out, _, _ = env.trace("validate", env.path("garbage.trace"), rc=1)
    check("VT004 line 501" in out and "499 records recovered" in out, "garbage: %s" % out)
    # Another format version.
    with open(env.path("v9.trace"), "wb") as f:
        f.write(data.replace(b'"version":1', b'"version":9', 1))
    _, err, _ = env.trace("validate", env.path("v9.trace"), rc=3)
    check("VT003" in err and "version 9" in err, "version: %s" % err)
    # A compressed copy cut short.
    env.trace("compress", trace, "-o", env.path("p1.zst"))
    with open(env.path("p1.zst"), "rb") as f:
        z = f.read()
    with open(env.path("cut.zst"), "wb") as f:
        f.write(z[: len(z) // 2])
    out, _, _ = env.trace("validate", env.path("cut.zst"), rc=1)
    check("VT009" in out and "records recovered" in out, "cut .zst: %s" % out)
    # The trailer no longer matches a record changed in place.
    with open(env.path("tampered.trace"), "wb") as f:
        f.write(data.replace(b'"woken":1', b'"woken":2', 1))
    out, _, _ = env.trace("validate", env.path("tampered.trace"), rc=1)
    check("VT008" in out, "tampered: %s" % out)


def diff_periods(env):
    a, _ = env.periodic_run("p1", 1)
    b, _ = env.periodic_run("p3", 3)
    out, _, _ = env.trace("diff", a, b, "--jobs", rc=1)
    check('$.scheduler[4]: "1" vs "3"' in out, "diff: no header difference: %s" % out[:800])
    check("first difference at seq" in out and "deadline" in out, "diff: first difference: %s" % out[:800])
    check(" in time, " in out and "EXECUTE_JOB w0!0: at 1.000000 vs 3.000000" in out, "diff decisions: %s" % out[:2000])
    rows = [l for l in out.splitlines() if l.startswith("w0!")]
    check(rows and rows[0].split()[:4] == ["w0!0", "1.000000", "3.000000", "+2.000000"], "diff --jobs: %s" % rows[:3])
    j = json.loads(env.trace("diff", a, b, "--json", rc=1)[0])
    check(not j["identical"] and j["decisions"]["differ"] > 0 and j["jobs"]["differ"] > 0, "diff --json: %s" % j)
    out, _, _ = env.trace("diff", a, a)
    check(out.startswith("identical: "), "diff of a trace with itself: %s" % out)
    env.trace("compress", a)
    out, _, _ = env.trace("diff", a, a + ".zst")
    check(out.startswith("identical: "), "diff of a trace with its .zst: %s" % out)


CASES = {
    "jobs_csv_periodic": jobs_csv_periodic,
    "jobs_csv_rejecter": tiny("rejecter"),
    "jobs_csv_killer": tiny("killer"),
    "jobs_csv_decision_time": tiny("decision_time"),
    "show_stats_validate": show_stats_validate,
    "perfetto": perfetto,
    "gantt": gantt,
    "damaged": damaged,
    "diff_periods": diff_periods,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", nargs="?", default="--list")
    p.add_argument("--list", action="store_true")
    p.add_argument("--vtime")
    p.add_argument("--periodic-fcfs")
    args = p.parse_args()
    if args.list or args.case == "--list":
        print("\n".join(CASES))
        return 0
    helptext = subprocess.run([args.vtime, "run", "--help"], capture_output=True, text=True).stdout
    if "--record" not in helptext:
        print("SKIP: this vtime run has no --record")
        return 77
    if args.case not in CASES:
        print("FAIL: unknown case %s" % args.case)
        return 2
    env = Env(args)
    try:
        CASES[args.case](env)
        print("PASS %s" % args.case)
        return 0
    except Failure as e:
        print("FAIL %s: %s" % (args.case, e))
        return 1
    except subprocess.TimeoutExpired as e:
        print("FAIL %s: timed out: %s" % (args.case, e))
        return 1
    finally:
        env.cleanup()


if __name__ == "__main__":
    sys.exit(main())
