#!/usr/bin/python3
"""batch_window.py -s ENDPOINT --window W [--decision-cost MS]

A real-time batching scheduler: the first submission after a quiet period opens a window of W
seconds (a threading.Timer); when the timer fires, every job submitted so far becomes
schedulable and is started FCFS on the lowest-numbered free resources; jobs that do not fit start
FCFS as resources free up. The timer's decisions are handed over in the reply to the next message
(under `vtime run`, the tick the broker sends when the timer fires). Policy: examples/README.md.

Exit status: 0 after answering SIMULATION_ENDS, 2 bad command line, 143 on SIGTERM.
"""
import argparse
import json
import signal
import sys
import threading

import zmq

from batch_policy import BatchWindow, spend_cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("-s", "--socket-endpoint", default="tcp://*:28000", help="ZeroMQ endpoint to bind (REP)")
    ap.add_argument("--window", type=float, required=True, help="seconds a window stays open")
    ap.add_argument("--decision-cost", type=float, default=0.0, metavar="MS",
                    help="real CPU milliseconds each window's pass spends before publishing its decisions")
    args = ap.parse_args()
    if not args.window > 0:
        ap.error("--window must be positive")
    if not args.decision_cost >= 0:
        ap.error("--decision-cost must not be negative")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    policy = BatchWindow()
    lock = threading.Lock()  # guards policy and outbox, shared with the timer threads
    outbox = []              # decisions not yet handed to Batsim

    def window_ends():
        with lock:
            policy.close_window()
            decided = policy.schedule()
        if args.decision_cost:
            # Think without the lock: the protocol thread keeps answering meanwhile, so the
            # decisions go out late when the sync policy does not wait for them.
            spend_cpu(args.decision_cost)
        with lock:
            outbox.extend(decided)

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.linger = 0  # a signal's exit owes nothing and must not wait
    sock.bind(args.socket_endpoint)
    while not policy.ended:
        msg = json.loads(sock.recv())
        now = msg["now"]
        with lock:
            if policy.record(msg["events"]):
                timer = threading.Timer(args.window, window_ends)
                timer.daemon = True
                timer.start()
            outbox.extend(policy.schedule())
            events = [] if policy.ended else [dict(timestamp=now, **d) for d in outbox]
            outbox.clear()
        sock.send_string(json.dumps({"now": now, "events": events}))
    # The reply to SIMULATION_ENDS must leave, even on a loaded machine (bounded: 30 s).
    sock.close(linger=30000)
    # close() only hands the last reply to ZeroMQ's I/O thread: term() waits until it has left.
    # Without it the process may exit first, and the simulator waits for that reply forever.
    ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
