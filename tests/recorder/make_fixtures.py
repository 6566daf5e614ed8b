#!/usr/bin/python3
"""Writes the trace fixtures of tests/data/traces/ (docs/trace-format.md, version 1).

usage: make_fixtures.py [--check] [--root REPO]

  small.trace              hand-written: a 2-host run of 3 jobs with every record type (timers of a
                           thread and of a process, a child process, a rejection applied after a
                           job's end, clock advances), ending "ok"
  bad_reply.trace          hand-written: a run cut by a scheduler's non-UTF-8 reply (a "hex" msg),
                           an error record, trailer status "bad-reply"
  cml_basic.trace          the real Batsim 4.2.1 transcripts nonet_cml_basic / nonet_cml_vs_completion
  cml_vs_completion.trace  (tests/data/batsim-4.2.1) as traces: their jobs-csv export must equal
                           what real Batsim wrote (tests/data/batsim-4.2.1/outputs)

Lines are written the way vtime's TraceWriter writes them (compact JSON, keys in the documented
order, seq = line - 1, trailer counts and FNV-1a digest). --check regenerates into memory and
fails if a committed fixture differs, so the fixtures stay reproducible.
"""
import argparse
import json
import os
import sys

TYPES = ["msg", "decision", "timer", "advance", "clock", "process", "error"]
S = 1_000_000_000


def fnv1a64(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def dump(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Trace:
    def __init__(self, header):
        self.lines = [dump(header)]
        self.counts = {t: 0 for t in TYPES}
        self.t = 0

    def add(self, t, type_, **fields):
        self.t = t
        rec = {"seq": len(self.lines), "t": t, "type": type_}
        rec.update(fields)
        self.lines.append(dump(rec))
        self.counts[type_] += 1
        return rec["seq"]

    def msg(self, t, direction, text):
        return self.add(t, "msg", dir=direction, bytes=text)

    def text(self, status="ok", exit_code=0):
        body = "".join(l + "\n" for l in self.lines).encode()
        trailer = {"seq": len(self.lines), "t": self.t, "type": "trailer", "status": status,
                   "exit_code": exit_code, "records": len(self.lines) - 1, "counts": self.counts,
                   "digest": "%016x" % fnv1a64(body)}
        return body + (dump(trailer) + "\n").encode()


def describe(root, role, rel):
    with open(os.path.join(root, rel), "rb") as f:
        data = f.read()
    return {"role": role, "path": rel, "size": len(data), "fnv1a64": "%016x" % fnv1a64(data)}


def header(root, inputs, scheduler, simulator="embedded"):
    return {"type": "header", "format": "vtime-trace", "version": 1, "tool": "vtime 0.1.0", "command": "run",
            "options": {"sync": "exact", "decision_time": "zero", "simulator": simulator},
            "inputs": [describe(root, role, rel) for role, rel in inputs], "scheduler": scheduler,
            "clock": {"epoch_ns": 1704067200000000000, "ignored_threads": ["ZMQbg/*"]}}


def batsim(now, events):
    return '{"now":%.6f,"events":[%s]}' % (now, ",".join(events))


def ev(ts, type_, data):
    return '{"timestamp":%.6f,"type":"%s","data":%s}' % (ts, type_, data)


def decision_event(ts, type_, data):
    # The recorder stores the codec's event re-read as JSON: times become doubles ("6.0").
    return {"timestamp": float(ts), "type": type_, "data": data}


def small(root):
    wl = "tests/data/traces/small_workload.json"
    tr = Trace(header(root, [("workload", wl)],
                      ["sched", "-s", "{endpoint}", "--period", "1"]))
    begins = ev(0, "SIMULATION_BEGINS",
                '{"nb_resources":2,"nb_compute_resources":2,"nb_storage_resources":0,"allow_compute_sharing":false,'
                '"allow_storage_sharing":true,"config":{"redis-enabled":false,"redis-hostname":"127.0.0.1",'
                '"redis-port":6379,"redis-prefix":"default","profiles-forwarded-on-submission":false,'
                '"dynamic-jobs-enabled":false,"dynamic-jobs-acknowledged":false,"profile-reuse-enabled":false,'
                '"sched-config":"","forward-unknown-events":false},"compute_resources":[{"id":0,"name":"host0",'
                '"state":"idle","properties":{"role":""},"zone_properties":{}},{"id":1,"name":"host1","state":"idle",'
                '"properties":{"role":""},"zone_properties":{}}],"storage_resources":[],"workloads":{"w0":"%s"},'
                '"profiles":{"w0":{"delay3":{"type":"delay","delay":3},"delay5":{"type":"delay","delay":5}}}}' % wl)
    tr.add(0, "process", op="spawn", proc=0, parent=None)
    m = batsim(0, [begins])
    tr.msg(0, "from_batsim", m)
    tr.msg(0, "to_scheduler", m)
    tr.msg(0, "from_scheduler", '{"now": 0.0, "events": []}')
    tr.add(0, "timer", op="arm", id=1, proc=0, thread=1, wait="cond", deadline=1 * S)
    tr.add(0, "clock", proc=0, reads=3, digest="00000000000000a1")
    tr.msg(0, "to_batsim", batsim(0, [ev(0, "CALL_ME_LATER", '{"timestamp":1.000000}')]))
    subs = [ev(0, "JOB_SUBMITTED", '{"job_id":"w0!1","job":{"id":"w0!1","subtime":0,"res":1,"profile":"delay5"}}'),
            ev(0, "JOB_SUBMITTED",
               '{"job_id":"w0!2","job":{"id":"w0!2","subtime":0,"walltime":1.000000,"res":2,"profile":"delay3"}}'),
            ev(0, "JOB_SUBMITTED", '{"job_id":"w0!3","job":{"id":"w0!3","subtime":0,"res":1,"profile":"delay5"}}')]
    m = batsim(0, subs)
    tr.msg(0, "from_batsim", m)
    tr.msg(0, "to_scheduler", m)
    tr.msg(0, "from_scheduler", '{"now": 0.0, "events": []}')
    tr.add(0, "process", op="spawn", proc=1, parent=0)
    tr.add(0, "timer", op="arm", id=2, proc=1, thread=None, wait="timerfd", deadline=5 * S)
    tr.msg(0, "to_batsim", batsim(0, []))
    # t=1: the broker's CALL_ME_LATER wakes the scheduler's timer; it starts job 1.
    m = batsim(1, [ev(1, "REQUESTED_CALL", "{}")])
    tr.msg(1 * S, "from_batsim", m)
    tr.add(1 * S, "advance", **{"from": 0, "reason": "message", "woken": 0})
    tr.add(1 * S, "timer", op="fire", id=1, proc=0, thread=1, wait="cond", deadline=1 * S)
    tr.add(1 * S, "advance", **{"from": 1 * S, "reason": "timer", "woken": 1})
    tr.msg(1 * S, "to_scheduler", batsim(1, []))
    sm = tr.msg(1 * S, "from_scheduler",
                '{"now": 1.0, "events": [{"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]}')
    tr.add(1 * S, "decision", msg=sm, kind="EXECUTE_JOB", job="w0!1",
           event=decision_event(1, "EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}))
    tr.add(1 * S, "timer", op="cancel", id=2, proc=1, thread=None, wait="timerfd", deadline=5 * S)
    tr.add(1 * S, "process", op="exit", proc=1, status="exited 0")
    tr.add(1 * S, "clock", proc=0, reads=5, digest="00000000000000b2")
    tr.msg(1 * S, "to_batsim", batsim(1, [ev(1, "EXECUTE_JOB", '{"job_id":"w0!1","alloc":"0"}')]))
    # t=6: job 1 ends. The reply starts job 2 (walltime 1 s) and rejects job 3 stamped 7 s: the
    # simulator ends job 2 at 7 before applying the rejection, so job 2's row precedes job 3's.
    m = batsim(6, [ev(6, "JOB_COMPLETED", '{"job_id":"w0!1","job_state":"COMPLETED_SUCCESSFULLY","return_code":0,"alloc":"0"}')])
    tr.msg(6 * S, "from_batsim", m)
    tr.add(6 * S, "advance", **{"from": 1 * S, "reason": "message", "woken": 0})
    tr.msg(6 * S, "to_scheduler", m)
    sm = tr.msg(6 * S, "from_scheduler",
                '{"now": 7.0, "events": [{"timestamp": 6.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", '
                '"alloc": "0-1"}}, {"timestamp": 7.0, "type": "REJECT_JOB", "data": {"job_id": "w0!3"}}]}')
    tr.add(6 * S, "decision", msg=sm, kind="EXECUTE_JOB", job="w0!2",
           event=decision_event(6, "EXECUTE_JOB", {"job_id": "w0!2", "alloc": "0-1"}))
    tr.add(6 * S, "decision", msg=sm, kind="REJECT_JOB", job="w0!3",
           event=decision_event(7, "REJECT_JOB", {"job_id": "w0!3"}))
    tr.msg(6 * S, "to_batsim", batsim(7, [ev(6, "EXECUTE_JOB", '{"job_id":"w0!2","alloc":"0-1"}'),
                                          ev(7, "REJECT_JOB", '{"job_id":"w0!3"}')]))
    m = batsim(7, [ev(7, "JOB_COMPLETED",
                      '{"job_id":"w0!2","job_state":"COMPLETED_WALLTIME_REACHED","return_code":-1,"alloc":"0-1"}')])
    tr.msg(7 * S, "from_batsim", m)
    tr.add(7 * S, "advance", **{"from": 6 * S, "reason": "message", "woken": 0})
    tr.msg(7 * S, "to_scheduler", m)
    tr.msg(7 * S, "from_scheduler", '{"now": 7.0, "events": []}')
    tr.msg(7 * S, "to_batsim", batsim(7, []))
    m = batsim(7, [ev(7, "NOTIFY", '{"type":"no_more_static_job_to_submit"}')])
    for d in ("from_batsim", "to_scheduler"):
        tr.msg(7 * S, d, m)
    tr.msg(7 * S, "from_scheduler", '{"now": 7.0, "events": []}')
    tr.msg(7 * S, "to_batsim", batsim(7, []))
    m = batsim(7, [ev(7, "SIMULATION_ENDS", "{}")])
    for d in ("from_batsim", "to_scheduler"):
        tr.msg(7 * S, d, m)
    tr.msg(7 * S, "from_scheduler", '{"now": 7.0, "events": []}')
    tr.add(7 * S, "clock", proc=0, reads=9, digest="00000000000000c3")
    tr.msg(7 * S, "to_batsim", batsim(7, []))
    tr.add(7 * S, "process", op="exit", proc=0, status="exited 0")
    return tr.text()


def bad_reply(root):
    wl = "tests/data/traces/small_workload.json"
    tr = Trace(header(root, [("workload", wl)], ["sched", "-s", "{endpoint}"]))
    tr.add(0, "process", op="spawn", proc=0, parent=None)
    m = batsim(0, [ev(0, "JOB_SUBMITTED", '{"job_id":"w0!1","job":{"id":"w0!1","subtime":0,"res":1,"profile":"delay5"}}')])
    tr.msg(0, "from_batsim", m)
    tr.msg(0, "to_scheduler", m)
    # Not UTF-8: kept as hex ("{" 0xff "}").
    tr.add(0, "msg", dir="from_scheduler", hex="7bff7d")
    tr.add(0, "error", code=3, kind="bad-reply",
           message="the scheduler's reply to the message at 0.000000 is not valid JSON")
    tr.add(0, "process", op="exit", proc=0, status="killed by signal 15 (Terminated)")
    return tr.text("bad-reply", 3)


def from_transcript(root, name):
    data = "tests/data/batsim-4.2.1/inputs/"
    tr = Trace(header(root, [("platform", data + "energy_platform_homogeneous_no_net_128.xml"),
                             ("workload", data + "wl20.json")], ["transcript", name], "batsim-4.2.1"))
    tr.add(0, "process", op="spawn", proc=0, parent=None)
    now = 0
    with open(os.path.join(root, "tests/data/batsim-4.2.1/transcripts", name + ".jsonl")) as f:
        for line in f:
            m = json.loads(line)
            raw = m["raw"]
            if m["dir"] == "batsim->sched":
                t = round(json.loads(raw)["now"] * 1e9)
                tr.msg(t, "from_batsim", raw)
                if t > now:
                    tr.add(t, "advance", **{"from": now, "reason": "message", "woken": 0})
                now = t
                tr.msg(t, "to_scheduler", raw)
            else:
                seq = tr.msg(now, "from_scheduler", raw)
                for e in json.loads(raw)["events"]:
                    data_ = dict(e["data"])
                    if e["type"] == "CALL_ME_LATER":
                        data_["timestamp"] = float(data_["timestamp"])
                    fields = {"msg": seq, "kind": e["type"]}
                    if "job_id" in data_:
                        fields["job"] = data_["job_id"]
                    fields["event"] = decision_event(e["timestamp"], e["type"], data_)
                    tr.add(now, "decision", **fields)
                tr.msg(now, "to_batsim", raw)
    tr.add(now, "process", op="exit", proc=0, status="exited 0")
    return tr.text()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", action="store_true")
    p.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
    a = p.parse_args()
    out = os.path.join(a.root, "tests/data/traces")
    fixtures = {"small.trace": small(a.root), "bad_reply.trace": bad_reply(a.root),
                "cml_basic.trace": from_transcript(a.root, "nonet_cml_basic"),
                "cml_vs_completion.trace": from_transcript(a.root, "nonet_cml_vs_completion")}
    stale = []
    for name, text in fixtures.items():
        path = os.path.join(out, name)
        if a.check:
            with open(path, "rb") as f:
                if f.read() != text:
                    stale.append(name)
        else:
            with open(path, "wb") as f:
                f.write(text)
    if stale:
        print("FAIL: stale fixtures (run tests/recorder/make_fixtures.py): " + ", ".join(stale))
        return 1
    print("PASS" if a.check else "wrote " + ", ".join(fixtures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
