#!/usr/bin/python3
"""Integration tests of vtime-slurm: Debian's unmodified slurmctld + slurmd scheduling Batsim
workloads through `vtime slurm` / `vtime run`, as real processes with bounded time.

usage: slurm_cases.py CASE --vtime VTIME --slurm VTIME_SLURM --event-fcfs EVENT_FCFS
       slurm_cases.py --list

Exit 0 when the case passes; 1 and the reason on stdout otherwise; 77 (skipped) when Slurm's
daemons are not installed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bridge_cases  # noqa: E402
from bridge_cases import BridgeCase, Failure, check, read, rows  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PLATFORM16 = os.path.join(ROOT, "examples", "platforms", "cluster16.xml")
EXAMPLES = os.path.join(ROOT, "examples", "slurm")
TIMEOUT = 600


def small_workload(path):
    """24 jobs of 1-4 nodes on 8 hosts, with walltimes, contention, a job larger than the
    cluster (rejected) and odd ids; the same bytes every time."""
    jobs, t = [], 0
    sizes = [2, 3, 1, 4, 2, 1, 3, 2, 4, 1, 2, 3, 1, 1, 4, 2, 3, 1, 2, 4, 1, 3, 2, 1]
    delays = [30, 45, 10, 60, 20, 15, 40, 25, 35, 10, 50, 20, 5, 30, 45, 15, 25, 10, 40, 20, 30, 15, 10, 5]
    for i, (s, d) in enumerate(zip(sizes, delays)):
        t += (i * 7) % 11
        jid = str(i) if i % 5 else "job %d 'x'" % i  # ids with spaces and quotes must not matter
        jobs.append({"id": jid, "subtime": t, "res": s, "walltime": d + 60, "profile": "d%d" % d})
    jobs.append({"id": "huge", "subtime": 12, "res": 9, "walltime": 100, "profile": "d10"})
    profiles = {"d%d" % d: {"type": "delay", "delay": d} for d in set(delays)}
    with open(path, "w") as f:
        json.dump({"nb_res": 8, "jobs": jobs, "profiles": profiles}, f, indent=1, sort_keys=True)
    return len(jobs)


def backfill_workload(path):
    """Two nodes: a long 1-node job runs; a 2-node job waits for it; a short 1-node job with a
    walltime that ends before the long job's could start in the hole (backfill) or not (FCFS)."""
    jobs = [
        {"id": "long", "subtime": 0, "res": 1, "walltime": 600, "profile": "d500"},
        {"id": "wide", "subtime": 10, "res": 2, "walltime": 600, "profile": "d100"},
        {"id": "short", "subtime": 20, "res": 1, "walltime": 120, "profile": "d60"},
    ]
    profiles = {"d500": {"type": "delay", "delay": 500}, "d100": {"type": "delay", "delay": 100},
                "d60": {"type": "delay", "delay": 60}}
    with open(path, "w") as f:
        json.dump({"nb_res": 2, "jobs": jobs, "profiles": profiles}, f, indent=1)


class Case(BridgeCase):
    timeout = TIMEOUT

    def __init__(self, args):
        super().__init__(args, "slurm")

    def conf(self, name, text):
        return self.write(name, text)

    def vtime_slurm(self, wl, tag, extra=None, hosts=None, platform=None, more=(), expect=0, on_started=None):
        """`vtime slurm`; returns (prefix, stderr), once no process of the run is left."""
        prefix = self.prefix(tag)
        cmd = [self.a.vtime, "slurm", "-w", wl, "-e", prefix, "-q"]
        cmd += ["--hosts", str(hosts)] if hosts else ["-p", platform or PLATFORM16]
        if extra:
            cmd += ["--slurm-conf", extra]
        cmd += list(more)
        err = self.run(cmd, tag, expect, on_started, prefix)
        self.nothing_left(prefix + "_slurm", wait_s=5)
        return prefix, err

    def event_fcfs(self, wl, hosts):
        """The event-based FCFS against `vtime sim`: the reference start order."""
        prefix = self.prefix("event_fcfs")
        endpoint = "ipc://" + prefix + ".sock"
        sched = subprocess.Popen([self.a.event_fcfs, "-s", endpoint], stderr=subprocess.DEVNULL)
        try:
            r = subprocess.run([self.a.vtime, "sim", "--hosts", str(hosts), "-w", wl, "-e", prefix, "-s", endpoint],
                               capture_output=True, text=True, timeout=TIMEOUT)
            check(r.returncode == 0, "vtime sim + event_fcfs failed: " + r.stderr)
        finally:
            sched.wait(timeout=10)
        return read(prefix + "_jobs.csv")


def start_order(text, wl):
    """(job id, allocation size) in start order; ties at one instant in the workload's order."""
    with open(wl) as f:
        index = {j["id"]: i for i, j in enumerate(json.load(f)["jobs"])}
    got = [r for r in rows(text) if r["final_state"] == "COMPLETED_SUCCESSFULLY"]
    got.sort(key=lambda r: (float(r["starting_time"]), index[r["job_id"]]))
    return [(r["job_id"], len(expand(r["allocated_resources"]))) for r in got]


def expand(alloc):
    ids = []
    for part in alloc.split():
        a, _, b = part.partition("-")
        ids += list(range(int(a), int(b or a) + 1))
    return ids


def fcfs_small(c):
    wl = c.path("small.json")
    n = small_workload(wl)
    builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    prefix, err = c.vtime_slurm(wl, "slurm", extra=builtin, hosts=8)
    got = read(prefix + "_jobs.csv")
    table = rows(got)
    check(len(table) == n, "%d rows in _jobs.csv, expected %d" % (len(table), n))
    for r in table:
        want = "REJECTED" if r["job_id"] == "huge" else "COMPLETED_SUCCESSFULLY"
        check(r["final_state"] == want, "job %s ended %s, expected %s" % (r["job_id"], r["final_state"], want))
    check("huge" in err and "refused" in err, "the rejection of job 'huge' is not explained on stderr")
    ref = c.event_fcfs(wl, 8)
    check(start_order(got, wl) == start_order(ref, wl), "start order or sizes differ from event_fcfs:\n  slurm: %s\n"
          "  fcfs:  %s" % (start_order(got, wl), start_order(ref, wl)))
    # Slurm's own latency, reported (not a pass/fail criterion).
    ref_start = {r["job_id"]: float(r["starting_time"]) for r in rows(ref) if r["starting_time"]}
    delays = [float(r["starting_time"]) - ref_start[r["job_id"]] for r in table if r["starting_time"]]
    print("start delay vs event_fcfs: mean %.3f s, max %.3f s over %d jobs" % (sum(delays) / len(delays),
                                                                               max(delays), len(delays)))
    # Slurm's job records agree: every completed job is in jobcomp.txt as COMPLETED.
    comp = read(prefix + "_slurm/jobcomp.txt")
    check(comp.count("JobState=COMPLETED") == n - 1, "jobcomp.txt holds %d completed jobs, expected %d"
          % (comp.count("JobState=COMPLETED"), n - 1))


def deterministic(c):
    wl = c.path("small.json")
    small_workload(wl)
    builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    first = None
    for i in range(5):
        prefix, _ = c.vtime_slurm(wl, "det", extra=builtin, hosts=8)
        text = read(prefix + "_jobs.csv")
        if first is None:
            first = text
        check(text == first, "run %d's _jobs.csv differs from run 1's:\n%s\n---\n%s" % (i + 1, first, text))


def backfill(c):
    wl = c.path("backfill.json")
    backfill_workload(wl)
    starts = {}
    for sched in ("builtin", "backfill"):
        extra = c.conf(sched + ".conf", "SchedulerType=sched/%s\n" % sched)
        prefix, _ = c.vtime_slurm(wl, sched, extra=extra, hosts=2)
        starts[sched] = {r["job_id"]: float(r["starting_time"]) for r in rows(read(prefix + "_jobs.csv"))}
    b, f = starts["backfill"], starts["builtin"]
    check(b["short"] < b["wide"], "sched/backfill: the short job did not start ahead of the wide one: %s" % b)
    check(f["short"] >= f["wide"], "sched/builtin: the short job started ahead of the wide one: %s" % f)


def examples_configs(c):
    """The shipped example configurations work as they are."""
    wl = c.path("backfill.json")
    backfill_workload(wl)
    for name in ("fcfs.conf", "backfill.conf"):
        prefix, _ = c.vtime_slurm(wl, name, extra=os.path.join(EXAMPLES, name), hosts=2)
        check(len(rows(read(prefix + "_jobs.csv"))) == 3, "%s: not every job ran" % name)


def bad_extra_syntax(c):
    wl = c.path("backfill.json")
    backfill_workload(wl)
    bad = c.conf("bad.conf", "SchedulerType=sched/builtin\nthis is not a setting\n")
    _, err = c.vtime_slurm(wl, "bad", extra=bad, hosts=2, expect=4)
    check("bad.conf:2: not a Slurm setting" in err, "the error does not name bad.conf line 2:\n" + err)
    owned = c.conf("owned.conf", "# ports are ours\nSlurmctldPort=6817\n")
    _, err = c.vtime_slurm(wl, "owned", extra=owned, hosts=2, expect=4)
    check("owned.conf:2: SlurmctldPort cannot be set" in err, "SlurmctldPort was not refused:\n" + err)


def bad_extra_value(c):
    """A line Slurm itself refuses: slurmctld fails to start, and the error quotes its log."""
    wl = c.path("backfill.json")
    backfill_workload(wl)
    bad = c.conf("bogus.conf", "SchedulerType=sched/bogus\n")
    _, err = c.vtime_slurm(wl, "bogus", extra=bad, hosts=2, expect=4)
    check("slurmctld" in err and "last lines of" in err and "sched/bogus" in err,
          "the failure does not name slurmctld and quote its log:\n" + err)


def ctld_killed(c):
    """slurmctld killed mid-run: vtime-slurm names it, vtime exits 4, nothing is left running."""
    wl = c.path("small.json")
    small_workload(wl)
    builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")

    def kill_ctld(p, prefix):
        comp = prefix + "_slurm/jobcomp.txt"
        pidfile = prefix + "_slurm/slurmctld.pid"
        deadline = time.time() + 120
        # Once a few jobs are done, the run is well under way.
        while time.time() < deadline and p.poll() is None:
            if os.path.exists(comp) and read(comp).count("JobState=COMPLETED") >= 3 and os.path.exists(pidfile):
                os.kill(int(read(pidfile).strip()), signal.SIGKILL)
                return
            time.sleep(0.005)
        raise Failure("the run never got three jobs done")

    prefix, err = c.vtime_slurm(wl, "killed", extra=builtin, hosts=8, expect=4, on_started=kill_ctld)
    check("slurmctld" in err and "signal 9" in err, "the failure does not name slurmctld:\n" + err)
    check(os.path.exists(prefix + "_jobs.csv"), "no _jobs.csv after the failure")


def submit_order(c):
    """Jobs due at one instant reach Slurm in numeric id order by default (9 before 10, as a person
    replaying a trace submits them; Batsim lists them as strings: 10, 11, 9), in Batsim's with
    --submit-order batsim; and the workload meets a settled cluster: a job submitted at 1 s on an
    idle cluster starts within the second (before the set-up settled, it waited for slurmctld's
    3 s rate limit)."""
    wl = c.write("order.json", json.dumps({"nb_res": 1, "profiles": {"d5": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": i, "subtime": 1, "res": 1, "walltime": 120, "profile": "d5"} for i in ("10", "9", "11")]}))
    builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    got = {}
    for order in ("natural", "batsim"):
        prefix, _ = c.vtime_slurm(wl, order, extra=builtin, hosts=1, more=["--", "--submit-order", order])
        table = sorted(rows(read(prefix + "_jobs.csv")), key=lambda r: float(r["starting_time"]))
        got[order] = [r["job_id"] for r in table]
        first = float(table[0]["starting_time"])
        check(1 <= first < 2, "%s: the first job started at %.3f s, submitted at 1 s on an idle cluster" % (order, first))
    check(got["natural"] == ["9", "10", "11"], "natural order: started %s" % got["natural"])
    check(got["batsim"] == ["10", "11", "9"], "Batsim's order: started %s" % got["batsim"])
    prefix, _ = c.vtime_slurm(wl, "default", extra=builtin, hosts=1)
    table = sorted(rows(read(prefix + "_jobs.csv")), key=lambda r: float(r["starting_time"]))
    check([r["job_id"] for r in table] == got["natural"], "the default is not the natural order")


def validate_bad_input(c):
    """`vtime validate` refuses what it cannot run before starting anything, each with one clear line
    and exit status 2."""
    good = c.write("good.json", json.dumps({"nb_res": 2, "profiles": {"d2": {"type": "delay", "delay": 2}},
                                            "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d2"}]}))
    cases = [
        (["nomad", "-w", good], "scheduler: nomad not in"),
        (["slurm", "-w", c.write("broken.json", '{"jobs": [')], "is not JSON"),
        (["slurm", "-w", c.write("nojobs.json", '{"nb_res": 2}')], "no \"jobs\" array"),
        (["slurm", "-w", c.write("smpi.json", json.dumps({"nb_res": 2, "profiles": {"p": {"type": "smpi"}}, "jobs": [
            {"id": "1", "subtime": 0, "res": 1, "profile": "p"}]}))], "is not a delay profile"),
        (["slurm", "-w", good, "--hosts", "1", "--slurm-conf", c.write("port.conf", "SlurmctldPort=1\n")],
         "SlurmctldPort cannot be set"),
        (["slurm", "-w", c.write("wide.json", json.dumps({"nb_res": 2, "profiles": {"d2": {"type": "delay", "delay": 2}},
                                                          "jobs": [{"id": "w", "subtime": 0, "res": 3, "profile": "d2"}]}))],
         "asks for 3 nodes, the cluster has 2"),
        # The options of the virtual runs, checked by `vtime slurm --check` (vtime's, then vtime-slurm's).
        (["slurm", "-w", good, "--vtime-arg=--sleep-latency=-1us"], "--sleep-latency must be a duration"),
        (["slurm", "-w", good, "--bridge-arg=--job-start-latency=x"], "--job-start-latency: x unit not recognized"),
        (["slurm", "-w", good, "--vtime-arg=notanoption"], "not an option of `vtime slurm`"),
    ]
    bridge_cases.validate_refuses(c, cases)


def validate_small(c):
    """`vtime validate slurm` end to end on a small workload with ties: two real-time runs (sbatch,
    sleep, Slurm's records) and two virtual ones; per-job CSV, every run in JSON, the figure.
    Whether each job falls within reality's range is what it reports (exit 0 or 1), not what this
    test asserts: the real runs' timing is the machine's."""
    wl = c.write("small.json", json.dumps({"nb_res": 2, "profiles": {"d2": {"type": "delay", "delay": 2},
                                                                     "d3": {"type": "delay", "delay": 3}},
        "jobs": [{"id": "1", "subtime": 1, "res": 1, "walltime": 60, "profile": "d3"},
                 {"id": "2", "subtime": 1, "res": 2, "walltime": 60, "profile": "d2"},
                 {"id": "3", "subtime": 2, "res": 1, "walltime": 60, "profile": "d2"},
                 {"id": "10", "subtime": 2, "res": 1, "walltime": 60, "profile": "d3"}]}))
    conf = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    # --vtime-arg reaches the virtual runs (50 us: vtime slurm's default slack, spelled out).
    out, runs = bridge_cases.validate_small_run(c, "slurm", wl, ["--slurm-conf", conf, "--vtime-arg=--timer-slack=50us"],
                                                ["1", "10", "2", "3"], "vtime_start_slurm")
    # The latencies that decide chained starts, read from each slurmctld.log, real and virtual.
    for run in ("real run 1: job start", "real run 2: job start", "vtime:      job start"):
        check(run in out, "no latencies for %r" % run)
    lat = runs["latencies"]
    check(len(lat) == 2 and all(x and x["jobs"] == 4 and 0 < x["job_start_latency"] < 5 for x in lat),
          "latencies in the JSON: %s" % lat)


def replay(c):
    """A recorded Slurm run replays with no divergence: record for record (every timer, clock
    advance and message of the daemons, the default `--compare all`), then twice message for
    message and decision for decision (`--compare decisions`, which leaves the timer records out)."""
    wl = c.path("small.json")
    small_workload(wl)
    builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    trace = c.path("run.trace")
    prefix, _ = c.vtime_slurm(wl, "rec", extra=builtin, hosts=8, more=["--record", trace])
    for i, compare, said in ((0, "all", "records matched, the whole trace"),
                             (1, "decisions", "messages and decisions matched, the whole trace"),
                             (2, "decisions", "messages and decisions matched, the whole trace")):
        d = c.path("replay_slurm%d" % i)
        r = subprocess.run([c.a.vtime, "replay", trace, "--compare", compare, "--", c.a.slurm, "-s", "{endpoint}",
                            "--slurm-conf", builtin, "--dir", d], cwd=c.dir, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=TIMEOUT)
        check(r.returncode == 0, "vtime replay --compare %s exited %d:\n%s%s" % (compare, r.returncode, r.stdout, r.stderr))
        check(said in r.stdout, "replay report (--compare %s): %s" % (compare, r.stdout))
        c.nothing_left(d)


def run_equals_shorthand(c):
    """`vtime slurm` is `vtime run --sleep-latency 170us -- vtime-slurm ...`: the same schedule."""
    wl = c.path("backfill.json")
    backfill_workload(wl)
    extra = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
    prefix, _ = c.vtime_slurm(wl, "short", extra=extra, hosts=2)
    long_prefix = c.prefix("long")
    r = subprocess.run([c.a.vtime, "run", "--hosts", "2", "-w", wl, "-e", long_prefix, "-q", "--sleep-latency", "170us",
                        "--", c.a.slurm, "-s",
                        "{endpoint}", "--slurm-conf", extra], cwd=c.dir, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=TIMEOUT)
    check(r.returncode == 0, "vtime run -- vtime-slurm exited %d: %s" % (r.returncode, r.stderr))
    check(read(prefix + "_jobs.csv") == read(long_prefix + "_jobs.csv"), "vtime slurm and vtime run differ")
    check(os.path.isdir(long_prefix + "_slurm/log"), "the Slurm directory is not kept as PREFIX_slurm")


def reference(name, runs):
    """A reference workload on cluster16 with sched/builtin (long: label 'long'); `--runs N`
    repeats it N times instead (the sanitizer presets: two runs prove the repeat, five took
    longer than the test's 900 s under ThreadSanitizer)."""
    def case(c):
        n = int(c.a.runs) if c.a.runs else runs
        wl = os.path.join(ROOT, "examples", "workloads", name + ".json")
        builtin = c.conf("fcfs.conf", "SchedulerType=sched/builtin\n")
        first = None
        for i in range(n):
            # event_fcfs takes jobs due at one instant in Batsim's order: so does Slurm here.
            prefix, _ = c.vtime_slurm(wl, name, extra=builtin, more=["--", "--submit-order", "batsim"])
            text = read(prefix + "_jobs.csv")
            for r in rows(text):
                check(r["final_state"] == "COMPLETED_SUCCESSFULLY", "job %s ended %s" % (r["job_id"], r["final_state"]))
            if first is None:
                first = text
                ref = c.event_fcfs(wl, 16)
                check(start_order(text, wl) == start_order(ref, wl), "start order or sizes differ from event_fcfs")
                ref_start = {r["job_id"]: float(r["starting_time"]) for r in rows(ref)}
                d = [float(r["starting_time"]) - ref_start[r["job_id"]] for r in rows(text)]
                print("%s: start delay vs event_fcfs mean %.3f s, max %.3f s" % (name, sum(d) / len(d), max(d)))
            check(text == first, "run %d differs from run 1" % (i + 1))
    return case


CASES = {
    "fcfs_small": fcfs_small,
    "deterministic": deterministic,
    "backfill": backfill,
    "examples_configs": examples_configs,
    "bad_extra_syntax": bad_extra_syntax,
    "bad_extra_value": bad_extra_value,
    "ctld_killed": ctld_killed,
    "replay": replay,
    "submit_order": submit_order,
    "validate_bad_input": validate_bad_input,
    "validate_small": validate_small,
    "run_equals_shorthand": run_equals_shorthand,
    "long.spaced": reference("spaced_200_delay170", 5),
    "long.burst": reference("burst_200_delay170", 5),
    "long.kit": reference("kit_10h_80", 5),
}


def missing_slurm():
    if not shutil.which("slurmctld", path="/usr/sbin:/usr/bin:/sbin:/bin") or not shutil.which(
            "slurmd", path="/usr/sbin:/usr/bin:/sbin:/bin"):
        return "slurmctld/slurmd are not installed (.ci/debian-packages installs them)"
    return None


if __name__ == "__main__":
    sys.exit(bridge_cases.main(CASES, ["--vtime", "--slurm", "--event-fcfs", "--runs"], Case, missing_slurm))
