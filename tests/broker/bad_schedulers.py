#!/usr/bin/python3
"""Schedulers that fail the way real ones do, for the broker's supervision tests.

usage: bad_schedulers.py MODE ENDPOINT [MARKER]

Each binds REP at ENDPOINT, answers SIMULATION_BEGINS, and at the first JOB_SUBMITTED:
  crash   dies of SIGSEGV before replying;
  exit    exits with status 9 before replying;
  busy    spins on the CPU forever without replying;
  silent  blocks forever on a pipe nobody writes, without replying;
  child   starts a child process that sleeps (virtually) for a day, then crashes: the broker
          must leave nothing running.
  late    rejects the first 4 jobs (real decisions), then dies of SIGSEGV at the 5th, mid-run.
  endless rejects every job and asks to be called back 1 s later, forever, after some real CPU
          work per message: a valid run that only a signal ends.
  late_bind sleeps 10 (virtual) seconds before it binds, then rejects every job: the broker must
          drive its clock before the simulation begins.
  forker  runs 60 short-lived processes per message and rejects every job: over a run more
          processes come and go than vtime's process table holds (512).
  slow_start computes for 4 s of CPU time before it answers SIMULATION_BEGINS (a start-up at a
          frozen clock, as a Kubernetes control plane's), then rejects every job.
  busy_start spins forever on SIMULATION_BEGINS.
MARKER is an unused argument the tests grep for to prove no process is left behind.
"""
import json
import os
import signal
import subprocess
import sys
import time

import zmq


def main():
    mode, endpoint = sys.argv[1], sys.argv[2]
    if mode == "late_bind":
        time.sleep(10)
    sock = zmq.Context().socket(zmq.REP)
    sock.bind(endpoint)
    seen = 0
    first = True
    while True:
        msg = json.loads(sock.recv())
        if mode in ("slow_start", "busy_start") and first:
            # CPU time, not the clock: the clock is virtual and stands still meanwhile.
            while mode == "busy_start" or time.process_time() < 4:
                pass
        first = False
        if mode == "endless":
            for _ in range(100000):  # real work: the virtual clock does not move meanwhile
                pass
            now = msg["now"]
            events = [{"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
                      for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
            if not any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                events.append({"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": now + 1}})
            sock.send_string(json.dumps({"now": now, "events": events}))
            continue
        if mode == "forker":
            # 60 short-lived processes per message (as Slurm starts a slurmstepd per job), then
            # every job rejected: hundreds of processes come and go over the run.
            for _ in range(60):
                subprocess.run(["true"] + sys.argv[3:4], check=True)
            events = [{"timestamp": msg["now"], "type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
                      for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
            sock.send_string(json.dumps({"now": msg["now"], "events": events}))
            if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                return
            continue
        if mode in ("late", "late_bind", "slow_start", "busy_start"):
            events = []
            for e in msg["events"]:
                if e["type"] == "JOB_SUBMITTED":
                    seen += 1
                    if seen == 5 and mode == "late":
                        os.kill(os.getpid(), signal.SIGSEGV)
                    events.append({"timestamp": msg["now"], "type": "REJECT_JOB",
                                   "data": {"job_id": e["data"]["job_id"]}})
            sock.send_string(json.dumps({"now": msg["now"], "events": events}))
            continue
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            if mode == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif mode == "exit":
                os._exit(9)
            elif mode == "busy":
                while True:
                    pass
            elif mode == "silent":
                r, _ = os.pipe()
                os.read(r, 1)
            elif mode == "child":
                subprocess.Popen(["sleep", "86400"] + sys.argv[3:4])
                os.kill(os.getpid(), signal.SIGSEGV)
        sock.send_string(json.dumps({"now": msg["now"], "events": []}))


main()
