#!/usr/bin/python3
"""batch_window_event.py -s ENDPOINT --window W [--decision-cost MS]

The event-based twin of batch_window.py: the same policy (examples/README.md), but a window's end
is a CALL_ME_LATER(now + W) answered by Batsim's REQUESTED_CALL instead of a timer, so it runs
directly against Batsim or `vtime sim`, with no broker.

Exit status: 0 after answering SIMULATION_ENDS, 2 bad command line, 143 on SIGTERM.
"""
import argparse
import json
import signal
import sys

import zmq

from batch_policy import BatchWindow, spend_cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("-s", "--socket-endpoint", default="tcp://*:28000", help="ZeroMQ endpoint to bind (REP)")
    ap.add_argument("--window", type=float, required=True, help="seconds a window stays open")
    ap.add_argument("--decision-cost", type=float, default=0.0, metavar="MS",
                    help="real CPU milliseconds spent on each message before replying")
    args = ap.parse_args()
    if not args.window > 0:
        ap.error("--window must be positive")
    if not args.decision_cost >= 0:
        ap.error("--decision-cost must not be negative")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    policy = BatchWindow()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.linger = 0  # a signal's exit owes nothing and must not wait
    sock.bind(args.socket_endpoint)
    while not policy.ended:
        msg = json.loads(sock.recv())
        now = msg["now"]
        opened = policy.record(msg["events"])
        # Our only CALL_ME_LATER is the open window's end; a message's events count first.
        if any(e["type"] == "REQUESTED_CALL" for e in msg["events"]):
            policy.close_window()
        events = [] if policy.ended else [dict(timestamp=now, **d) for d in policy.schedule()]
        if opened:
            events.append({"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": now + args.window}})
        spend_cpu(args.decision_cost)
        sock.send_string(json.dumps({"now": now, "events": events}))
    # The reply to SIMULATION_ENDS must leave, even on a loaded machine (bounded: 30 s).
    sock.close(linger=30000)
    # close() only hands the last reply to ZeroMQ's I/O thread: term() waits until it has left.
    # Without it the process may exit first, and the simulator waits for that reply forever.
    ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
