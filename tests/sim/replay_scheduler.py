#!/usr/bin/python3
"""A scheduler that replays the replies of a real Batsim 4.2.1 transcript.

It binds a REP socket, and for each message the simulator sends, compares it with the message
real Batsim sent at that point (byte-for-byte, or as JSON for SIMULATION_BEGINS whose profile
order comes from a C++ unordered_map), then answers with the recorded reply. Exit 0 when every
message matched, 1 on the first difference (printed on stderr).

usage: replay_scheduler.py ENDPOINT TRANSCRIPT.jsonl
"""
import json
import sys

import zmq


def main():
    endpoint, path = sys.argv[1], sys.argv[2]
    records = [json.loads(line) for line in open(path)]
    to_sched = [r for r in records if r["dir"] == "batsim->sched"]
    replies = {r["seq"]: r["raw"] for r in records if r["dir"] == "sched->batsim"}
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    try:
        return replay(to_sched, replies, sock)
    finally:
        sock.close(linger=30000)  # the last reply leaves before exit
        ctx.term()


def replay(to_sched, replies, sock):
    for rec in to_sched:
        got = sock.recv().decode()
        want = rec["raw"]
        if got != want:
            same_json = "SIMULATION_BEGINS" in want and json.loads(got) == json.loads(want)
            if not same_json:
                sys.stderr.write("replay: message %d differs\n  real Batsim: %s\n  vtime sim:   %s\n"
                                 % (rec["seq"], want[:600], got[:600]))
                return 1
        if rec["seq"] not in replies:
            return 0  # the transcript ends here (Batsim aborted on the previous reply)
        sock.send(replies[rec["seq"]].encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
