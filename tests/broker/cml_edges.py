#!/usr/bin/python3
"""A scheduler probing the broker's CALL_ME_LATER edge cases under `vtime run`. It rejects every
job (so the simulation can end) and checks what its timers see; it prints "CHECK-OK MODE" and
exits 0 when every check held, otherwise prints "CHECK-FAILED: why" and exits 1.

usage: cml_edges.py MODE ENDPOINT
  same_instant   three threading.Timers due at the same instant (5 s): all fire at exactly 5 s,
                 and the scheduler gets a tick at 5 s;
  timer_and_cml  a timer at 7 s and the scheduler's own CALL_ME_LATER(7): the REQUESTED_CALL
                 reaches the scheduler exactly once, at 7 s, and the timer fires at 7 s;
  inside_lead    a timer 0.1 s ahead while the broker's lead is larger: Batsim is never asked for
                 a target at or before its clock, and the timer fires (late, at the lead);
  pending_at_end a periodic 1 s timer still armed when the last job is done: the simulation
                 still ends (no CALL_ME_LATER keeps it alive) and SIMULATION_ENDS arrives.
"""
import json
import sys
import threading
import time

import zmq

mode, endpoint = sys.argv[1], sys.argv[2]
lock = threading.Lock()
fired = []          # virtual times at which timers fired
requested_calls = []
ticks = []
failures = []


def check(cond, why):
    if not cond:
        failures.append(why)


def timer_cb(tag):
    def cb():
        with lock:
            fired.append((tag, time.time() - t0))
    return cb


def periodic():
    while True:
        time.sleep(1)
        with lock:
            fired.append(("periodic", time.time() - t0))


sock = zmq.Context().socket(zmq.REP)
sock.bind(endpoint)
t0 = None
while True:
    msg = json.loads(sock.recv())
    now = msg["now"]
    events = []
    types = [e["type"] for e in msg["events"]]
    if not types:
        ticks.append(now)
    for e in msg["events"]:
        if e["type"] == "SIMULATION_BEGINS":
            t0 = time.time()
            if mode == "same_instant":
                for tag in "abc":
                    threading.Timer(5, timer_cb(tag)).start()
            elif mode == "timer_and_cml":
                threading.Timer(7, timer_cb("t")).start()
                events.append({"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": now + 7}})
            elif mode == "inside_lead":
                threading.Timer(0.1, timer_cb("t")).start()
            elif mode == "pending_at_end":
                threading.Thread(target=periodic, daemon=True).start()
        elif e["type"] == "JOB_SUBMITTED":
            events.append({"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}})
        elif e["type"] == "REQUESTED_CALL":
            requested_calls.append(now)
        elif e["type"] == "SIMULATION_ENDS":
            sock.send_string(json.dumps({"now": now, "events": []}))
            with lock:
                if mode == "same_instant":
                    check(sorted(f for _, f in fired) == [5.0, 5.0, 5.0], "timers fired at %s" % fired)
                    check(5.0 in ticks, "no tick at 5 s: ticks %s" % ticks)
                elif mode == "timer_and_cml":
                    check(requested_calls == [7.0], "REQUESTED_CALLs seen at %s, expected [7.0]" % requested_calls)
                    check([f for _, f in fired] == [7.0], "timer fired at %s" % fired)
                elif mode == "inside_lead":
                    check(len(fired) == 1 and fired[0][1] >= 0.1, "timer fired at %s" % fired)
                elif mode == "pending_at_end":
                    check(len(fired) >= 1, "the periodic timer never fired")
            if failures:
                print("CHECK-FAILED: " + "; ".join(failures))
                sys.exit(1)
            print("CHECK-OK " + mode)
            sys.exit(0)
    sock.send_string(json.dumps({"now": now, "events": events}))
