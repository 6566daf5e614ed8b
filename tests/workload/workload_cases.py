#!/usr/bin/python3
"""`vtime workload` end to end (issue 14's acceptance): the real `vtime` on project-written SWF
samples (sample.swf: a header, comments, a blank line and every kind of job the conversion drops),
every from-swf option checked against an independent conversion written here in Python, gz input,
byte-identical repeats, the error cases with their line numbers, the window selection recomputed
here, and a converted sample scheduled exactly through `vtime run`. One case per ctest test:

    workload_cases.py CASE --vtime BIN --event-fcfs BIN --periodic-fcfs BIN     (or --list)
"""
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bridge_cases import BridgeCase, Failure, check, main, read, rows  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "sample.swf")


# --- An independent reading of SWF and of the conversion rules (docs/workloads.md) -------------

def parse_swf(text):
    """(header dict, jobs as lists of 18 numbers) of a well-formed trace."""
    header, jobs = {}, []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith(";"):
            m = re.match(r";\s*(\w+):\s*(.*?)\s*$", s)
            if m:
                header[m.group(1)] = m.group(2)
            continue
        jobs.append([float(x) for x in s.split()])
    return header, jobs


def procs(j):
    return int(j[4]) if j[4] > 0 else int(j[7]) if j[7] > 0 else -1


STATUS = {"completed": {1}, "failed": {0}, "cancelled": {5}, "partial": {2, 3, 4}, "unknown": {-1}}


def utilisation(jobs, start, length, capacity):
    """Mean busy processors over [start, start+length) / capacity; a job is busy from
    submit + max(0, wait) for its run time."""
    busy = 0.0
    for j in jobs:
        if j[3] <= 0 or procs(j) <= 0:
            continue
        s = j[1] + max(0.0, j[2])
        e = s + j[3]
        busy += procs(j) * max(0.0, min(e, start + length) - max(s, start))
    return busy / (length * capacity)


def convert(text, window=None, window_length=None, util=None, max_duration=None, ppn=None, hosts=None,
            too_big="cap", walltime="requested", status="completed,failed,cancelled,unknown", shift=False):
    """The Batsim workload (a dict) and the chosen window, as docs/workloads.md defines them."""
    header, jobs = parse_swf(text)
    keep = set()
    for s in status.split(","):
        keep |= STATUS[s] if s in STATUS else {int(s)}
    kept = [j for j in jobs if int(j[10]) in keep and not (int(j[10]) == 5 and j[3] <= 0)
            and j[3] >= 0 and j[1] >= 0 and procs(j) >= 1]
    kept.sort(key=lambda j: j[1])  # stable
    lo, hi, chosen = -math.inf, math.inf, None
    if window:
        lo, hi = window
    if window_length:
        capacity = hosts * ppn if hosts and ppn else int(header["MaxProcs"])
        last = kept[-1][1]
        for t in sorted({j[1] for j in kept}):
            if t + window_length > last:
                break
            u = utilisation(kept, t, window_length, capacity)
            if chosen is None or abs(u - util) < abs(chosen[2] - util) - 1e-12:
                chosen = (t, t + window_length, u)
        lo, hi = chosen[0], chosen[1]
    out, profiles, offset = [], {}, None
    for j in kept:
        if not lo <= j[1] < hi:
            continue
        run = min(j[3], max_duration) if max_duration else j[3]
        res = procs(j)
        if ppn:
            res = -(-res // ppn)
        if hosts and res > hosts:
            if too_big == "drop":
                continue
            if too_big == "cap":
                res = hosts
        if offset is None:
            offset = j[1] if shift else 0
        job = {"id": str(int(j[0])), "subtime": j[1] - offset}
        if walltime == "requested" and j[8] > 0:
            job["walltime"] = j[8]
        elif walltime == "runtime":
            job["walltime"] = run
        elif walltime.startswith("factor:"):
            job["walltime"] = run * float(walltime[7:])
        job["res"] = res
        job["profile"] = "delay%g" % run
        profiles[job["profile"]] = {"type": "delay", "delay": run}
        out.append(job)
    if hosts:
        nb_res = hosts
    elif "MaxProcs" in header and int(header["MaxProcs"]) > 0:
        nb_res = -(-int(header["MaxProcs"]) // (ppn or 1))
    else:
        nb_res = max([1] + [j["res"] for j in out])
    return {"nb_res": nb_res, "jobs": out, "profiles": profiles}, chosen


class Case(BridgeCase):
    timeout = 300

    def vtime(self, args, expect=0, tag="workload"):
        return self.run([self.a.vtime] + args, tag, expect=expect)

    def from_swf(self, trace, args=(), expect=0, name="out.json"):
        """Converts; returns (the output's text or None, stderr)."""
        out = self.path(name)
        if os.path.exists(out):
            os.remove(out)
        err = self.vtime(["workload", "from-swf", trace, "-o", out] + list(args), expect)
        return (read(out) if os.path.exists(out) else None), err


def same_workload(got_text, want, what):
    got = json.loads(got_text)
    # Numbers compare as numbers: 170 and 170.0 are the same subtime.
    check(got["nb_res"] == want["nb_res"], "%s: nb_res %s, expected %s" % (what, got["nb_res"], want["nb_res"]))
    check(len(got["jobs"]) == len(want["jobs"]), "%s: %d jobs, expected %d (%s vs %s)" % (
        what, len(got["jobs"]), len(want["jobs"]), [j["id"] for j in got["jobs"]], [j["id"] for j in want["jobs"]]))
    for g, w in zip(got["jobs"], want["jobs"]):
        check(g == w, "%s: job %s is %s, expected %s" % (what, w["id"], g, w))
    check(got["profiles"] == want["profiles"], "%s: profiles %s, expected %s" % (what, got["profiles"], want["profiles"]))
    # The layout: that of the reference workloads (one-space indent, keys in this order, a final
    # newline), so the files diff well.
    check(got_text == json.dumps(got, indent=1) + "\n", "%s: not in the reference workloads' layout" % what)


# Every option, alone and combined: (command-line options, the reference conversion's arguments).
OPTION_SETS = [
    ([], {}),
    (["--window", "1h:2h"], {"window": (3600, 7200)}),
    (["--window", "100:5000"], {"window": (100, 5000)}),
    (["--max-duration", "30min"], {"max_duration": 1800}),
    (["--procs-per-host", "2"], {"ppn": 2}),
    (["--procs-per-host", "2", "--hosts", "4"], {"ppn": 2, "hosts": 4}),
    (["--procs-per-host", "2", "--hosts", "2", "--too-big", "drop"], {"ppn": 2, "hosts": 2, "too_big": "drop"}),
    (["--hosts", "3", "--too-big", "keep"], {"hosts": 3, "too_big": "keep"}),
    (["--walltime", "runtime"], {"walltime": "runtime"}),
    (["--walltime", "factor:1.5", "--max-duration", "1000"], {"walltime": "factor:1.5", "max_duration": 1000}),
    (["--walltime", "none"], {"walltime": "none"}),
    (["--status", "completed"], {"status": "completed"}),
    (["--status", "cancelled,partial,0"], {"status": "cancelled,partial,0"}),
    (["--shift", "--window", "1h:3h"], {"shift": True, "window": (3600, 10800)}),
    (["--window-length", "1h", "--utilisation", "0.5", "--procs-per-host", "2", "--hosts", "4"],
     {"window_length": 3600, "util": 0.5, "ppn": 2, "hosts": 4}),
    (["--window-length", "50min", "--utilisation", "0.9"], {"window_length": 3000, "util": 0.9}),
]


def options(c):
    """Every from-swf option gives the workload the rules define (recomputed here), in the
    reference workloads' layout, with a report of what was left out and why."""
    text = read(SAMPLE)
    for args, ref in OPTION_SETS:
        got, err = c.from_swf(SAMPLE, args)
        want, chosen = convert(text, **ref)
        same_workload(got, want, " ".join(args) or "defaults")
        m = re.search(r"(\d+) jobs of 12 on (\d+) resources", err)
        check(m and int(m.group(1)) == len(want["jobs"]) and int(m.group(2)) == want["nb_res"],
              "%s: report %r" % (args, err))
        if chosen:
            m = re.search(r"window (\d+):(\d+) s of the trace, utilisation ([0-9.]+)", err)
            check(m and (float(m.group(1)), float(m.group(2))) == chosen[:2] and abs(float(m.group(3)) - chosen[2]) < 1e-4,
                  "%s: the report names %s, the rules pick %s" % (args, m and m.groups(), chosen))
            check("2016-01-01" in err, "%s: the window's date (UnixStartTime) is not reported: %s" % (args, err))
    # The defaults leave out 3 jobs, each for its reason.
    _, err = c.from_swf(SAMPLE)
    for why in ("status not kept", "no run time", "no size"):
        check(("left out: 1 (%s)" % why) in err, "the report does not say 1 job was left out for %r:\n%s" % (why, err))
    # Profiles are shared by identical durations: 9 jobs, 8 durations once capped to 1 h.
    got = json.loads(c.from_swf(SAMPLE, ["--max-duration", "1h"])[0])
    check(len(got["profiles"]) == len({j["profile"] for j in got["jobs"]}) == 8, "profiles: %s" % got["profiles"])
    # -o - writes to stdout.
    p = subprocess.run([c.a.vtime, "workload", "from-swf", SAMPLE, "-o", "-", "-q"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == c.from_swf(SAMPLE)[0] and p.stderr == "", "-o - -q: %r" % p.stderr)


def window(c):
    """--window-length/--utilisation on a bigger synthetic trace: the window taken is the one whose
    utilisation (recomputed here) is closest to the target, the earliest on a tie."""
    trace = c.path("synth.swf")
    c.vtime(["workload", "synth", "-o", trace, "-n", "3000", "--procs", "64", "--seed", "7", "--utilisation", "0.7",
             "--max-runtime", "6h"])
    text = read(trace)
    for target in (0.4, 0.7, 0.95):
        got, err = c.from_swf(trace, ["--window-length", "1d", "--utilisation", str(target), "--shift"])
        header, jobs = parse_swf(text)
        cap = int(header["MaxProcs"])
        kept = sorted(jobs, key=lambda j: j[1])
        last = kept[-1][1]
        us = [(t, utilisation(kept, t, 86400, cap)) for t in sorted({j[1] for j in kept}) if t + 86400 <= last]
        best = min(abs(u - target) for _, u in us)
        first = [t for t, u in us if abs(u - target) <= best + 1e-9][0]
        m = re.search(r"window (\d+):(\d+) s of the trace, utilisation ([0-9.]+)", err)
        check(m is not None, "no window in the report: " + err)
        start, u = float(m.group(1)), float(m.group(3))
        check(start == first, "target %g: took the window at %g (utilisation %g), the closest starts at %g (%g)" % (
            target, start, u, first, dict(us)[first]))
        w = json.loads(got)
        check(w["jobs"][0]["subtime"] == 0 and all(j["subtime"] < 86400 for j in w["jobs"]),
              "target %g: --shift and a 1 d window give subtimes outside [0, 86400)" % target)


def repeat_and_gz(c):
    """Byte-identical output on repeated runs; a .swf.gz gives the same workload as the plain
    trace; CRLF line ends, tabs and comments anywhere read the same."""
    args = ["--procs-per-host", "2", "--hosts", "4", "--max-duration", "1h", "--shift"]
    a, _ = c.from_swf(SAMPLE, args)
    b, _ = c.from_swf(SAMPLE, args)
    check(a == b, "two conversions differ")
    gz = c.path("sample.swf.gz")
    with open(SAMPLE, "rb") as f, gzip.open(gz, "wb") as g:
        shutil.copyfileobj(f, g)
    z, _ = c.from_swf(gz, args)
    check(z == a, "the .swf.gz conversion differs from the plain trace's")
    crlf = c.write("crlf.swf", "; late comment\n".join(
        line.replace(" ", "\t", 3) for line in read(SAMPLE).splitlines(True)).replace("\n", "\r\n"))
    w, _ = c.from_swf(crlf, args)
    check(w == a, "CRLF, tabs and interleaved comments change the conversion")
    # A big synthetic trace converts the same twice, too.
    big = c.path("big.swf")
    c.vtime(["workload", "synth", "-o", big, "-n", "20000", "--procs", "512", "--seed", "3"])
    x, _ = c.from_swf(big, ["--procs-per-host", "16"], name="x.json")
    y, _ = c.from_swf(big, ["--procs-per-host", "16"], name="y.json")
    check(x == y and len(json.loads(x)["jobs"]) == 20000, "the 20,000-job conversion is not repeatable")


def header_and_stats(c):
    """`stats` of the trace and of its conversion: job counts, spans, nearest-rank distributions
    and the offered utilisation recomputed here; MaxProcs is the default machine size."""
    p = subprocess.run([c.a.vtime, "workload", "stats", SAMPLE, "--json"], capture_output=True, text=True)
    s = json.loads(p.stdout)
    _, jobs = parse_swf(read(SAMPLE))
    valid = [j for j in jobs if j[3] >= 0 and procs(j) > 0]
    check(s["jobs"] == len(valid) and s["resources"] == 8 and s["size_unit"] == "processors", "stats: %s" % s)
    work = sum(procs(j) * j[3] for j in valid)
    end = max(j[1] + j[3] for j in valid)
    check(abs(s["work"] - work) < 1e-6 and s["last_end"] == end, "work %s / last_end %s, expected %s / %s" % (
        s["work"], s["last_end"], work, end))
    check(abs(s["offered_utilisation"] - work / (8 * (end - valid[0][1]))) < 1e-9, "offered_utilisation %s" % s)
    sizes = sorted(procs(j) for j in valid)
    check(s["size"]["median"] == sizes[math.ceil(0.5 * len(sizes)) - 1] and s["size"]["max"] == max(sizes),
          "size distribution %s, sizes %s" % (s["size"], sizes))
    conv, _ = c.from_swf(SAMPLE, ["--procs-per-host", "2", "--hosts", "4"])
    p = subprocess.run([c.a.vtime, "workload", "stats", c.path("out.json"), "--json"], capture_output=True, text=True)
    t = json.loads(p.stdout)
    w = json.loads(conv)
    check(t["jobs"] == len(w["jobs"]) and t["resources"] == 4 and t["size_unit"] == "hosts", "stats of the JSON: %s" % t)
    wk = sum(j["res"] * min(w["profiles"][j["profile"]]["delay"], j.get("walltime", math.inf)) for j in w["jobs"])
    check(abs(t["work"] - wk) < 1e-6, "work of the JSON %s, expected %s" % (t["work"], wk))
    text = subprocess.run([c.a.vtime, "workload", "stats", SAMPLE, "--hosts", "16"], capture_output=True, text=True).stdout
    check("offered utilisation on 16 processors" in text and ("%d jobs" % len(valid)) in text, "text stats:\n" + text)


# (what, a data line put after sample.swf's line 14, words the error must hold)
BAD_LINES = [
    ("short line", "  13 9100 0 10 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1", "17 fields, SWF has 18"),
    ("non-numeric field", "  13 9100 0 1O 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1", "field 4 (run time) '1O' is not a number"),
    ("negative size", "  13 9100 0 10 -4 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1", "field 5 (allocated processors) is negative"),
    ("fractional id", "  13.5 9100 0 10 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1", "field 1 (job number) '13.5' is not a whole"),
    ("19 fields", "  13 9100 0 10 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1 7", "more than 18 fields"),
]


def errors(c):
    """A malformed line: exit 2, one message naming the file, the line number and the field, no
    output; --skip-bad skips (and counts) it instead. Bad options: exit 2, one line."""
    lines = read(SAMPLE).splitlines(True)
    for what, bad, words in BAD_LINES:
        trace = c.write("bad.swf", "".join(lines[:14] + [bad + "\n"] + lines[14:]))
        out, err = c.from_swf(trace, expect=2)
        msg = [x for x in err.strip().splitlines() if x]
        check(len(msg) == 1 and "bad.swf: line 15: " in msg[0] and words in msg[0],
              "%s: expected one line naming line 15 and %r, got:\n%s" % (what, words, err))
        check(out is None and not os.path.exists(c.path("out.json.tmp")), "%s: an output was written" % what)
        out, err = c.from_swf(trace, ["--skip-bad"])
        check(out is not None and "malformed lines skipped: 1 (the first: line 15" in err, "%s --skip-bad: %s" % (what, err))
        check(len(json.loads(out)["jobs"]) == 9, "%s --skip-bad: the other jobs are not all kept" % what)
        err = c.vtime(["workload", "stats", trace], expect=2, tag="stats")
        check("line 15" in err, "stats of %s: %s" % (what, err))
    gz = c.write("broken.swf.gz", "not gzip at all\n")
    _, err = c.from_swf(gz, expect=2)
    check("broken.swf.gz" in err, "a broken .gz: " + err)
    for args, words in [
        (["--window", "2h"], "START:END"),
        (["--window", "2h:1h"], "START must be before END"),
        (["--window", "0:1x"], "unknown unit 'x'"),
        (["--window-length", "1h"], "go together"),
        (["--window-length", "1h", "--utilisation", "0.5", "--window", "0:1h"], "not both"),
        (["--window-length", "1h", "--utilisation", "1.5"], "(0, 1]"),
        (["--window-length", "1d", "--utilisation", "0.5"], "less than the window length"),
        (["--walltime", "factor:x"], "bad factor"),
        (["--status", "done"], "unknown status 'done'"),
        (["--too-big", "shrink"], "shrink"),
        (["--procs-per-host", "0"], "--procs-per-host"),
        (["--hosts", "-2"], "--hosts"),
    ]:
        out, err = c.from_swf(SAMPLE, args, expect=2)
        msg = [x for x in err.strip().splitlines() if x]
        check(len(msg) >= 1 and words in err and out is None, "%s: expected %r, got:\n%s" % (args, words, err))
    _, err = c.from_swf(c.path("missing.swf"), expect=2)
    check("missing.swf" in err, "a missing trace: " + err)
    for args, words in [(["-n", "10", "--utilisation", "0"], "positive"), (["--min-runtime", "2h", "--max-runtime", "1h"],
                                                                            "--max-runtime")]:
        err = c.vtime(["workload", "synth", "-o", c.path("s.swf")] + args, expect=2)
        check(words in err and not os.path.exists(c.path("s.swf")), "synth %s: %s" % (args, err))


def synth(c):
    """The same seed gives the same trace byte for byte; another seed another trace; the trace
    reads back and its offered utilisation is near the target."""
    a, b, o = c.path("a.swf"), c.path("b.swf"), c.path("o.swf")
    for path, seed in ((a, "11"), (b, "11"), (o, "12")):
        c.vtime(["workload", "synth", "-o", path, "-n", "5000", "--procs", "128", "--seed", seed, "--utilisation", "0.6"])
    check(read(a) == read(b), "the same seed gave two traces")
    check(read(a) != read(o), "two seeds gave the same trace")
    header, jobs = parse_swf(read(a))
    check(len(jobs) == 5000 and int(header["MaxProcs"]) == 128, "header %s, %d jobs" % (header, len(jobs)))
    work = sum(procs(j) * j[3] for j in jobs)
    span = max(j[1] + j[3] for j in jobs) - jobs[0][1]
    u = work / (128 * span)
    check(0.5 < u < 0.7, "offered utilisation %.3f, target 0.6" % u)


def run_exact(c):
    """A converted sample through `vtime run`, exact: periodic_fcfs (real time, period 1) and
    event_fcfs give one schedule, equal to event_fcfs directly against `vtime sim`; every job ran."""
    conv, _ = c.from_swf(SAMPLE, ["--procs-per-host", "2", "--hosts", "4", "--max-duration", "1h", "--shift"],
                         name="sample.json")
    wl = c.path("sample.json")
    n = len(json.loads(conv)["jobs"])
    outs = {}
    for name, sched in (("periodic", [c.a.periodic_fcfs, "-s", "{endpoint}", "--period", "1"]),
                        ("event", [c.a.event_fcfs, "-s", "{endpoint}", "--period", "1"])):
        prefix = c.path(name)
        c.vtime(["run", "-q", "--hosts", "4", "-w", wl, "-e", prefix, "--sync", "exact", "--"] + sched, tag="run")
        outs[name] = read(prefix + "_jobs.csv")
    check(outs["periodic"] == outs["event"], "periodic_fcfs and event_fcfs scheduled the sample differently:\n%s\n%s" %
          (outs["periodic"], outs["event"]))
    jobs = rows(outs["event"])
    check(len(jobs) == n and all(j["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED")
                                 for j in jobs), "jobs: %s" % [(j["job_id"], j["final_state"]) for j in jobs])
    check(all(float(j["starting_time"]) >= float(j["submission_time"]) for j in jobs), "a job started before it came")
    # The same through the embedded simulator with the event-based scheduler run directly.
    endpoint = "ipc://" + c.path("sim.sock")
    prefix = c.path("direct")
    sched = subprocess.Popen([c.a.event_fcfs, "-s", endpoint, "--period", "1"], stderr=subprocess.DEVNULL)
    try:
        c.vtime(["sim", "--hosts", "4", "-w", wl, "-e", prefix, "-s", endpoint], tag="sim")
        check(sched.wait(timeout=30) == 0, "event_fcfs failed against vtime sim")
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()
    check(read(prefix + "_jobs.csv") == outs["event"], "vtime sim + event_fcfs gave another schedule")


def sim_direct(c, wl, prefix, hosts):
    """`vtime sim --stats` + event_fcfs; returns (_jobs.csv text, vtime sim's peak RSS in MB, as
    the kernel's rusage gives it: ru_maxrss, which includes this process's size at fork)."""
    endpoint = "ipc://" + c.path(os.path.basename(prefix) + ".sock")
    sched = subprocess.Popen([c.a.event_fcfs, "-s", endpoint], stderr=subprocess.DEVNULL)
    try:
        sim = subprocess.Popen([c.a.vtime, "sim", "--hosts", str(hosts), "-w", wl, "-e", prefix, "-s", endpoint, "--stats"],
                               stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(sim.pid, 0)
        err = sim.stderr.read()
        sim.returncode = os.waitstatus_to_exitcode(status)
        sys.stderr.write("[sim stderr] " + err)
        check(sim.returncode == 0, "vtime sim exited %d: %s" % (sim.returncode, err))
        check(sched.wait(timeout=30) == 0, "event_fcfs failed against vtime sim")
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()
    return read(prefix + "_jobs.csv"), usage.ru_maxrss / 1024.0


# docs/sim.md, "Memory": the bound this test holds vtime sim to.
RSS_BOUND_MB = 40


def streaming_memory(c):
    """200,000 jobs through `vtime sim`: every job in the outputs, and the simulator's peak RSS
    within RSS_BOUND_MB (holding the workload whole took ~200 MB)."""
    n = 200000
    wl = c.path("flat.json")
    # One job every 10 s for 10 s on one host: each instant ends one job and submits the next.
    # Written by a child Python: ru_maxrss carries over fork+exec, so this process must stay small.
    subprocess.run([sys.executable, "-c", """
import json, sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    json.dump({"nb_res": 1, "jobs": [{"id": str(i), "subtime": 10 * i, "res": 1, "profile": "d10"} for i in range(n)],
               "profiles": {"d10": {"type": "delay", "delay": 10}}}, f, indent=1)
""", wl, str(n)], check=True)
    jobs, rss = sim_direct(c, wl, c.path("flat"), 1)
    lines = jobs.splitlines()
    check(len(lines) == n + 1 and all(",COMPLETED_SUCCESSFULLY," in l for l in lines[1:]),
          "%d rows in _jobs.csv, expected %d, all completed" % (len(lines) - 1, n))
    check(lines[-1].startswith("%d,w0,d10,%d.000000," % (n - 1, 10 * (n - 1))), "last row: " + lines[-1])
    sys.stderr.write("vtime sim peak RSS with %d jobs: %.1f MB (bound %d MB)\n" % (n, rss, RSS_BOUND_MB))
    check(rss <= RSS_BOUND_MB, "vtime sim's peak RSS was %.1f MB with %d jobs, above the %d MB bound" % (rss, n, RSS_BOUND_MB))


def stream_order(c):
    """The streamed reading does not depend on the file's layout: jobs out of submission order,
    profiles before or after the jobs, extra members and odd spacing give the same schedule."""
    conv, _ = c.from_swf(SAMPLE, ["--procs-per-host", "2", "--hosts", "4", "--max-duration", "1h", "--shift"],
                         name="sorted.json")
    w = json.loads(conv)
    base, _ = sim_direct(c, c.path("sorted.json"), c.path("base"), 4)
    jobs = list(reversed(w["jobs"]))
    variants = {
        "reversed": json.dumps({"nb_res": 4, "jobs": jobs, "profiles": w["profiles"]}),
        "profiles_first": json.dumps({"profiles": w["profiles"], "extra": {"a": [1, "]},{"]}, "jobs": jobs}, indent=3),
        "compact": json.dumps({"jobs": w["jobs"], "profiles": w["profiles"], "nb_res": 4}, separators=(",", ":")),
    }
    for name, text in variants.items():
        path = c.write(name + ".json", text)
        got, _ = sim_direct(c, path, c.path(name), 4)
        check(got == base, "%s: a different schedule from the same jobs:\n%s\n%s" % (name, got, base))


CASES = {"options": options, "window": window, "repeat_and_gz": repeat_and_gz, "header_and_stats": header_and_stats,
         "errors": errors, "synth": synth, "run_exact": run_exact, "streaming_memory": streaming_memory,
         "stream_order": stream_order}

if __name__ == "__main__":
    sys.exit(main(CASES, ["--vtime", "--event-fcfs", "--periodic-fcfs"], lambda a: Case(a, "workload"), lambda: None))
