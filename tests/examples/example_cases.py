#!/usr/bin/python3
"""Tests of the example schedulers that need no broker: the event-based ones against `vtime sim`,
and the real-time ones' protocol handling in real time.

usage: example_cases.py CASE --vtime VTIME --event-fcfs EVENT_FCFS --periodic-fcfs PERIODIC_FCFS
       example_cases.py --list

Exit 0 when the case passes; otherwise 1 and the reason on stdout.
"""
import argparse
import json
import os
import signal
import subprocess
import time

import zmq

from runs import (BATCH_WINDOW, BATCH_WINDOW_EVENT, PYTHON, ROOT, WORKLOADS, Failure, check, complete, main,
                  rows, run_sim, same_jobs)

REPEATS = 3
GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "nonet16_%s_pysched", "out_jobs.csv")


def deterministic(args, scratch, sched_cmd, wl, tag):
    """REPEATS runs against vtime sim; all byte-identical and complete. Returns the _jobs.csv text."""
    first = run_sim(args.vtime, sched_cmd, wl, scratch, tag)
    complete(first, wl, tag)
    for i in range(1, REPEATS):
        same_jobs(first, run_sim(args.vtime, sched_cmd, wl, scratch, tag), "run 1", "run %d" % (i + 1))
    return first


def batch_window_event(wl, window=30):
    def case(args, scratch):
        text = deterministic(args, scratch, [PYTHON, BATCH_WINDOW_EVENT, "-s", "{endpoint}", "--window", str(window)],
                             wl, "batch_window_event")
        # The policy's shape (examples/README.md): a job starts at the end of its window or later,
        # and only at a window's end or when another job finishes.
        got = sorted(rows(text), key=lambda r: (float(r["submission_time"]), int(r["job_id"])))
        window_of, end = {}, None
        for r in got:
            sub = float(r["submission_time"])
            if end is None or sub > end:  # a submission at exactly the end joins that window
                end = sub + window
            window_of[r["job_id"]] = end
        instants = set(window_of.values()) | {float(r["finish_time"]) for r in got}
        for r in got:
            start = float(r["starting_time"])
            check(start >= window_of[r["job_id"]],
                  "job %s starts at %s, before its window ends at %s" % (r["job_id"], start, window_of[r["job_id"]]))
            check(start in instants, "job %s starts at %s: neither a window end nor a completion" % (r["job_id"], start))
    return case


def event_fcfs_periodic(wl, period=1):
    def case(args, scratch):
        text = deterministic(args, scratch, [args.event_fcfs, "-s", "{endpoint}", "--period", str(period)],
                             wl, "event_fcfs")
        with open(GOLDEN % wl) as f:
            golden = {r["job_id"]: r for r in rows(f.read())}
        for r in rows(text):
            j, g = r["job_id"], golden[r["job_id"]]
            start, sub, gstart = float(r["starting_time"]), float(r["submission_time"]), float(g["starting_time"])
            k = round(start / period)
            check(abs(start - k * period) < 1e-9 and k >= 1,
                  "job %s starts at %s, not on a tick (P, 2P, ...) of period %s" % (j, start, period))
            check(start >= sub, "job %s starts at %s before its submission at %s" % (j, start, sub))
            # The workloads' times are whole seconds, so with period 1 the periodic rounding delays
            # each start by at most one period and never changes the allocation.
            check(gstart <= start <= gstart + period,
                  "job %s starts at %s; event-driven FCFS (golden) starts it at %s: more than one period apart"
                  % (j, start, gstart))
            check(r["allocated_resources"] == g["allocated_resources"],
                  "job %s on %s; golden on %s" % (j, r["allocated_resources"], g["allocated_resources"]))
    return case


# ---- real-time protocol checks (no virtual clock: short real periods) -------------------------

def first_message():
    path = os.path.join(ROOT, "tests", "data", "batsim-4.2.1", "transcripts", "batsched_fcfs_wl20.jsonl")
    with open(path) as f:
        return json.loads(f.readline())["raw"]  # SIMULATION_BEGINS, 16 resources, at 0


def submitted(now, job, res):
    return {"timestamp": now, "type": "JOB_SUBMITTED",
            "data": {"job_id": job, "job": {"id": job, "subtime": now, "walltime": -1, "res": res, "profile": "p"}}}


class Peer:
    """Plays Batsim against a scheduler process in real time."""

    def __init__(self, scratch, cmd):
        self.endpoint, _ = scratch.next("peer")
        self.cmd = [a.replace("{endpoint}", self.endpoint) for a in cmd]
        self.proc = subprocess.Popen(self.cmd, cwd=scratch.dir)
        self.sock = zmq.Context.instance().socket(zmq.REQ)
        self.sock.linger = 0
        self.sock.rcvtimeo = 5000
        self.sock.connect(self.endpoint)

    def send(self, raw):
        self.sock.send_string(raw if isinstance(raw, str) else json.dumps(raw))
        try:
            return json.loads(self.sock.recv())
        except zmq.Again:
            raise Failure("%s did not reply within 5 s" % self.cmd[0])

    def wait_bound(self):
        """Waits until the scheduler has bound its endpoint (ipc:// creates the socket file)."""
        path = self.endpoint[len("ipc://"):]
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            check(time.monotonic() < deadline and self.proc.poll() is None, "%s never bound %s" % (self.cmd[0], path))
            time.sleep(0.02)

    def exit_code(self):
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            raise Failure("%s still running 5 s after it should have exited" % self.cmd[0])

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()


def periodic_fcfs_protocol(args, scratch):
    peer = Peer(scratch, [args.periodic_fcfs, "-s", "{endpoint}", "--period", "0.05"])
    try:
        r = peer.send(first_message())
        check(r == {"now": 0.0, "events": []}, "reply to SIMULATION_BEGINS: %s" % r)
        r = peer.send({"now": 0.5, "events": [submitted(0.5, "w0!0", 1), submitted(0.5, "w0!1", 17),
                                              submitted(0.5, "w0!2", 2)]})
        check(r == {"now": 0.5, "events": []}, "the protocol thread decided by itself: %s" % r)
        time.sleep(0.5)  # several passes
        r = peer.send({"now": 1.0, "events": []})  # a tick
        want = [{"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!0", "alloc": "0"}},
                {"timestamp": 1.0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}},
                {"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "1-2"}}]
        check(r == {"now": 1.0, "events": want}, "reply to the tick after the passes:\n  %s\nexpected\n  %s"
              % (r, {"now": 1.0, "events": want}))
        r = peer.send({"now": 2.0, "events": []})
        check(r == {"now": 2.0, "events": []}, "decisions handed over twice: %s" % r)
        r = peer.send({"now": 3.0, "events": [{"timestamp": 3.0, "type": "SIMULATION_ENDS", "data": {}}]})
        check(r == {"now": 3.0, "events": []}, "reply to SIMULATION_ENDS: %s" % r)
        rc = peer.exit_code()
        check(rc == 0, "periodic_fcfs exited %s after SIMULATION_ENDS" % rc)
    finally:
        peer.close()


def sigterm(cmd_of):
    def case(args, scratch):
        for begin in (False, True):  # before any message, and with the scheduling thread running
            peer = Peer(scratch, cmd_of(args))
            try:
                if begin:
                    peer.send(first_message())
                    peer.send({"now": 1.0, "events": [submitted(1.0, "w0!0", 1)]})
                else:
                    peer.wait_bound()
                peer.proc.send_signal(signal.SIGTERM)
                rc = peer.exit_code()
                check(rc == 143, "%s exited %s on SIGTERM (%s), expected 143"
                      % (peer.cmd[0], rc, "after SIMULATION_BEGINS" if begin else "while waiting"))
            finally:
                peer.close()
    return case


CASES = {}
for _wl in WORKLOADS:
    CASES["batch_window_event." + _wl] = batch_window_event(_wl)
    CASES["event_fcfs_period1." + _wl] = event_fcfs_periodic(_wl)
CASES["periodic_fcfs.protocol"] = periodic_fcfs_protocol
CASES["periodic_fcfs.sigterm"] = sigterm(lambda a: [a.periodic_fcfs, "-s", "{endpoint}", "--period", "0.05",
                                                    "--work-ms", "20"])
CASES["batch_window.sigterm"] = sigterm(lambda a: [PYTHON, BATCH_WINDOW, "-s", "{endpoint}", "--window", "0.05"])

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?", default="--list")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--vtime", help="the vtime binary (or 'vtime-sim'), which has the sim subcommand")
    ap.add_argument("--event-fcfs")
    ap.add_argument("--periodic-fcfs")
    ap.add_argument("--go-fcfs", help="the Go example scheduler (absent when Go is not installed)")
    raise SystemExit(main(CASES, ap))
