#!/usr/bin/env python3
"""Fault injection into `vtime run` (docs/reliability.md): faults at random points of runs of
periodic_fcfs and batch_window.py, and what each left behind.

    faults.py --vtime VTIME --examples DIR --bin DIR [--trials N] [--fault NAME]... [--seed S]
              [--json FILE]

Faults (each trial picks its instant at random within the run):
  kill_vtime       SIGKILL of `vtime run` itself: every process of the scheduler's tree must be
                   gone within 2 s (nothing advances their clock any more), no segment left in
                   /dev/shm, the trace valid up to its last complete record
  kill_scheduler   SIGKILL of the scheduler mid-run: exit 4 within 2 s, outputs and a complete
                   trace (its trailer says how the run ended), nothing left
  kill_grandchild  SIGKILL of a grandchild blocked in pause() (`sleep infinity` started by the
                   scheduler's shell): the run goes on to exit 0 with the reference schedule
  sigstop          SIGSTOP of the scheduler: reported as hung (exit 5) at --crash-timeout 1,
                   its message saying it is stopped, nothing left
  enospc           outputs and trace on a tmpfs of a random size (root only): exit 0 if all
                   fits, else exit 7 naming the file and "No space left on device"; the trace
                   never damaged (complete, or cut short at a record boundary); nothing left
  unwritable       a read-only output directory (root only): exit 2 naming the file, nothing
                   started, nothing left

Exit status: 0 when every trial survived, 1 otherwise, 2 on bad usage, 77 when nothing could be
tried (a fault needs to mount a tmpfs and may not). Prints one line per fault: trials, survived, time to
a clean exit (median and max), and what was lost."""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLEAN_LIMIT_S = 2.0
REPLY_GRACE_S = 2.0  # broker.cpp: how long a dead scheduler's last reply may take to arrive


def proc_table():
    """pid -> (ppid, state, comm) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rp = stat.rfind(")")
        fields = stat[rp + 2:].split()
        out[int(name)] = (int(fields[1]), fields[0], stat[stat.find("(") + 1:rp])
    return out


def descendants(root):
    table = proc_table()
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found, table


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_gone(pids, limit):
    """Seconds until none of pids is alive, or None past limit."""
    t0 = time.monotonic()
    while True:
        if not any(alive(p) for p in pids):
            return time.monotonic() - t0
        if time.monotonic() - t0 > limit:
            return None
        time.sleep(0.002)


def send(pid, sig):
    """False when the process is already gone."""
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


def leftovers(before):
    # vtime's segments only (vtime.PID.RANDOM): tests running beside this one make their own, e.g.
    # CPython's multiprocessing semaphores (sem.mp-*) while cpython.test_concurrent_futures runs.
    now = set(os.listdir("/dev/shm"))
    return sorted(n for n in now - before if n.startswith("vtime"))


class Runner:
    def __init__(self, args):
        self.vtime = args.vtime
        self.platform = os.path.join(args.examples, "platforms", "cluster16.xml")
        self.workload = os.path.join(args.examples, "workloads", "spaced_200_delay170.json")
        self.schedulers = {
            "periodic_fcfs": [os.path.join(args.bin, "periodic_fcfs", "periodic_fcfs"), "-s", "{endpoint}",
                              "--period", "1"],
            "batch_window.py": ["/usr/bin/python3", os.path.join(args.examples, "batch_window", "batch_window.py"),
                                "-s", "{endpoint}", "--window", "5"],
        }
        self.tmp = tempfile.mkdtemp(prefix="vtime-faults-")
        self.reference = {}  # (scheduler, wrapped) -> (wall seconds, jobs.csv text)
        self.rng = random.Random(args.seed)
        self.can_mount = os.geteuid() == 0 and self.try_mount()
        self.trial = 0
        self.scale = 1.0

    def command(self, prefix, sched, wrapped=False, extra=()):
        argv = self.schedulers[sched]
        if wrapped:
            # A grandchild that blocks in pause(): the scheduler's shell starts it, then becomes
            # the scheduler.
            argv = ["sh", "-c", 'sleep infinity & exec "$@"', "sh"] + argv
        return [self.vtime, "run", "-q", "-p", self.platform, "-w", self.workload, "-e", prefix,
                "--record", prefix + ".trace", *extra, "--"] + argv

    def start(self, cmd):
        # stderr to a file, never a pipe: a process that outlived vtime would hold a pipe open,
        # and reading it to its end would wait as long as that process lives.
        self.err_path = os.path.join(self.tmp, f"stderr_{self.trial}")
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.err_path, "w"), text=True)
        p.err_path = self.err_path
        return p

    @staticmethod
    def finish(p, timeout=120):
        """(exit status or None when it did not end in time, its stderr)."""
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None, open(p.err_path).read() + "\n(did not end within %d s: killed)" % timeout
        return p.returncode, open(p.err_path).read()

    def ref(self, sched, wrapped=False):
        key = (sched, wrapped)
        if key not in self.reference:
            prefix = os.path.join(self.tmp, f"ref_{sched}_{int(wrapped)}")
            t0 = time.monotonic()
            rc, err = self.finish(self.start(self.command(prefix, sched, wrapped)))
            wall = time.monotonic() - t0
            if rc != 0:
                sys.exit(f"faults.py: the reference run of {sched} failed ({rc}): {err.strip()}")
            with open(prefix + "_jobs.csv") as f:
                self.reference[key] = (wall, f.read())
        return self.reference[key]

    def validate(self, trace):
        """The verdict of `vtime trace validate` ("ok ...", "cut short ...", "damaged ..."), or None."""
        for path in (trace, trace + ".zst"):
            if os.path.exists(path):
                p = subprocess.run([self.vtime, "trace", "validate", path], capture_output=True, text=True)
                last = (p.stdout.strip().splitlines() or [""])[-1]
                return last.split(": ", 1)[1] if ": " in last else last
        return None

    def scheduler_pid(self, vtime_pid):
        tree, table = descendants(vtime_pid)
        for pid in tree:
            # Not the tracer, nor a child still between fork and exec (its name is still vtime's).
            if table[pid][0] == vtime_pid and table[pid][2] not in ("vtime-tracer", "vtime"):
                return pid, tree
        return None, tree

    def inject_at(self, sched, wrapped=False):
        # The reference's wall time bounds the instant; each retry (the run ended first: the
        # machine got faster than when the reference ran) halves it.
        wall, _ = self.ref(sched, wrapped)
        return self.rng.uniform(0.01, max(0.02, 0.9 * wall * self.scale))

    def trial_prefix(self, name):
        self.trial += 1
        return os.path.join(self.tmp, f"{name}_{self.trial}")

    # Each fault returns (survived, clean_seconds or None, lost text, detail) or None when the
    # run ended before the fault could be injected (the trial is repeated).

    def kill_vtime(self, sched):
        prefix = self.trial_prefix("kill_vtime")
        shm = set(os.listdir("/dev/shm"))
        self.ref(sched, wrapped=True)  # before the run: the reference must not run beside it
        p = self.start(self.command(prefix, sched, wrapped=True))
        time.sleep(self.inject_at(sched, True))
        tree, table = descendants(p.pid)
        if p.poll() is not None:
            return None
        names = [table[pid][2] for pid in tree]
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGKILL)
        _, err = self.finish(p)
        gone = wait_gone(tree, 5.0)
        clean = None if gone is None else time.monotonic() - t0
        left = leftovers(shm)
        verdict = self.validate(prefix + ".trace") or "no trace"
        damaged = verdict.startswith("damaged")
        ok = clean is not None and clean <= CLEAN_LIMIT_S and not left and not damaged
        lost = "the rest of the run (trace " + verdict + ")"
        alive_left = [f"{pid} {proc_table().get(pid, ('', '', '?'))[2]}" for pid in tree if alive(pid)]
        detail = "" if ok else (f"tree {names} gone after {clean} (alive: {alive_left}), shm left {left}, trace {verdict}, "
                                f"stderr {err.strip()[-300:]!r}")
        for pid in tree:  # never leave a survivor behind, even when the trial failed
            if alive(pid):
                send(pid, signal.SIGKILL)
        return ok, clean, lost, detail

    def signal_scheduler(self, name, sched, sig, extra=()):
        """Sends `sig` to the scheduler at a random instant of a run, then waits for the run's
        end: (prefix, exit status, stderr, seconds from the signal until vtime and the tree were
        gone or None, trace verdict, whether /dev/shm kept something), or None when the run
        ended before the signal (the trial is drawn again)."""
        prefix = self.trial_prefix(name)
        shm = set(os.listdir("/dev/shm"))
        wall, _ = self.ref(sched)  # before the run: the reference must not run beside it
        p = self.start(self.command(prefix, sched, extra=extra))
        # The instant is drawn in the part of the run where the scheduler exists: a Python
        # scheduler under a sanitizer build takes most of a short run to start (session 35:
        # batch_window.py appeared ~1.2 s into a 1.7 s run, and instants drawn from the run's
        # start, halved at each retry, kept falling before it).
        t0 = time.monotonic()
        while self.scheduler_pid(p.pid)[0] is None and p.poll() is None and time.monotonic() - t0 < wall + 30:
            time.sleep(0.005)
        left = wall - (time.monotonic() - t0)
        time.sleep(self.rng.uniform(0.0, max(0.01, 0.9 * left * self.scale)))
        victim, tree = self.scheduler_pid(p.pid)
        if victim is None or p.poll() is not None:
            self.finish(p)
            return None
        t0 = time.monotonic()
        if not send(victim, sig):
            self.finish(p)
            return None  # it had just exited: the run ended before the fault
        rc, err = self.finish(p)
        exited = time.monotonic() - t0
        gone = wait_gone(tree, 5.0)
        clean = None if gone is None else exited + gone
        verdict = self.validate(prefix + ".trace") or "no trace"
        return prefix, rc, err, clean, verdict, bool(leftovers(shm))

    def kill_scheduler(self, sched):
        res = self.signal_scheduler("kill_scheduler", sched, signal.SIGKILL)
        if res is None:
            return None
        prefix, rc, err, clean, verdict, shm_left = res
        if rc == 0 and "(run status ok, exit code 0)" in verdict:
            return None  # killed as it exited after its last reply: the run was over
        rows = sum(1 for _ in open(prefix + "_jobs.csv")) - 1 if os.path.exists(prefix + "_jobs.csv") else -1
        # The broker gives a reply already on its way 2 s to arrive before it reports the death.
        ok = (rc == 4 and clean is not None and clean <= CLEAN_LIMIT_S + REPLY_GRACE_S and not shm_left and
              verdict.startswith("ok") and "exit code 4" in verdict and rows >= 0 and
              os.path.exists(prefix + "_schedule.csv"))
        detail = "" if ok else f"exit {rc} ({err.strip()[-200:]}), clean {clean}, trace {verdict}, rows {rows}"
        return ok, clean, "nothing (outputs hold the jobs done, the trace is complete)", detail

    def kill_grandchild(self, sched):
        prefix = self.trial_prefix("kill_grandchild")
        shm = set(os.listdir("/dev/shm"))
        _, reference = self.ref(sched, wrapped=True)
        p = self.start(self.command(prefix, sched, wrapped=True))
        time.sleep(self.inject_at(sched, True))
        # Early in the run the shell may not have started its `sleep` yet: wait for it.
        for _ in range(500):
            tree, table = descendants(p.pid)
            sleeper = [pid for pid in tree if table[pid][2] == "sleep"]
            if sleeper or p.poll() is not None:
                break
            time.sleep(0.001)
        if not sleeper or p.poll() is not None:
            self.finish(p)
            return None
        if not send(sleeper[0], signal.SIGKILL):
            self.finish(p)
            return None
        t0 = time.monotonic()
        rc, err = self.finish(p)
        gone = wait_gone(tree, 5.0)
        clean = None if gone is None else time.monotonic() - t0
        same = os.path.exists(prefix + "_jobs.csv") and open(prefix + "_jobs.csv").read() == reference
        ok = rc == 0 and same and gone is not None and not leftovers(shm)
        detail = "" if ok else f"exit {rc} ({err.strip()[-200:]}), same schedule {same}"
        return ok, clean, "nothing (the reference schedule)", detail

    def sigstop(self, sched):
        res = self.signal_scheduler("sigstop", sched, signal.SIGSTOP, extra=("--crash-timeout", "1"))
        if res is None:
            return None
        _, rc, err, clean, verdict, shm_left = res
        if rc == 0:
            return None  # it had replied to its last message before the stop took hold
        # Stopped before it bound its endpoint: "did not bind" (exit 6), also saying it is stopped.
        ok = (rc in (5, 6) and "stopped" in err and clean is not None and clean <= 1 + CLEAN_LIMIT_S and
              not shm_left and verdict.startswith("ok"))
        detail = "" if ok else f"exit {rc} ({err.strip()[-200:]}), clean {clean}, trace {verdict}"
        return ok, clean, "nothing (reported hung; outputs and trace complete)", detail

    def try_mount(self):
        """Whether this machine lets us mount a tmpfs (root in a container may not)."""
        d = tempfile.mkdtemp(prefix="mnt_", dir=self.tmp)
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", d], capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", d], check=False)
        return ok

    def mount_tmpfs(self, size_kb, read_only=False):
        d = tempfile.mkdtemp(prefix="mnt_", dir=self.tmp)
        opts = f"size={size_kb}k" + (",ro" if read_only else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], check=True)
        return d

    def enospc(self, sched):
        d = self.mount_tmpfs(self.rng.choice([4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]))
        try:
            prefix = os.path.join(d, "out")
            shm = set(os.listdir("/dev/shm"))
            p = self.start(self.command(prefix, sched))
            t0 = time.monotonic()
            rc, err = self.finish(p)
            clean = time.monotonic() - t0
            verdict = self.validate(prefix + ".trace") or "no trace"
            rows = sum(1 for _ in open(prefix + "_jobs.csv")) - 1 if os.path.exists(prefix + "_jobs.csv") else -1
            full = "No space left on device" in err
            # Exit 2: not even the trace's header or the outputs' first line fitted (nothing ran).
            ok = ((rc == 0 and not full) or (rc in (2, 7) and full)) and \
                not verdict.startswith("damaged") and not leftovers(shm)
            lost = f"{200 - max(rows, 0)} of 200 jobs.csv rows, trace {verdict}" if rc else "nothing"
            detail = "" if ok else f"exit {rc} ({err.strip()[-200:]}), trace {verdict}"
            return ok, clean, lost, detail
        finally:
            subprocess.run(["umount", d], check=False)

    def unwritable(self, sched):
        d = self.mount_tmpfs(64, read_only=True)
        try:
            shm = set(os.listdir("/dev/shm"))
            before = proc_table()
            p = self.start(self.command(os.path.join(d, "out"), sched))
            t0 = time.monotonic()
            rc, err = self.finish(p)
            clean = time.monotonic() - t0
            ok = rc == 2 and "Read-only file system" in err and d in err and not leftovers(shm)
            detail = "" if ok else f"exit {rc} ({err.strip()[-200:]})"
            return ok, clean, "nothing (refused before the run)", detail
        finally:
            subprocess.run(["umount", d], check=False)


FAULTS = ["kill_vtime", "kill_scheduler", "kill_grandchild", "sigstop", "enospc", "unwritable"]
ROOT_ONLY = {"enospc", "unwritable"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--vtime", required=True)
    ap.add_argument("--examples", required=True, help="the source tree's examples/ (platform, workload, batch_window.py)")
    ap.add_argument("--bin", required=True, help="the build's examples/ (periodic_fcfs)")
    ap.add_argument("--trials", type=int, default=200, help="trials per fault (default 200)")
    ap.add_argument("--fault", action="append", choices=FAULTS, help="only these faults (repeatable)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if args.trials < 1:
        ap.error("--trials must be at least 1")
    r = Runner(args)
    faults = args.fault or FAULTS
    results, failed, tried = {}, 0, 0
    for fault in faults:
        if fault in ROOT_ONLY and not r.can_mount:
            print(f"{fault:16s} skipped: needs the right to mount a tmpfs (root)")
            continue
        rows = []
        scheds = list(r.schedulers)
        for i in range(args.trials):
            sched = scheds[i % len(scheds)]
            res = None
            for attempt in range(8):  # the run may end before the instant drawn: draw again, earlier
                r.scale = 0.5 ** attempt
                res = getattr(r, fault)(sched)
                if res is not None:
                    break
            if res is None:
                rows.append((False, None, "", f"{sched}: could not inject the fault in 8 tries"))
                print(f"  {fault} trial {i + 1} ({sched}) FAILED: {rows[-1][3]}", file=sys.stderr)
                continue
            rows.append(res)
            if not res[0]:
                print(f"  {fault} trial {i + 1} ({sched}) FAILED: {res[3]}", file=sys.stderr)
        tried += 1
        survived = sum(1 for ok, *_ in rows if ok)
        failed += len(rows) - survived
        cleans = [c for _, c, _, _ in rows if c is not None]
        lost = sorted({l for _, _, l, _ in rows if l})
        med = statistics.median(cleans) if cleans else float("nan")
        mx = max(cleans) if cleans else float("nan")
        print(f"{fault:16s} trials {len(rows):4d}  survived {survived:4d}  clean exit median {med:.3f} s max {mx:.3f} s"
              f"  lost: {lost[0] if len(lost) == 1 else '; '.join(lost[:3]) + (' ...' if len(lost) > 3 else '')}")
        results[fault] = {"trials": len(rows), "survived": survived, "clean_median_s": med, "clean_max_s": mx,
                          "lost": lost, "failures": [d for ok, _, _, d in rows if not ok]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    subprocess.run(["rm", "-rf", r.tmp], check=False)
    if tried == 0:
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
