#!/usr/bin/python3
"""`vtime run --record` and `vtime replay` on real schedulers (periodic_fcfs, batch_window.py, a
scheduler that crashes mid-run): byte-identical traces, replays without divergence, divergences
found at the right record with the differing field, damaged traces, --stop-at.

usage: replay_cases.py CASE --vtime VTIME --periodic-fcfs BIN    (or --list)
Exit status: 0 pass ("PASS"), 1 fail ("FAIL ...").
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from recorded import BURST, PLATFORM16 as PLATFORM, PYTHON, ROOT, SPACED, Failure, Scratch, check

BATCH_WINDOW = os.path.join(ROOT, "examples", "batch_window", "batch_window.py")
BAD = os.path.join(ROOT, "tests", "broker", "bad_schedulers.py")
CLOCK_SETTER = os.path.join(ROOT, "tests", "recorder", "clock_setter.py")
TIMEOUT = 120


class Env(Scratch):
    def __init__(self, args):
        super().__init__(args, "vtime-replay-cases-")

    def record(self, name, sched, workload=SPACED, rc=0, extra=()):
        trace = self.path(name + ".trace")
        cmd = [self.vtime, "run", "-q", "-p", PLATFORM, "-w", workload, "-e", self.path(name), "--record", trace] + \
            list(extra) + ["--"] + sched
        r = subprocess.run(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(r.returncode == rc, "%s exited %d (expected %d): %s" % (" ".join(cmd), r.returncode, rc, r.stderr[-2000:]))
        return trace

    def replay(self, trace, sched=None, rc=0, args=(), json_report=True):
        cmd = [self.vtime, "replay", trace] + list(args)
        if json_report:
            cmd += ["--report", "json"]
        if sched is not None:
            cmd += ["--"] + sched
        r = subprocess.run(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(r.returncode == rc, "%s exited %d (expected %d)\nstdout: %s\nstderr: %s"
              % (" ".join(cmd), r.returncode, rc, r.stdout[-3000:], r.stderr[-2000:]))
        if json_report and r.stdout.strip():
            return json.loads(r.stdout), r.stderr
        return r.stdout, r.stderr

    def periodic(self, period):
        return [self.periodic_bin, "-s", "{endpoint}", "--period", str(period)]


def window(w):
    return [PYTHON, BATCH_WINDOW, "-s", "{endpoint}", "--window", str(w)]


def lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")


def first_differing_record(a, b):
    """(seq, record of b) at the first line where two traces differ (the header excluded)."""
    la, lb = lines(a), lines(b)
    for i in range(1, min(len(la), len(lb))):
        if la[i] != lb[i]:
            return i, json.loads(lb[i])
    raise Failure("the two recordings do not differ")


def divergence_matches_recordings(env, trace_a, trace_b, sched_b, what):
    """Replaying A with B's scheduler must stop exactly where the recordings A and B part."""
    seq, b_rec = first_differing_record(trace_a, trace_b)
    rep, _ = env.replay(trace_a, sched_b, rc=1)
    check(rep["result"] == "divergence", "%s: no divergence reported: %s" % (what, rep))
    check(rep["seq"] == seq, "%s: divergence reported at seq %s, the recordings part at seq %d" % (what, rep["seq"], seq))
    check(rep["actual"] == b_rec, "%s: the replay's record %s is not the other recording's %s" % (what, rep["actual"], b_rec))
    a_rec = json.loads(lines(trace_a)[seq])
    check(rep["expected"] == a_rec, "%s: expected record %s, trace holds %s" % (what, rep["expected"], a_rec))
    check(rep["path"] not in (None, ""), "%s: no differing field named: %s" % (what, rep))
    check(len(rep["last_matching"]) > 0 and rep["last_matching"][-1]["seq"] == seq - 1,
          "%s: the last matching records do not end just before the divergence" % what)
    return rep


def case_identical(env):
    a = env.record("a", env.periodic(1))
    b = env.record("b", env.periodic(1))
    if open(a, "rb").read() != open(b, "rb").read():
        raise Failure("two identical runs wrote different traces; first difference: %s" % (first_differing_record(a, b),))
    n = len(lines(a)) - 3  # header, trailer, final empty split
    rep, _ = env.replay(a, env.periodic(1))
    check(rep["result"] == "match" and rep["complete"] is True, "replay reported %s" % rep)
    check(rep["records_matched"] == n, "replay matched %d records of %d" % (rep["records_matched"], n))
    # Without a command, the recorded one is used (text report).
    out, _ = env.replay(a, None, json_report=False)
    check("no divergence: %d records matched, the whole trace" % n in out, "text report: " + out)


def case_cpu_options(env):
    """The CPU-time model's options are recorded (options.cpu) and a replay runs under them; a
    header recorded before --cpu-burst existed (no burst_calls) replays with 20,000 (what those
    runs had) and still matches."""
    a = env.record("a", env.periodic(1), extra=["--cpu-burst", "1234", "--cpu-cost", "3us"])
    cpu = json.loads(lines(a)[0])["options"]["cpu"]
    check(cpu.get("model") == "calls" and cpu.get("burst_calls") == 1234 and cpu.get("cost_ns") == 3000,
          "options.cpu in the header: %s" % cpu)
    rep, _ = env.replay(a)
    check(rep["result"] == "match" and rep["complete"] is True, "replay reported %s" % rep)
    old = env.path("old.trace")
    rewrite_trace(a, old, lambda rec: None, lambda h: h["options"]["cpu"].pop("burst_calls"))
    rep, _ = env.replay(old)
    check(rep["result"] == "match" and rep["complete"] is True, "replay of a header without burst_calls: %s" % rep)


def case_period(env):
    a = env.record("a", env.periodic(1))
    b = env.record("b", env.periodic(2))
    rep = divergence_matches_recordings(env, a, b, env.periodic(2), "--period 2")
    check(rep["kind"] == "timing" and rep["path"] == "/deadline",
          "expected a timing divergence on /deadline: %s %s" % (rep["kind"], rep["path"]))
    check(rep["expected_value"] == 1000000000 and rep["actual_value"] == 2000000000,
          "deadline values %s / %s" % (rep["expected_value"], rep["actual_value"]))


def case_window(env):
    a = env.record("a", window(30), workload=BURST)
    b = env.record("b", window(45), workload=BURST)
    divergence_matches_recordings(env, a, b, window(45), "--window 45")


def case_cut(env):
    a = env.record("a", env.periodic(1))
    data = open(a, "rb").read()
    cut = env.path("cut.trace")
    middle = len(data) // 2
    with open(cut, "wb") as f:
        f.write(data[:middle + 7])  # inside a line
    complete = data[:middle + 7].count(b"\n") - 1  # records before the cut line
    rep, err = env.replay(cut, env.periodic(1))
    check(rep["result"] == "match" and rep["complete"] is False, "cut trace: %s" % rep)
    check(rep["records_matched"] == complete, "matched %d, the cut trace holds %d complete records"
          % (rep["records_matched"], complete))
    check(any("cut short" in w for w in rep["warnings"]), "no cut-short warning: %s" % rep["warnings"])
    check(any("VT005" in w for w in rep["warnings"]), "the cut line is not reported with its code: %s" % rep["warnings"])


def case_garbage(env):
    a = env.record("a", env.periodic(1))
    ls = lines(a)
    ls[len(ls) // 2] = b"\x00\xff garbage \x9c{{"
    bad = env.path("garbage.trace")
    with open(bad, "wb") as f:
        f.write(b"\n".join(ls))
    out, err = env.replay(bad, env.periodic(1), rc=8, json_report=False)
    check("VT004 line %d" % (len(ls) // 2 + 1) in err, "garbage not reported with VT004 and its line: " + err)
    # --force replays up to the damage.
    rep, _ = env.replay(bad, env.periodic(1), rc=0, args=["--force"])
    check(rep["records_matched"] == len(ls) // 2 - 1, "--force matched %d records" % rep["records_matched"])


def case_version(env):
    a = env.record("a", env.periodic(1))
    ls = lines(a)
    ls[0] = ls[0].replace(b'"version":1', b'"version":99')
    other = env.path("v99.trace")
    with open(other, "wb") as f:
        f.write(b"\n".join(ls))
    out, err = env.replay(other, env.periodic(1), rc=8, json_report=False)
    check("VT003" in err and "version 99" in err, "another version not refused with VT003: " + err)


def case_crash(env):
    sched = [PYTHON, BAD, "late", "{endpoint}"]
    a = env.record("crash", sched, rc=4)
    recs = [json.loads(l) for l in lines(a)[1:] if l]
    trailer, error = recs[-1], [r for r in recs if r["type"] == "error"]
    check(trailer["type"] == "trailer" and trailer["status"] == "crash" and trailer["exit_code"] == 4,
          "trailer does not say crash: %s" % trailer)
    check(len(error) == 1 and "signal 11" in error[0]["message"], "no error record naming the signal: %s" % error)
    rejects = [r for r in recs if r["type"] == "decision" and r["kind"] == "REJECT_JOB"]
    check(len(rejects) == 4, "the 4 decisions before the crash are not all there: %d" % len(rejects))
    last_in = [r for r in recs if r["type"] == "msg" and r["dir"] == "to_scheduler"][-1]
    check(last_in["bytes"].count("JOB_SUBMITTED") >= 1, "the message the scheduler crashed on is not recorded")
    exits = [r for r in recs if r["type"] == "process" and r["op"] == "exit"]
    check(exits and exits[-1]["status"].startswith("killed by signal 11"), "no exit record: %s" % exits)
    out = subprocess.run([env.vtime, "trace", "validate", a], capture_output=True, text=True).stdout
    check("complete" in out, "validate on the crash trace: " + out)
    # Replaying it with the same scheduler reproduces the crash: no divergence.
    rep, _ = env.replay(a, sched)
    check(rep["result"] == "match" and rep.get("reproduced_error") == 4, "replay of the crash: %s" % rep)


def case_compressed(env):
    a = env.record("z", env.periodic(1), extra=["--compress"])
    zst = a + ".zst"
    check(os.path.exists(zst) and not os.path.exists(a), "--compress did not replace the trace by " + zst)
    check(open(zst, "rb").read(4) == b"\x28\xb5\x2f\xfd", "not a zstd file")
    rep, _ = env.replay(zst, env.periodic(1))
    check(rep["result"] == "match" and rep["complete"], "replay of the .zst: %s" % rep)


def case_inputs_changed(env):
    wl = env.path("workload.json")
    shutil.copy(SPACED, wl)
    a = env.record("in", env.periodic(1), workload=wl)
    with open(wl, "a") as f:
        f.write("\n")
    out, err = env.replay(a, env.periodic(1), rc=8, json_report=False)
    check("changed since the recording" in err and "--force" in err, "changed input not refused: " + err)
    rep, _ = env.replay(a, env.periodic(1), args=["--force"])
    check(rep["result"] == "match" and any("changed" in w for w in rep["warnings"]), "--force: %s" % rep)


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def case_stop_at(env):
    a = env.record("a", env.periodic(1))
    for how in ("enter", "signal"):
        p = subprocess.Popen([env.vtime, "replay", a, "--stop-at", "100", "--"] + env.periodic(1), cwd=env.dir,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = p.stderr.readline()
            check("paused after record 100" in line, "no pause message: %r" % line)
            pids = [int(w) for w in line.split("pid")[1:] for w in [w.split()[0]]]
            check(pids, "no pid in %r" % line)
            hint = p.stderr.readline() + p.stderr.readline()
            check("gdb -p %d" % pids[0] in hint, "no gdb hint: %r" % hint)
            deadline = time.time() + 10
            while proc_state(pids[0]) not in "Tt" and time.time() < deadline:
                time.sleep(0.05)
            check(proc_state(pids[0]) in "Tt", "the scheduler is not stopped (state %s)" % proc_state(pids[0]))
            time.sleep(0.3)
            check(p.poll() is None, "the replay did not wait while paused")
            if how == "enter":
                p.stdin.write("\n")
                p.stdin.flush()
            else:
                p.send_signal(signal.SIGUSR1)
            out, err = p.communicate(timeout=TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        check(p.returncode == 0, "%s: replay exited %d: %s" % (how, p.returncode, err))
        check("resumed" in err and "no divergence" in out, "%s: %s / %s" % (how, out, err))


def case_clock_set(env):
    """A scheduler that sets its clock (as root, inside the seccomp guard): the trace records the
    set, and a replay reproduces it without divergence."""
    if os.geteuid() != 0:
        print("SKIP: setting the clock needs root")
        sys.exit(77)
    guard = [env.no_clock_set]
    # The event-based twin: single-threaded. batch_window.py's recordings are not byte-identical
    # with or without a set (its threading.Timer threads race the main thread for the GIL, and the
    # clock-read count at an instant varies by one; decisions do not), which a replay reports.
    sched = [PYTHON, CLOCK_SETTER, PYTHON, BATCH_WINDOW.replace("batch_window.py", "batch_window_event.py"),
             "-s", "{endpoint}", "--window", "5"]
    trace = env.path("set.trace")
    cmd = guard + [env.vtime, "run", "-q", "-p", PLATFORM, "-w", SPACED, "-e", env.path("set"), "--record", trace,
                   "--"] + sched
    r = subprocess.run(cmd, cwd=env.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    check(r.returncode == 0, "recording exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    sets = [json.loads(l) for l in lines(trace) if b'"op":"set"' in l]
    check(len(sets) == 1 and sets[0]["shift"] >= 3600 * 10**9 and sets[0]["sets"] == 1,
          "expected one clock set record of an hour: %s" % sets)
    out = subprocess.run([env.vtime, "trace", "show", "--type", "clock", trace], capture_output=True, text=True).stdout
    check("set: realtime +3600" in out, "trace show does not show the set: %s" % out[-1000:])
    r = subprocess.run(guard + [env.vtime, "replay", trace, "--report", "json"], cwd=env.dir,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    check(r.returncode == 0, "replay exited %d: %s %s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:]))


def write_trace(dst, header, records, trailer):
    """Writes a trace: the header line (bytes), the records (renumbered from 1) and the trailer with
    its seq, record count and digest recomputed (fnv1a64 over the header and record lines, as the
    writer computes it)."""
    out = [header] + [json.dumps({"seq": i + 1, **{k: v for k, v in r.items() if k != "seq"}},
                                 separators=(",", ":"), ensure_ascii=False).encode() for i, r in enumerate(records)]
    body = b"".join(l + b"\n" for l in out)
    h = 0xcbf29ce484222325
    for b in body:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    trailer = dict(trailer, digest="%016x" % h, records=len(records), seq=len(records) + 1)
    with open(dst, "wb") as f:
        f.write(body + json.dumps(trailer, separators=(",", ":")).encode() + b"\n")


def rewrite_trace(src, dst, edit, edit_header=None):
    """Copies a trace with edit(record) applied to each record (and edit_header(header) to the
    header)."""
    ls = [l for l in lines(src) if l]
    header = ls[0]
    if edit_header:
        h = json.loads(ls[0])
        edit_header(h)
        header = json.dumps(h, separators=(",", ":"), ensure_ascii=False).encode()
    records = []
    for l in ls[1:-1]:
        rec = json.loads(l)
        edit(rec)
        records.append(rec)
    write_trace(dst, header, records, json.loads(ls[-1]))


def case_shutdown(env):
    """The trace stops at SIMULATION_ENDS: the scheduler's shutdown (here its tree sleeps 3 and 2
    virtual seconds in processes of their own after the end) leaves no timer, advance or process
    record, and its exit is recorded at the end's instant, so that a shutdown whose interleaving is
    real time (signals, processes torn down by the kernel) cannot part two traces of one run.
    A trace recorded before that, with the shutdown in it, still replays without divergence."""
    # `;`: the sleeps run whatever periodic_fcfs's own exit status (66 when a TSan build reports at its
    # exit, as periodic_fcfs does at libzmq's teardown: seen in session 40, not about traces).
    sched = ["sh", "-c", '"$0" -s "$1" --period 1; sleep 3; sleep 2', env.periodic_bin, "{endpoint}"]
    a = env.record("a", sched)
    recs = [json.loads(l) for l in lines(a)[1:-2]]
    ends = next(i for i, r in enumerate(recs)
                if r["type"] == "msg" and r["dir"] == "from_batsim" and '"SIMULATION_ENDS"' in r.get("bytes", ""))
    answer = next(i for i in range(ends, len(recs)) if recs[i]["type"] == "msg" and recs[i]["dir"] == "to_batsim")
    tail = recs[answer + 1:]
    check([(r["type"], r.get("proc")) for r in tail] == [("process", 0)],
          "records after the answer to SIMULATION_ENDS: %s" % tail[:6])
    check(tail[0]["status"] == "exited 0", "the scheduler's exit: %s" % tail[0])
    last_advance = max(r["t"] for r in recs if r["type"] == "advance")
    check(tail[0]["t"] == last_advance, "the scheduler's exit at %d, the last advance at %d" % (tail[0]["t"], last_advance))
    check(not any(r["type"] == "advance" and r["reason"] == "end" for r in recs), "an advance of the shutdown")
    rep, _ = env.replay(a, sched)
    check(rep["result"] == "match" and rep["complete"] is True, "replay reported %s" % rep)
    # The older form: the shutdown's records before the scheduler's exit, which came 5 s later.
    ls = [l for l in lines(a) if l]
    body = [json.loads(l) for l in ls[1:-1]]
    exit_rec = body.pop()
    t0 = exit_rec["t"]
    shut = [{"t": t0, "type": "timer", "op": "arm", "id": 9990, "proc": 2, "thread": 0, "wait": "sleep",
             "deadline": t0 + 3000000000},
            {"t": t0 + 3000000000, "type": "timer", "op": "fire", "id": 9990, "proc": 2, "thread": 0,
             "wait": "sleep", "deadline": t0 + 3000000000},
            {"t": t0 + 3000000000, "type": "advance", "from": t0, "reason": "end", "woken": 1},
            {"t": t0 + 3000000000, "type": "process", "op": "exit", "proc": 2, "status": "gone"},
            {"t": t0 + 5000000000, "type": "clock", "proc": 0, "reads": 1, "digest": "0000000000000001"}]
    exit_rec["t"] = t0 + 5000000000
    body += shut + [exit_rec]
    trailer = json.loads(ls[-1])
    trailer["t"] = exit_rec["t"]
    for r in shut:
        trailer["counts"][r["type"]] += 1
    old = env.path("old.trace")
    write_trace(old, ls[0], body, trailer)
    valid = subprocess.run([env.vtime, "trace", "validate", old], capture_output=True, text=True).stdout
    check(": ok: " in valid, "the older form is not a valid trace: %s" % valid)
    rep, _ = env.replay(old, sched)
    check(rep["result"] == "match" and rep["complete"] is True, "replay of a trace with its shutdown: %s" % rep)


def case_compare_decisions(env):
    """--compare decisions: timers that differ from the recording (as in schedulers whose threads
    race within an instant) are not compared; messages and decisions still are."""
    a = env.record("a", env.periodic(1), workload=BURST)
    moved = {}

    def move_a_timer(rec):
        if not moved and rec["type"] == "timer" and rec["t"] > 0:
            rec["deadline"] += 1000000000
            moved["seq"] = rec["seq"]
    edited = env.path("timer_moved.trace")
    rewrite_trace(a, edited, move_a_timer)
    rep, _ = env.replay(edited, env.periodic(1), rc=1)
    check(rep["kind"] == "timing" and rep["seq"] == moved["seq"],
          "every record compared: expected a timing divergence at seq %s: %s" % (moved["seq"], rep))
    rep, _ = env.replay(edited, env.periodic(1), rc=0, args=["--compare", "decisions"])
    check(rep["result"] == "match" and rep["compare"] == "decisions" and rep["complete"] is True,
          "--compare decisions: %s" % rep)
    n = sum(1 for l in lines(a) if b'"type":"msg"' in l or b'"type":"decision"' in l)
    check(rep["records_matched"] == n, "matched %d messages and decisions of %d" % (rep["records_matched"], n))
    out, _ = env.replay(edited, env.periodic(1), args=["--compare", "decisions"], json_report=False)
    check("%d messages and decisions matched, the whole trace" % n in out, "text report: " + out)
    # A scheduler that decides differently still diverges, at a message or a decision, named by
    # the recorded sequence number.
    rep, _ = env.replay(a, env.periodic(2), rc=1, args=["--compare", "decisions"])
    check(rep["expected"]["type"] in ("msg", "decision") and rep["kind"] in ("decision", "timing"),
          "a different scheduler under --compare decisions: %s" % rep)
    check(json.loads(lines(a)[rep["seq"]]) == rep["expected"], "the divergence's seq is not the recorded one")


def case_compare_scheduler(env):
    """--compare scheduler: the embedded simulator runs again and answers the run's own
    CALL_ME_LATERs; what the scheduler is told and answers is compared, not the simulator side
    (where the broker's own requests for the wrapped components' timers differ from run to run,
    as with Kubernetes)."""
    a = env.record("a", env.periodic(1), workload=BURST)
    moved = {}

    def move_a_request(rec):
        # A later CALL_ME_LATER to the simulator, and the REQUESTED_CALL that answered it: as if
        # the broker had asked for another timer.
        if rec["type"] != "msg" or rec["dir"] not in ("to_batsim", "from_batsim") or rec["t"] == 0:
            return
        if rec["dir"] == "to_batsim" and not moved and "CALL_ME_LATER" in rec["bytes"]:
            m = json.loads(rec["bytes"])
            for e in m["events"]:
                if e["type"] == "CALL_ME_LATER":
                    e["data"]["timestamp"] += 0.25
            rec["bytes"] = json.dumps(m, separators=(",", ":"))
            moved["seq"] = rec["seq"]
    edited = env.path("request_moved.trace")
    rewrite_trace(a, edited, move_a_request)
    check("seq" in moved, "the recording holds no CALL_ME_LATER")
    rep, _ = env.replay(edited, env.periodic(1), rc=1, args=["--compare", "decisions"])
    check(rep["seq"] == moved["seq"], "--compare decisions: expected the divergence at seq %s: %s" % (moved["seq"], rep))
    rep, _ = env.replay(edited, None, rc=0, args=["--compare", "scheduler"])
    n = sum(1 for l in lines(a) if b'"type":"decision"' in l or b'"dir":"to_scheduler"' in l or
            b'"dir":"from_scheduler"' in l)
    check(rep["result"] == "match" and rep["compare"] == "scheduler" and rep["complete"] is True and
          rep["records_matched"] == n, "--compare scheduler: %s (expected %d records)" % (rep, n))
    out, _ = env.replay(edited, None, args=["--compare", "scheduler"], json_report=False)
    check("%d scheduler messages and decisions matched, the whole trace" % n in out, "text report: " + out)
    check(not [f for f in os.listdir(env.dir) if f.startswith("out")], "the simulator wrote outputs in the cwd")
    # Another scheduler diverges, at something it was told or answered, by recorded seq.
    rep, _ = env.replay(a, env.periodic(2), rc=1, args=["--compare", "scheduler"])
    check(rep["expected"]["type"] == "decision" or rep["expected"].get("dir") in ("to_scheduler", "from_scheduler"),
          "a different scheduler under --compare scheduler: %s" % rep)
    check(json.loads(lines(a)[rep["seq"]]) == rep["expected"], "the divergence's seq is not the recorded one")
    # Only a run of the embedded simulator can be simulated again.
    batsim = env.path("batsim.trace")
    rewrite_trace(a, batsim, lambda rec: None, lambda h: h["options"].update(simulator="tcp://127.0.0.1:28000"))
    _, err = env.replay(batsim, None, rc=8, args=["--compare", "scheduler"])
    check("not recorded with it" in err, "refusal: " + err)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--vtime")
    ap.add_argument("--periodic-fcfs")
    ap.add_argument("--no-clock-set", help="tests/programs/no_clock_set, the seccomp guard")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    env = Env(args)
    env.no_clock_set = args.no_clock_set
    try:
        CASES[args.case](env)
    except (Failure, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        print("FAIL %s: %s" % (args.case, e))
        return 1
    finally:
        env.cleanup()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
