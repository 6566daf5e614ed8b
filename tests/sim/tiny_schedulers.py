#!/usr/bin/python3
"""Tiny in-tree schedulers, one per behaviour, for testing `vtime sim` (and later the broker).

usage: tiny_schedulers.py BEHAVIOUR ENDPOINT

Each binds a REP socket at ENDPOINT and plays plain FCFS, except for its one behaviour: most
send one invalid reply (the cases real Batsim 4.2.1 aborted on in the reference transcripts,
plus a few more), the others exercise valid but less common decisions (reject, kill, decision
time). Exit status: 0 after answering SIMULATION_ENDS, 1 when the behaviour's own check fails.
"""
import json
import os
import signal
import sys

import zmq


class Fcfs:
    """Plain FCFS on the lowest-numbered free resources (the honest part of every behaviour)."""

    def __init__(self):
        self.free = []
        self.queue = []
        self.running = {}

    def feed(self, msg):
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "SIMULATION_BEGINS":
                self.free = sorted(r["id"] for r in d["compute_resources"])
            elif t == "JOB_SUBMITTED":
                self.queue.append((d["job_id"], d["job"]["res"]))
            elif t == "JOB_COMPLETED":
                self.release(d["job_id"])
            elif t == "JOB_KILLED":
                for j in d["job_ids"]:
                    self.release(j)

    def release(self, job_id):
        self.free = sorted(self.free + self.running.pop(job_id, []))

    def decide(self, now):
        out = []
        while self.queue and self.queue[0][1] <= len(self.free):
            job_id, res = self.queue.pop(0)
            ids, self.free = self.free[:res], self.free[res:]
            self.running[job_id] = ids
            out.append(execute(now, job_id, ids))
        return out


def execute(now, job_id, ids):
    return {"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": " ".join(map(str, ids))}}


def ev(now, type_, data):
    return {"timestamp": now, "type": type_, "data": data}


def submitted(msg):
    return [e["data"]["job_id"] for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]


def reply(now, events):
    return json.dumps({"now": now, "events": events})


# Each behaviour: f(state, msg, now) -> reply text, or None for plain FCFS. `state` is a dict
# that persists across messages; state["fcfs"] is the honest scheduler, already fed with msg.
def at_first_submission(bad):
    def behaviour(state, msg, now):
        if submitted(msg) and not state.get("done"):
            state["done"] = True
            return bad(state, msg, now)
        return None
    return behaviour


BAD = {
    "malformed_json": at_first_submission(
        lambda s, m, now: '{"now": %s, "events": [ {"timestamp": %s, "type": "EXECUTE_JOB"' % (now, now)),
    "empty_reply": at_first_submission(lambda s, m, now: ""),
    "missing_events": at_first_submission(lambda s, m, now: json.dumps({"now": now})),
    "now_string": at_first_submission(lambda s, m, now: json.dumps({"now": str(now), "events": []})),
    "ts_gt_now": at_first_submission(
        lambda s, m, now: reply(now, [execute(now + 1, submitted(m)[0], [0])])),
    "cml_now": at_first_submission(lambda s, m, now: reply(now, [ev(now, "CALL_ME_LATER", {"timestamp": now})])),
    "cml_past": at_first_submission(lambda s, m, now: reply(now, [ev(now, "CALL_ME_LATER", {"timestamp": now - 2})])),
    "cml_extra_key": at_first_submission(
        lambda s, m, now: reply(now, [ev(now, "CALL_ME_LATER", {"timestamp": now + 5, "id": 1})])),
    "exec_unknown_job": at_first_submission(
        lambda s, m, now: reply(now, [execute(now, submitted(m)[0], [0]), execute(now, "w0!9999", [5])])),
    "exec_bad_alloc": at_first_submission(lambda s, m, now: reply(now, [execute(now, submitted(m)[0], [0, 1])])),
    "exec_twice": at_first_submission(
        lambda s, m, now: reply(now, [execute(now, submitted(m)[0], [0]), execute(now, submitted(m)[0], [1])])),
    "exec_no_such_resource": at_first_submission(lambda s, m, now: reply(now, [execute(now, submitted(m)[0], [99])])),
    "exec_not_submitted": at_first_submission(lambda s, m, now: reply(now, [execute(now, "w0!150", [3])])),
    "unknown_event_type": at_first_submission(lambda s, m, now: reply(now, [ev(now, "FOO", {})])),
    "unsupported_event": at_first_submission(
        lambda s, m, now: reply(now, [ev(now, "SET_JOB_METADATA", {"job_id": submitted(m)[0], "metadata": "x"})])),
    "bad_notify": at_first_submission(lambda s, m, now: reply(now, [ev(now, "NOTIFY", {"type": "hello"})])),
    "kill_not_started": at_first_submission(lambda s, m, now: reply(now, [ev(now, "KILL_JOB", {"job_ids": submitted(m)})])),
    "reject_running": at_first_submission(
        lambda s, m, now: reply(now, [execute(now, submitted(m)[0], [0]), ev(now, "REJECT_JOB", {"job_id": submitted(m)[0]})])),
}


def exec_busy(state, msg, now):
    # Every job goes onto resource 0: the second one while the first still runs there.
    jobs = submitted(msg)
    return reply(now, [execute(now, jobs[0], [0])] if jobs else [])


def cml_after_end(state, msg, now):
    if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
        return reply(now, [ev(now, "CALL_ME_LATER", {"timestamp": now + 10})])
    return None


def stall(state, msg, now):
    return reply(now, [])  # never decides anything


def rejecter(state, msg, now):
    return reply(now, [ev(now, "REJECT_JOB", {"job_id": j}) for j in submitted(msg)])


def killer(state, msg, now):
    """Runs every job, asks to be called 50 s later, then kills whatever still runs."""
    fcfs = state["fcfs"]
    events = []
    if any(e["type"] == "REQUESTED_CALL" for e in msg["events"]) and fcfs.running:
        victims = sorted(fcfs.running)
        state.setdefault("killed", set()).update(victims)
        events.append(ev(now, "KILL_JOB", {"job_ids": victims}))
    for e in msg["events"]:
        if e["type"] == "JOB_KILLED":
            for j in e["data"]["job_ids"]:
                if j not in e["data"]["job_progress"]:
                    sys.stderr.write("killer: no progress for %s\n" % j)
                    state["failed"] = True
            state["acked"] = state.get("acked", 0) + len(e["data"]["job_ids"])
    new = fcfs.decide(now)
    events += new
    if new:
        events.append(ev(now, "CALL_ME_LATER", {"timestamp": now + 50}))
    return reply(now, events)


def decision_time(state, msg, now):
    """Answers as if every decision took 2 s of simulated time."""
    later = now + 2
    return reply(later, [dict(e, timestamp=later) for e in state["fcfs"].decide(later)])


def own_fds(state, msg, now):
    """Plain FCFS that first checks it inherited none of the simulator's outputs (vtime run
    opens PREFIX_jobs.csv before it starts the scheduler): exits 9 at once, naming them, if so."""
    if not state.get("fds_checked"):
        state["fds_checked"] = True
        leaked = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue  # the directory's own descriptor, closed by now
            if target.endswith(("_jobs.csv", "_schedule.csv")):
                leaked.append("%s -> %s" % (fd, target))
        if leaked:
            sys.stderr.write("own_fds: inherited %s\n" % ", ".join(leaked))
            sys.stderr.flush()
            os._exit(9)
    return None


BEHAVIOURS = dict(BAD, exec_busy=exec_busy, cml_after_end=cml_after_end, stall=stall,
                  rejecter=rejecter, killer=killer, decision_time=decision_time, own_fds=own_fds, mute=None,
                  die_midway=None, die_at_end=None)


def main():
    name, endpoint = sys.argv[1], sys.argv[2]
    behaviour = BEHAVIOURS[name]
    state = {"fcfs": Fcfs()}
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    try:
        return serve(name, behaviour, state, sock)
    finally:
        # The last reply must leave before the process exits: close with a linger, then term().
        sock.close(linger=30000)
        ctx.term()


def serve(name, behaviour, state, sock):
    if name == "mute":  # reads the first message and never answers (a hung scheduler)
        sock.recv()
        signal.pause()
    seen = 0
    while True:
        msg = json.loads(sock.recv())
        now = msg["now"]
        seen += 1
        ends = any(e["type"] == "SIMULATION_ENDS" for e in msg["events"])
        # A scheduler that dies without its reply: in the middle of the run, or at the very end.
        if (name == "die_midway" and seen == 5) or (name == "die_at_end" and ends):
            os._exit(3)
        state["fcfs"].feed(msg)
        out = behaviour(state, msg, now) if behaviour else None
        if out is None:
            out = reply(now, state["fcfs"].decide(now))
        sock.send(out.encode())
        if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            if name == "killer" and (state.get("failed") or not state.get("acked")):
                return 1
            return 0


if __name__ == "__main__":
    sys.exit(main())
