#!/usr/bin/python3
"""Integration tests of `vtime sim`: real simulator and scheduler processes over ipc://
endpoints in a private temporary directory (parallel runs never collide), bounded run time.

usage: sim_cases.py CASE --sim VTIME_SIM --fcfs EVENT_FCFS --src TESTS_SIM_DIR
       sim_cases.py --list

`--sim` is a command prefix running the subcommand (e.g. "build/sim/vtime-sim sim" or
"build/vtime sim"). Exit 0 when the case passes; otherwise the reason is printed.
"""
import argparse
import csv
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 60  # seconds for any one process; real runs take well under a second

WORKLOAD_JOBS = {"spaced_200_delay170": 200, "burst_200_delay170": 200, "kit_10h_80": 39}
WALL_COLUMNS = {"batsim_version", "scheduling_time", "simulation_time"}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Env:
    def __init__(self, args):
        self.sim = shlex.split(args.sim)
        self.sim[0] = os.path.abspath(self.sim[0])  # processes run in the temporary directory
        self.fcfs = os.path.abspath(args.fcfs)
        self.src = os.path.abspath(args.src)
        self.root = os.path.normpath(os.path.join(self.src, "..", ".."))
        self.data = os.path.join(self.root, "tests", "data")
        self.tmp = tempfile.mkdtemp(prefix="vtime-sim-test-")
        self.endpoint = "ipc://" + os.path.join(self.tmp, "sched.sock")
        self.prefix = os.path.join(self.tmp, "out")

    def platform(self):
        return os.path.join(self.root, "examples", "platforms", "cluster16.xml")

    def workload(self, name):
        return os.path.join(self.root, "examples", "workloads", name + ".json")

    def tiny(self, behaviour):
        return [sys.executable, os.path.join(self.src, "tiny_schedulers.py"), behaviour, self.endpoint]

    def run(self, sched_cmd, sim_args, cwd=None, on_started=None):
        """Starts the scheduler, runs the simulator; returns (sim_rc, sim_stderr, sched_rc)."""
        sched = subprocess.Popen(sched_cmd, cwd=cwd or self.tmp, stderr=subprocess.PIPE, text=True)
        try:
            sim = subprocess.Popen(self.sim + sim_args + ["-s", self.endpoint], cwd=cwd or self.tmp,
                                   stderr=subprocess.PIPE, text=True)
            if on_started:
                on_started(sim)
            _, err = sim.communicate(timeout=TIMEOUT)
            try:
                # A scheduler left waiting after a failed run will never finish: do not wait long.
                sched_rc = sched.wait(timeout=5 if sim.returncode == 0 else 0.5)
            except subprocess.TimeoutExpired:
                sched_rc = None  # still waiting for a message that will never come
            return sim.returncode, err, sched_rc
        finally:
            if sched.poll() is None:
                sched.kill()
                sched.wait()
            sched_err = sched.stderr.read()
            if sched_err:
                sys.stderr.write("[scheduler stderr] " + sched_err)

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def same_schedule(env, golden_dir):
    got = read_rows(env.prefix + "_schedule.csv")[0]
    want = read_rows(os.path.join(golden_dir, "out_schedule.csv"))[0]
    check(list(got) == list(want), "schedule.csv columns differ: %s vs %s" % (list(got), list(want)))
    diff = {k: (want[k], got[k]) for k in want if k not in WALL_COLUMNS and want[k] != got[k]}
    check(not diff, "schedule.csv differs from real Batsim (real, vtime): %s" % diff)


def same_jobs(env, golden_dir):
    with open(os.path.join(golden_dir, "out_jobs.csv")) as f:
        want = f.read()
    with open(env.prefix + "_jobs.csv") as f:
        got = f.read()
    if got != want:
        for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())):
            check(a == b, "jobs.csv line %d differs:\n  real Batsim: %s\n  vtime sim:   %s" % (i + 1, a, b))
        check(False, "jobs.csv has %d lines, real Batsim wrote %d" % (len(got.splitlines()), len(want.splitlines())))


def expect_clean(rc, err, sched_rc):
    check(rc == 0, "vtime sim exited %s: %s" % (rc, err.strip()))
    check(err == "", "vtime sim wrote to stderr: %s" % err)
    check(sched_rc == 0, "scheduler exited %s" % sched_rc)


# ---- cases ------------------------------------------------------------------------------------

def golden(workload, hosts=False):
    def case(env):
        plat = ["--hosts", "16"] if hosts else ["-p", env.platform()]
        rc, err, src = env.run([env.fcfs, "-s", env.endpoint],
                               plat + ["-w", env.workload(workload), "-e", env.prefix])
        expect_clean(rc, err, src)
        g = os.path.join(env.data, "golden", "nonet16_%s_pysched" % workload)
        same_jobs(env, g)
        same_schedule(env, g)
    return case


def golden_net(workload):
    """event_fcfs on real Batsim's platform16 (internal messages cross the network) gives
    exactly batsched fcfs's schedule under real Batsim 4.2.1."""
    def case(env):
        inputs = os.path.join(env.data, "batsim-4.2.1", "inputs")
        w = os.path.join(inputs, workload + ".json")
        if not os.path.exists(w):
            w = env.workload(workload)
        rc, err, src = env.run([env.fcfs, "-s", env.endpoint],
                               ["-p", os.path.join(inputs, "platform16.xml"), "-w", w, "-e", env.prefix])
        expect_clean(rc, err, src)
        g = os.path.join(env.data, "golden", "net16_%s_batschedfcfs" % workload)
        got = {r["job_id"]: r for r in read_rows(env.prefix + "_jobs.csv")}
        want = {r["job_id"]: r for r in read_rows(os.path.join(g, "out_jobs.csv"))}
        check(set(got) == set(want), "job sets differ")
        cols = ["final_state", "starting_time", "finish_time", "allocated_resources"]
        bad = [(j, c, want[j][c], got[j][c]) for j in sorted(want) for c in cols if want[j][c] != got[j][c]]
        check(not bad, "%d differences from real Batsim (job, column, real, vtime), first: %s" % (len(bad), bad[:5]))
        same_schedule(env, g)
    return case


def periodic(workload, period):
    def case(env):
        rc, err, src = env.run([env.fcfs, "-s", env.endpoint, "--period", str(period)],
                               ["-p", env.platform(), "-w", env.workload(workload), "-e", env.prefix])
        expect_clean(rc, err, src)
        rows = read_rows(env.prefix + "_jobs.csv")
        check(len(rows) == WORKLOAD_JOBS[workload], "%d rows, expected %d" % (len(rows), WORKLOAD_JOBS[workload]))
        for r in rows:
            start, sub = float(r["starting_time"]), float(r["submission_time"])
            check(r["final_state"] == "COMPLETED_SUCCESSFULLY", "job %s: %s" % (r["job_id"], r["final_state"]))
            check(start >= sub, "job %s starts before its submission" % r["job_id"])
            check(abs(start / period - round(start / period)) < 1e-9,
                  "job %s starts at %s, not on a %s s tick" % (r["job_id"], start, period))
    return case


def replay(transcript, expect_rc, stderr_part=None,
           platform="energy_platform_homogeneous_no_net_128.xml", workload="wl20.json"):
    def case(env):
        inputs = os.path.join(env.tmp, "inputs")
        shutil.copytree(os.path.join(env.data, "batsim-4.2.1", "inputs"), inputs)
        sched = [sys.executable, os.path.join(env.src, "replay_scheduler.py"), env.endpoint,
                 os.path.join(env.data, "batsim-4.2.1", "transcripts", transcript + ".jsonl")]
        # Same relative paths as the real run: SIMULATION_BEGINS names the workload file.
        rc, err, src = env.run(sched, ["-p", "inputs/" + platform, "-w", "inputs/" + workload, "-e", env.prefix])
        check(src == 0, "vtime sim's messages differ from real Batsim's (replay exited %s)" % src)
        check(rc == expect_rc, "vtime sim exited %s, expected %s: %s" % (rc, expect_rc, err.strip()))
        if stderr_part:
            check(stderr_part in err, "stderr lacks %r: %s" % (stderr_part, err))
        else:
            same_jobs(env, os.path.join(env.data, "batsim-4.2.1", "outputs", transcript))
            same_schedule(env, os.path.join(env.data, "batsim-4.2.1", "outputs", transcript))
    return case


def replay_net(transcript, expect_rc=0, stderr_part=None):
    """A transcript of real Batsim on platform16.xml: every message, with its network delays."""
    return replay(transcript, expect_rc, stderr_part, platform="platform16.xml")



def bad(behaviour, expect_rc, stderr_part, workload="spaced_200_delay170", rows=None):
    def case(env):
        rc, err, _ = env.run(env.tiny(behaviour),
                             ["-p", env.platform(), "-w", env.workload(workload), "-e", env.prefix])
        check(rc == expect_rc, "vtime sim exited %s, expected %s; stderr: %s" % (rc, expect_rc, err.strip()))
        lines = err.splitlines()
        check(len(lines) == 1 and lines[0].startswith("vtime sim: "), "expected one error line, got: %r" % err)
        check(stderr_part in err, "error line lacks %r: %s" % (stderr_part, err.strip()))
        # Outputs keep what happened before the bad reply.
        check(os.path.exists(env.prefix + "_schedule.csv"), "no schedule.csv written")
        got = read_rows(env.prefix + "_jobs.csv")
        if rows is not None:
            check(len(got) == rows, "jobs.csv has %d rows, expected %d" % (len(got), rows))
        print(err.strip())
    return case


def rejecter(env):
    w = "burst_200_delay170"
    rc, err, src = env.run(env.tiny("rejecter"), ["-p", env.platform(), "-w", env.workload(w), "-e", env.prefix])
    expect_clean(rc, err, src)
    g = os.path.join(env.data, "golden", "nonet16_burst_200_delay170_batschedeasybf")
    same_jobs(env, g)
    same_schedule(env, g)


def killer(env):
    rc, err, src = env.run(env.tiny("killer"),
                           ["-p", env.platform(), "-w", env.workload("spaced_200_delay170"), "-e", env.prefix])
    expect_clean(rc, err, src)
    rows = read_rows(env.prefix + "_jobs.csv")
    killed = [r for r in rows if r["final_state"] == "COMPLETED_KILLED"]
    check(len(rows) == 200, "%d rows" % len(rows))
    check(killed, "no job was killed")
    for r in killed:
        check(r["success"] == "0" and 0 < float(r["execution_time"]) <= 50, "bad killed row: %s" % r)
    sched = read_rows(env.prefix + "_schedule.csv")[0]
    check(int(sched["nb_jobs_killed"]) == len(killed), "nb_jobs_killed %s != %d" % (sched["nb_jobs_killed"], len(killed)))


def decision_time(env):
    rc, err, src = env.run(env.tiny("decision_time"),
                           ["-p", env.platform(), "-w", env.workload("spaced_200_delay170"), "-e", env.prefix])
    expect_clean(rc, err, src)
    rows = read_rows(env.prefix + "_jobs.csv")
    check(len(rows) == 200, "%d rows" % len(rows))
    # The reply to SIMULATION_BEGINS already moves the clock to 2 s, so the submission at 0 is
    # delivered at 2 (stamped 0) and job 0 starts at 4, as with real Batsim (dt_empty_later).
    first = [r for r in rows if r["job_id"] == "0"][0]
    check(first["starting_time"] == "4.000000", "job 0 starts at %s, expected 4.000000" % first["starting_time"])
    check(all(float(r["waiting_time"]) >= 2 for r in rows), "a job started without the 2 s decision time")


def interrupted(env):
    def stop_soon(sim):
        time.sleep(1.0)
        sim.send_signal(signal.SIGTERM)
    rc, err, _ = env.run(env.tiny("mute"), ["-p", env.platform(), "-w", env.workload("spaced_200_delay170"),
                                           "-e", env.prefix], on_started=stop_soon)
    check(rc == 128 + signal.SIGTERM, "vtime sim exited %s on SIGTERM: %s" % (rc, err))
    check("interrupted by signal 15" in err, "stderr: %s" % err)
    check(os.path.exists(env.prefix + "_jobs.csv") and os.path.exists(env.prefix + "_schedule.csv"),
          "outputs missing after SIGTERM")


def dead_scheduler(behaviour, rows):
    """A scheduler that exits without its reply: vtime sim says so and exits 5 (ZeroMQ failure)
    at once, its outputs kept, instead of waiting for ever."""
    def case(env):
        t0 = time.monotonic()
        rc, err, sched_rc = env.run(env.tiny(behaviour), ["-p", env.platform(), "-w", env.workload("spaced_200_delay170"),
                                                          "-e", env.prefix])
        took = time.monotonic() - t0
        check(rc == 5, "vtime sim exited %s, expected 5: %s" % (rc, err.strip()))
        check("the scheduler disconnected without replying" in err, "stderr: %s" % err)
        check(took < TIMEOUT / 2, "vtime sim took %.1f s to notice" % took)
        got = read_rows(env.prefix + "_jobs.csv")
        check(len(got) >= rows, "jobs.csv has %d rows, expected at least %d" % (len(got), rows))
        check(os.path.exists(env.prefix + "_schedule.csv"), "no schedule.csv written")
        print(err.strip())
    return case


def cli_errors(env):
    def sim(args):
        p = subprocess.run(env.sim + args, cwd=env.tmp, capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stderr
    bad_xml = os.path.join(env.tmp, "bad.xml")
    with open(bad_xml, "w") as f:
        f.write("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\">\n<host id=\"a\"/>\n</platform>\n")
    parallel = os.path.join(env.tmp, "parallel.json")
    with open(parallel, "w") as f:
        f.write('{"jobs":[{"id":"1","subtime":0,"res":2,"profile":"p"}],'
                '"profiles":{"p":{"type":"parallel_homogeneous","cpu":1e9,"com":1e6}}}')
    w = env.workload("kit_10h_80")
    for args, part in [
        (["-p", env.platform()], "--workload is required"),
        (["-w", w], "one of -p/--platform or --hosts"),
        (["-p", env.platform(), "--hosts", "4", "-w", w], "excludes"),
        (["-p", bad_xml, "-w", w], "line 5: </platform> does not close <zone> opened at line 3"),
        (["--hosts", "4", "-w", parallel], "needs SimGrid's flow-level network sharing"),
        (["--hosts", "4", "-w", w, "-s", "nonsense"], "cannot connect to 'nonsense'"),
        (["--hosts", "4", "-w", w, "-e", os.path.join(env.tmp, "no", "such", "dir", "x")], "cannot create output file"),
    ]:
        rc, err = sim(args)
        check(rc == 2, "%s: exit %s, expected 2 (stderr: %s)" % (args, rc, err.strip()))
        check(part in err, "%s: stderr lacks %r: %s" % (args, part, err.strip()))
    p = subprocess.run(env.sim + ["--help"], capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, "--help exited %s" % p.returncode)
    for part in ["batsim's answers", "not a replacement for simgrid", "vtime run --batsim", "exit codes"]:
        check(part in p.stdout.lower(), "--help lacks %r:\n%s" % (part, p.stdout))


CASES = {
    "golden_spaced": golden("spaced_200_delay170"),
    "golden_burst": golden("burst_200_delay170"),
    "golden_kit": golden("kit_10h_80"),
    "golden_kit_hosts_option": golden("kit_10h_80", hosts=True),
    "periodic_spaced": periodic("spaced_200_delay170", 10),
    "periodic_burst": periodic("burst_200_delay170", 10),
    "periodic_kit": periodic("kit_10h_80", 60),
    "replay_nonet_cml_basic": replay("nonet_cml_basic", 0),
    "replay_nonet_cml_vs_completion": replay("nonet_cml_vs_completion", 0),
    "replay_nonet_cml_now": replay("nonet_cml_now", 3, "event 1 (CALL_ME_LATER): requested time 10.000000 is not after the current simulated time 10.000000"),
    "golden_net_spaced": golden_net("spaced_200_delay170"),
    "golden_net_burst": golden_net("burst_200_delay170"),
    "golden_net_kit": golden_net("kit_10h_80"),
    "golden_net_wl20": golden_net("wl20"),
    "golden_net_wl2000": golden_net("wl2000"),
    "replay_net_batsched_fcfs": replay_net("batsched_fcfs_wl20"),
    "replay_net_batsched_easybf_cml": replay_net("batsched_easybf_cml_inject"),
    "replay_net_easybf": replay_net("easybf_wl20"),
    "replay_net_py_fcfs": replay_net("py_fcfs_wl20"),
    "replay_net_cml_dup_ts": replay_net("cml_dup_ts_other"),
    "replay_net_cml_in_callback": replay_net("cml_in_callback"),
    "replay_net_cml_plus_0_0007": replay_net("cml_only_plus_0_0007"),
    "replay_net_cml_plus_0_0013": replay_net("cml_plus_0_0013"),
    "replay_net_cml_plus_0_0005": replay_net("cml_only_plus_0_0005", 3, "requested time 10.001100 is not after the current simulated time 10.001200"),
    "replay_net_cml_plus_0_0011": replay_net("cml_plus_0_0011", 3, "requested time 10.001700 is not after the current simulated time 10.001800"),
    "replay_net_dt_empty_later": replay_net("dt_empty_later"),
    "replay_net_dt_exec_later": replay_net("dt_exec_later"),
    "replay_net_dt_later_than_cml": replay_net("dt_later_than_cml"),
    "replay_net_dt_mixed_ts": replay_net("dt_mixed_ts"),
    "replay_net_extra_fields": replay_net("extra_fields"),
    # A REQUESTED_CALL and a submission due at the same nanosecond: SimGrid's double rounding
    # decides which step comes first (the submission here), and vtime follows it.
    "replay_net_cml_basic": replay_net("cml_basic"),
    "replay_smallplat_cml": replay("smallplat_cml", 0, platform="small_platform.xml", workload="wl20_4.json"),
    "replay_net_cml_now": replay_net("cml_now", 3, "requested time 10.000600 is not after the current simulated time 10.001800"),
    "replay_net_cml_tiny_future": replay_net("cml_tiny_future", 3, "requested time 10.000600001 is not after"),
    "replay_net_cml_after_end": replay_net("cml_after_end", 3, "the reply to SIMULATION_ENDS must carry no event"),
    "replay_net_exec_twice": replay_net("exec_twice", 3, "job 'w0!0' was already executed (started at 10.001200)"),
    "replay_net_now_earlier": replay_net("now_earlier"),
    "bad_malformed_json": bad("malformed_json", 3, "invalid reply to message 1 (now=0.000000): message is not valid JSON: parse error at line 1, column"),
    "bad_empty_reply": bad("empty_reply", 3, "message is empty (0 bytes)"),
    "bad_missing_events": bad("missing_events", 3, "message: missing field 'events'"),
    "bad_now_string": bad("now_string", 3, "message: field 'now' must be a number of seconds (got string \"0.0\")"),
    "bad_ts_gt_now": bad("ts_gt_now", 3, "event 0 (EXECUTE_JOB): timestamp 1.000000 is later than the message's now 0.000000"),
    "bad_cml_now": bad("cml_now", 3, "event 0 (CALL_ME_LATER): requested time 0.000000 is not after the current simulated time 0.000000"),
    "bad_cml_past": bad("cml_past", 3, "event 0 (CALL_ME_LATER): requested time -2.000000 is not after"),
    "bad_cml_extra_key": bad("cml_extra_key", 3, "event 0 (CALL_ME_LATER): 'data' must have exactly 1 member"),
    "bad_exec_unknown_job": bad("exec_unknown_job", 3, "event 1 (EXECUTE_JOB): job 'w0!9999' does not exist in the workload"),
    "bad_exec_bad_alloc": bad("exec_bad_alloc", 3, "event 0 (EXECUTE_JOB): allocation '0-1' has 2 resources but job 'w0!0' requested 1"),
    "bad_exec_twice": bad("exec_twice", 3, "event 1 (EXECUTE_JOB): job 'w0!0' was already executed (started at 0.000000)"),
    "bad_exec_no_such_resource": bad("exec_no_such_resource", 3, "resource 99 does not exist (the platform has resources 0-15)"),
    "bad_exec_not_submitted": bad("exec_not_submitted", 3, "job 'w0!150' has not been submitted yet (it is submitted at 1500.000000)"),
    "bad_exec_busy": bad("exec_busy", 3, "invalid reply to message 2 (now=10.000000): event 0 (EXECUTE_JOB): resource 0 is already computing job 'w0!0' and compute sharing is disabled"),
    "bad_unknown_event_type": bad("unknown_event_type", 3, "event 0 (FOO): unknown event type 'FOO'"),
    "bad_unsupported_event": bad("unsupported_event", 3, "event 0 (SET_JOB_METADATA): this event type is not supported by vtime sim"),
    "bad_notify": bad("bad_notify", 3, "event 0 (NOTIFY): field 'data.type' must be 'registration_finished' or 'continue_registration'"),
    "bad_kill_not_started": bad("kill_not_started", 3, "event 0 (KILL_JOB): job 'w0!0' cannot be killed: it has not been started"),
    "bad_reject_running": bad("reject_running", 3, "event 1 (REJECT_JOB): job 'w0!0' cannot be rejected"),
    "bad_cml_after_end": bad("cml_after_end", 3, "event 0 (CALL_ME_LATER): the reply to SIMULATION_ENDS must carry no event (real Batsim aborts on a CALL_ME_LATER here)", rows=200),
    "stalled": bad("stall", 4, "simulation stalled at 1990.000000: 200 submitted job(s) were neither executed nor rejected (w0!0, w0!1, w0!2, w0!3, w0!4, ...)", rows=0),
    "rejecter": rejecter,
    "killer": killer,
    "decision_time": decision_time,
    "interrupted": interrupted,
    "dead_scheduler_midway": dead_scheduler("die_midway", 0),
    "dead_scheduler_at_end": dead_scheduler("die_at_end", 200),
    "cli_errors": cli_errors,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--sim")
    ap.add_argument("--fcfs")
    ap.add_argument("--src", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    env = Env(args)
    try:
        CASES[args.case](env)
    except (Failure, subprocess.TimeoutExpired, OSError) as e:
        print("FAIL %s: %s\n(files kept in %s)" % (args.case, e, env.tmp))
        return 1
    print("PASS", args.case)
    env.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
