#!/usr/bin/python3
"""Programs that wait by running, under each CPU-time model (docs/design.md, "CPU-time model").

usage: cpu_cases.py --list | CASE --vtime VTIME --spin SPIN_CLOCK --handover SPIN_HANDOVER --early-wake EARLY_WAKE
                        [--sanitizer-yields SANITIZER_YIELDS]

Each case runs real programs (python3 and our spin_clock) under `vtime exec` as an unprivileged
user and checks what the issue asks of the models:
  spin_c, spin_python    a loop on the clock for 100 ms finishes under the default model, with
                         exactly 100 ms elapsed, the same output on two runs, no warning;
  handover               a spin that hands a baton to another thread every 5 ms and waits for it
                         back (CPython's GIL): the waits that end at the instant they began do
                         not give the spinner a new burst, a sleep does; its reads are exactly a
                         function of --cpu-burst and --cpu-cost, twice the same;
  communicate            subprocess.communicate(timeout=5) on a child that never answers raises
                         TimeoutExpired at 5.005 s: its 5 s poll ends 5 ms late (Linux's slack,
                         0.1% of the timeout, vtime exec's default), past CPython's strict
                         `_time() > endtime` (exact waits: one more 1 ms poll, 5.001 s); twice
                         the same;
  gil                    a CPU-bound thread holding the GIL does not keep a sleeping thread from
                         getting it back (default model: the busy limit, which vtime then names
                         on stderr once; real);
  real_model             the clock runs while the tree computes (a busy second is visible);
  zero_warns             under zero the spin hangs, and vtime says so once: which thread runs, what
                         it does, which model would help (killed by `timeout` after 8 s);
  bogus                  --cpu-model bogus is a usage error listing the models (exec, run, replay);
  sanitizer_yields       an ASan-built program's 1,000 leak checks (LeakSanitizer spins on
                         sched_yield while its tracer thread scans) cost no virtual time, its own
                         20,000 yields do, the same on two runs;
  early_wake             under real, timed futex and condition waits whose deadline passes before
                         they block (strace holds every futex call 2 ms at its entry) still end:
                         the wake-up is repeated until the wait is over (abi::kAgentRetry).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
UNPRIVILEGED = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
WARNING = "virtual time has stood still"
# Said once when the busy limit lets the clock run with real time (the run stops being exact).
FLOW = "the clock runs with real time until the tree is idle again"

PY_SPIN = """
import time
t0 = time.monotonic()
d = time.time() + 0.1
n = 0
while time.time() < d:
    n += 1
print("elapsed %.9f after %d iterations" % (time.monotonic() - t0, n))
"""

REAL_BUSY = """
import time
t0 = time.monotonic()
x = 0
for i in range(3000000):
    x += i
print("elapsed %.3f" % (time.monotonic() - t0))
"""


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, cmd, model=None, timeout=60, options=(), env=None):
    vt = [args.vtime, "exec"] + (["--cpu-model", model] if model else []) + list(options) + ["--"]
    r = subprocess.run(UNPRIVILEGED + vt + cmd, capture_output=True, text=True, timeout=timeout, cwd="/tmp", env=env)
    print("$ %s\n%s%s(exit %d)" % (" ".join(cmd), r.stdout, r.stderr, r.returncode))
    return r


def twice_same(args, cmd, model=None, options=(), env=None):
    a, b = run(args, cmd, model, options=options, env=env), run(args, cmd, model, options=options, env=env)
    for r in (a, b):
        if r.returncode != 0:
            fail("exit status %d" % r.returncode)
        if WARNING in r.stderr or FLOW in r.stderr:
            fail("a warning where the program progresses exactly")
    if a.stdout != b.stdout:
        fail("two runs differ: %r vs %r" % (a.stdout, b.stdout))
    return a.stdout


def case_spin_c(args):
    out = twice_same(args, [args.spin])
    if "elapsed 100000000 ns" not in out:
        fail("the C spin did not see exactly 100 ms")


def case_spin_python(args):
    out = twice_same(args, [PY, "-c", PY_SPIN])
    if "elapsed 0.100000000" not in out:
        fail("the Python spin did not see exactly 100 ms")


def case_handover(args):
    import re
    for burst, cost_us in ((5000, 10), (2000, 1)):
        out = twice_same(args, [args.handover], options=["--cpu-burst", str(burst), "--cpu-cost", "%dus" % cost_us])
        m = re.search(r"phase 1: (\d+) reads, (\d+) ns\nphase 2: (\d+) reads, (\d+) ns", out)
        if not m:
            fail("no phase lines")
        r1, t1, r2, t2 = (int(x) for x in m.groups())
        if (t1, t2) != (100000000, 10000000):
            fail("the spins did not see exactly 100 ms and 10 ms")
        # Phase 1: one burst free, then 100 ms of paid calls (its hand-overs make 20 charged
        # calls of their own); a new burst at each of the 20 hand-overs would be 20 bursts more.
        paid1, paid2 = 100000 // cost_us, 10000 // cost_us
        if not burst + paid1 - 40 <= r1 <= burst + paid1 + 2:
            fail("phase 1 took %d reads, expected %d (one burst, then paid)" % (r1, burst + paid1))
        # Phase 2 follows a sleep: a new burst.
        if not burst + paid2 - 2 <= r2 <= burst + paid2 + 2:
            fail("phase 2 took %d reads, expected %d (a new burst after a sleep)" % (r2, burst + paid2))


def case_communicate(args):
    out = twice_same(args, [PY, os.path.join(HERE, "communicate_timeout.py")])
    if "timeout after 5.005 s" not in out or "OK" not in out:
        fail("communicate(timeout=5) did not time out at 5.005 s")


def case_gil(args):
    for model in (None, "real"):
        r = run(args, [PY, os.path.join(HERE, "gil_handover.py")], model)
        if r.returncode != 0 or "OK" not in r.stdout:
            fail("the GIL hand-over did not finish under %s" % (model or "the default model"))
        # Under calls the busy limit did it, and vtime says so once, naming the thread; under
        # real the clock always runs, nothing to say.
        if r.stderr.count(FLOW) != (0 if model else 1) or (model is None and "(python3)" not in r.stderr):
            fail("expected %d busy-limit notice(s) naming python3 under %s" % (0 if model else 1, model or "calls"))


def case_real_model(args):
    r = run(args, [PY, "-c", REAL_BUSY], "real")
    if r.returncode != 0:
        fail("exit status %d" % r.returncode)
    elapsed = float(r.stdout.split()[-1])
    if elapsed <= 0:
        fail("under real the clock did not run while the program computed")
    r = run(args, [PY, "-c", REAL_BUSY], "zero")
    if r.returncode != 0 or "elapsed 0.000" not in r.stdout:
        fail("under zero computation took virtual time")


def case_zero_warns(args):
    vt = [args.vtime, "exec", "--cpu-model", "zero", "--", args.spin]
    r = subprocess.run(UNPRIVILEGED + ["timeout", "8"] + vt, capture_output=True, text=True, timeout=60)
    print(r.stderr)
    if r.returncode != 124:
        fail("the spin under zero ended (exit %d) instead of hanging" % r.returncode)
    if r.stderr.count(WARNING) != 1:
        fail("expected exactly one warning")
    for part in ("(spin_clock)", "reading the clock", "--cpu-model calls"):
        if part not in r.stderr:
            fail("the warning does not say %r" % part)


# strace runs without the shim, so that its 2 ms holds are real time; the program keeps it.
STRACE_HOLD = """P=$LD_PRELOAD
exec env -u LD_PRELOAD strace -o /dev/null -f -E LD_PRELOAD="$P" -e trace=futex \
    -e inject=futex:delay_enter=2000 "$@"
"""


def case_early_wake(args):
    # The deadlines are 300 us away and the clock runs with real time while the fourth thread
    # computes: each wait's deadline passes while strace holds its futex call, so the agent's
    # wake-up comes before the waiter is queued. Without the repeat a waiter slept forever and
    # `timeout` ended the run (each of several tries before the fix).
    cmd = ["timeout", "60", args.vtime, "exec", "--cpu-model", "real", "--", "/bin/sh", "-c", STRACE_HOLD,
           "early_wake", args.early_wake, "30"]
    r = subprocess.run(UNPRIVILEGED + cmd, capture_output=True, text=True, timeout=120, cwd="/tmp")
    print("%s%s(exit %d)" % (r.stdout, r.stderr, r.returncode))
    if r.returncode == 124:
        fail("a waiter never woke: a wake-up made before it blocked was lost")
    if r.returncode != 0 or "done 180 waits" not in r.stdout:
        fail("early_wake exited %d" % r.returncode)


def case_sanitizer_yields(args):
    if not args.sanitizer_yields:
        print("SKIP: the compiler cannot build a program with -fsanitize=address")
        sys.exit(77)
    # The shim is preloaded before the ASan runtime; ASan would refuse that order by default.
    env = dict(os.environ, ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1")
    out = twice_same(args, [args.sanitizer_yields, "1000"], env=env)
    if "leak checks: 1000 in 0 ns" not in out:
        fail("LeakSanitizer's own yields were charged as the program's computation")
    import re
    m = re.search(r"own yields: 20000 in (\d+) ns", out)
    if not m or int(m.group(1)) <= 0:
        fail("the program's own yields were not charged")


def case_bogus(args):
    for sub in (["exec", "--cpu-model", "bogus", "--", "true"],
                ["run", "--hosts", "1", "-w", "/nonexistent.json", "-e", "/tmp/x", "--cpu-model", "bogus", "--", "true"],
                ["replay", "--cpu-model", "bogus", "/nonexistent.trace"]):
        r = subprocess.run([args.vtime] + sub, capture_output=True, text=True, timeout=30)
        print(r.stderr)
        if r.returncode != 2:
            fail("vtime %s: exit %d, expected 2" % (sub[0], r.returncode))
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        if len(lines) != 1 or not all(m in lines[0] for m in ("bogus", "zero", "calls", "real")):
            fail("vtime %s: not one line naming the models" % sub[0])


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", nargs="?")
    p.add_argument("--list", action="store_true")
    p.add_argument("--vtime")
    p.add_argument("--spin")
    p.add_argument("--handover")
    p.add_argument("--early-wake")
    p.add_argument("--sanitizer-yields")
    args = p.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    CASES[args.case](args)
    print("PASS")


if __name__ == "__main__":
    main()
