#!/usr/bin/python3
"""A trivial event-based scheduler for the broker-overhead benchmark: FCFS on every event, one
blocking recv per message (no timeouts, so under `vtime run` it has no timer of its own).

usage: trivial_scheduler.py ENDPOINT
"""
import json
import sys

import zmq

ctx = zmq.Context()
sock = ctx.socket(zmq.REP)
sock.bind(sys.argv[1])
free, queue, running = [], [], {}
while True:
    msg = json.loads(sock.recv())
    now, out, ends = msg["now"], [], False
    for e in msg["events"]:
        t, d = e["type"], e["data"]
        if t == "SIMULATION_BEGINS":
            free = sorted(r["id"] for r in d["compute_resources"])
        elif t == "JOB_SUBMITTED":
            queue.append((d["job_id"], d["job"]["res"]))
        elif t == "JOB_COMPLETED":
            free = sorted(free + running.pop(d["job_id"]))
        elif t == "SIMULATION_ENDS":
            ends = True
    while queue and queue[0][1] <= len(free):
        job, res = queue.pop(0)
        running[job], free = free[:res], free[res:]
        out.append({"timestamp": now, "type": "EXECUTE_JOB",
                    "data": {"job_id": job, "alloc": " ".join(map(str, running[job]))}})
    sock.send_string(json.dumps({"now": now, "events": out}))
    if ends:
        break
sock.close(linger=1000)  # the last reply leaves before exit
ctx.term()
