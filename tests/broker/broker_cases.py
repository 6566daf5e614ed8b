#!/usr/bin/python3
"""`vtime run` against schedulers that misbehave: every invalid reply of the reference
transcripts, a crash, an exit, a busy loop, a scheduler that never replies, and a crash that
leaves a child behind. Each case checks the documented exit code, the one error line naming what
went wrong, that the simulator's outputs so far were written, and that nothing is left running.

usage: broker_cases.py CASE --vtime VTIME --data DIR    (--list shows the cases)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "..", "sim", "tiny_schedulers.py")
BAD = os.path.join(HERE, "bad_schedulers.py")
PY = "/usr/bin/python3"

# behaviour of tests/sim/tiny_schedulers.py -> what the broker's error line must name
INVALID = {
    "malformed_json": "invalid reply",
    "empty_reply": "invalid reply",
    "missing_events": "events",
    "now_string": "now",
    "ts_gt_now": "EXECUTE_JOB",
    "cml_now": "CALL_ME_LATER",
    "cml_past": "CALL_ME_LATER",
    "exec_unknown_job": "unknown job 'w0!9999'",
    "exec_bad_alloc": "EXECUTE_JOB",
    "exec_twice": "already executed",
    "unknown_event_type": "FOO",
}
SUPERVISION = {
    "crash": (4, "killed by signal 11"),
    "exit": (4, "exited with status 9"),
    "busy": (5, "busy"),
    "silent": (6, "blocked forever without replying"),
    "child": (4, "killed by signal 11"),
    "late_bind": (0, ""),
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def leftovers(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return [p for p in out if int(p) != os.getpid()]


def run_case(name, args):
    marker = "vtime-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        prefix = os.path.join(tmp, "out")
        if name in INVALID:
            sched = [PY, TINY, name, "{endpoint}"]
            want_rc, want_text = 3, INVALID[name]
        else:
            sched = [PY, BAD, name, "{endpoint}", marker]
            want_rc, want_text = SUPERVISION[name]
        cmd = [args.vtime, "run", "--hosts", "4", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix,
               "--crash-timeout", "2", "-q", "--"] + sched
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        print(r.stderr)
        if r.returncode != want_rc:
            fail("exit status %d, expected %d" % (r.returncode, want_rc))
        if want_text not in r.stderr:
            fail("stderr does not name %r" % want_text)
        outputs_kept_nothing_left(prefix, marker)
    print("PASS")


def outputs_kept_nothing_left(prefix, marker):
    """After a failed or stopped run: the simulator wrote both outputs, and no process of the run
    (they carry `marker` in their arguments) is left."""
    for suffix in ("_jobs.csv", "_schedule.csv"):
        if not os.path.exists(prefix + suffix):
            fail("the simulator's %s was not written" % suffix)
    left = leftovers(marker)
    if left:
        fail("processes left running: %s" % left)


def run_sigterm(args):
    """SIGTERM to `vtime run` itself (not its process group) in the middle of an endless run: the
    embedded simulator stops in order and writes its outputs, the broker ends the scheduler, and
    vtime exits 128 + 15 naming the signal."""
    import signal
    import time
    marker = "vtime-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        prefix = os.path.join(tmp, "out")
        cmd = [args.vtime, "run", "--hosts", "4", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix, "-q",
               "--", PY, BAD, "endless", "{endpoint}", marker]
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        # Until the run is under way: rows in _jobs.csv (one per rejected job).
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None:
            if os.path.exists(prefix + "_jobs.csv") and len(open(prefix + "_jobs.csv").read().splitlines()) > 1:
                break
            time.sleep(0.05)
        if p.poll() is not None:
            fail("vtime run ended by itself (status %s): %s" % (p.returncode, p.stderr.read()))
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            fail("vtime run did not stop within 60 s of SIGTERM")
        print(err)
        if p.returncode != 143:
            fail("exit status %d after SIGTERM, expected 143" % p.returncode)
        if "signal 15" not in err:
            fail("stderr does not name signal 15")
        outputs_kept_nothing_left(prefix, marker)
        if len(open(prefix + "_jobs.csv").read().splitlines()) < 2:
            fail("_jobs.csv lost the rows written before the signal")
    print("PASS")


def run_sim_limit(args):
    """--max-sim-time: a scheduler that asks for wake-ups forever (the simulation could never end)
    is stopped once Batsim's time passes the limit: exit 8 naming it, outputs written, nothing
    left running. Without the limit the same run only ends by a signal (case sigterm)."""
    marker = "vtime-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        prefix = os.path.join(tmp, "out")
        cmd = [args.vtime, "run", "--hosts", "4", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix, "-q",
               "--max-sim-time", "300", "--", PY, BAD, "endless", "{endpoint}", marker]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        print(r.stderr)
        if r.returncode != 8:
            fail("exit status %d, expected 8" % r.returncode)
        if "--max-sim-time" not in r.stderr:
            fail("stderr does not name --max-sim-time")
        outputs_kept_nothing_left(prefix, marker)
    print("PASS")


def run_start_timeout(args):
    """--start-timeout: a scheduler whose start-up (its answer to SIMULATION_BEGINS) is 4 s of
    computation completes the run at a crash timeout of 2 s given a start timeout of 60 s, and
    without one is reported busy (exit 5) as before; a scheduler that spins forever at start-up
    is reported after the start timeout (2 s here), although the crash timeout is 120 s."""
    def run(mode, extra, marker, prefix):
        cmd = [args.vtime, "run", "--hosts", "4", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix, "-q"] + \
            extra + ["--", PY, BAD, mode, "{endpoint}", marker]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        took = time.monotonic() - t0
        print("%s %s: exit %d after %.1f s: %s" % (mode, " ".join(extra), r.returncode, took, r.stderr.strip()[-300:]))
        return r, took

    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        marker = "vtime-test-" + uuid.uuid4().hex
        r, _ = run("slow_start", ["--crash-timeout", "2", "--start-timeout", "60"], marker, os.path.join(tmp, "a"))
        if r.returncode != 0:
            fail("a 4 s start-up within --start-timeout 60: exit %d, expected 0" % r.returncode)
        rows = open(os.path.join(tmp, "a_jobs.csv")).read().splitlines()[1:]
        if len(rows) != 20 or not all(",REJECTED," in x for x in rows):
            fail("expected 20 rejected jobs, got %d rows" % len(rows))
        r, _ = run("slow_start", ["--crash-timeout", "2"], marker, os.path.join(tmp, "b"))
        if r.returncode != 5 or "busy" not in r.stderr:
            fail("a 4 s start-up at --crash-timeout 2 and no start timeout: exit %d, expected 5 (busy)" % r.returncode)
        outputs_kept_nothing_left(os.path.join(tmp, "b"), marker)
        r, took = run("busy_start", ["--crash-timeout", "120", "--start-timeout", "2"], marker, os.path.join(tmp, "c"))
        if r.returncode != 5 or "start timeout" not in r.stderr:
            fail("a start-up spinning forever at --start-timeout 2: exit %d, expected 5 naming the start timeout"
                 % r.returncode)
        if took > 100:
            fail("reported after %.0f s: the crash timeout (120 s), not the start timeout, bounded the start-up" % took)
        outputs_kept_nothing_left(os.path.join(tmp, "c"), marker)
    print("PASS")


def run_timeout_processes(args):
    """--sync timeout with a scheduler whose processes come and go by the hundred (60 per message,
    over 1,000 in the run): their table slots are freed as they die, although the timeout policy
    never waits for an idle tree (it used to fill vtime's 512-process table: exit 122 in the
    scheduler's children, as Slurm's slurmstepd under a sweep)."""
    marker = "vtime-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        prefix = os.path.join(tmp, "out")
        cmd = [args.vtime, "run", "--hosts", "4", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix, "-q",
               "--sync", "timeout", "--timeout", "5", "--", PY, BAD, "forker", "{endpoint}", marker]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        print(r.stderr[-2000:])
        if r.returncode != 0:
            fail("exit status %d, expected 0" % r.returncode)
        if "table full" in r.stderr:
            fail("vtime's table filled up")
        rows = open(prefix + "_jobs.csv").read().splitlines()[1:]
        if len(rows) != 20 or not all(",REJECTED," in x for x in rows):
            fail("expected 20 rejected jobs, got %d rows" % len(rows))
    print("PASS")


def run_own_fds(args):
    """The scheduler `vtime run` starts inherits none of its output files (PREFIX_jobs.csv is
    open before the scheduler starts: a scheduler, or any program it runs, could write into it)."""
    with tempfile.TemporaryDirectory(prefix="vtime-broker-test-") as tmp:
        prefix = os.path.join(tmp, "out")
        cmd = [args.vtime, "run", "--hosts", "16", "-w", os.path.join(args.data, "wl20.json"), "-e", prefix, "-q", "--",
               PY, TINY, "own_fds", "{endpoint}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        print(r.stderr)
        if r.returncode != 0:
            fail("exit status %d: %s" % (r.returncode, r.stderr.strip()[-500:]))
    print("PASS")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--vtime")
    ap.add_argument("--data")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(list(INVALID) + list(SUPERVISION) + ["sigterm", "sim_limit", "timeout_processes", "start_timeout",
                                                           "own_fds"]))
        return
    if args.case == "sigterm":
        run_sigterm(args)
    elif args.case == "sim_limit":
        run_sim_limit(args)
    elif args.case == "timeout_processes":
        run_timeout_processes(args)
    elif args.case == "start_timeout":
        run_start_timeout(args)
    elif args.case == "own_fds":
        run_own_fds(args)
    else:
        run_case(args.case, args)


main()
