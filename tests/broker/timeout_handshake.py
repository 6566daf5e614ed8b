#!/usr/bin/python3
"""A scheduler slow to finish ZeroMQ's handshake under the timeout policy keeps its connection.

The timeout policy moves the clock whenever a reply is late. The scheduler's end of the
connection arms ZeroMQ's handshake timer (30 s) on its clock, which is virtual: when the clock
jumped to that timer before the handshake was over, the scheduler dropped the connection, and
once the broker had already written the first message on it, that message was lost and the run
hung for the crash timeout (CI, a loaded 2-cpu machine: sweep.grid, status busy after 30 s).
Here the scheduler (periodic_fcfs) is made slow on purpose: strace delays each of its first six
socket reads (the handshake) by 30 ms of real time. strace runs without vtime's shim, so its
delays are real; the scheduler keeps the shim (strace -E puts LD_PRELOAD back). The scheduler
must accept exactly one connection, and the run must complete every job, under both policies.

usage: timeout_handshake.py --vtime VTIME --periodic-fcfs BIN --workload JSON
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

SLOW = """P=$LD_PRELOAD
exec env -u LD_PRELOAD strace -o "$0" -f -E LD_PRELOAD="$P" -e trace=accept4 \
    -e inject=recvfrom:delay_enter=30000:when=1..6 "$@"
"""


def run(args, tmp, name, extra):
    prefix = os.path.join(tmp, name)
    trace = prefix + ".strace"
    cmd = [args.vtime, "run", "-q", "--hosts", "2", "-w", args.workload, "-e", prefix] + extra + [
        "--", "/bin/sh", "-c", SLOW, trace, args.periodic_fcfs, "-s", "{endpoint}", "--period", "1",
        "--decision-cost", "2"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
    except subprocess.TimeoutExpired:
        print("FAIL: %s: vtime run did not end within 100 s" % name)
        sys.exit(1)
    if r.returncode != 0:
        print("FAIL: %s: vtime run exited %d: %s" % (name, r.returncode, r.stderr[-3000:]))
        sys.exit(1)
    with open(trace) as f:
        accepts = [line for line in f if "accept4(" in line and "= -1" not in line]
    with open(prefix + "_jobs.csv") as f:
        jobs = list(csv.DictReader(f))
    done = sum(1 for j in jobs if j["final_state"] == "COMPLETED_SUCCESSFULLY")
    print("%s: %d connection(s) accepted, %d of %d jobs completed" % (name, len(accepts), done, len(jobs)))
    if len(accepts) != 1:
        print("FAIL: %s: the scheduler accepted %d connections: the clock moved during ZeroMQ's handshake "
              "and its handshake timer dropped the connection\n%s" % (name, len(accepts), "".join(accepts)))
        sys.exit(1)
    if not jobs or done != len(jobs):
        print("FAIL: %s: %d of %d jobs completed" % (name, done, len(jobs)))
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtime", required=True)
    ap.add_argument("--periodic-fcfs", required=True)
    ap.add_argument("--workload", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vtime-handshake-test-") as tmp:
        run(args, tmp, "timeout", ["--sync", "timeout", "--timeout", "1"])
        run(args, tmp, "exact", [])
    print("PASS: one connection under both policies although the handshake took 180 ms of real time")


main()
