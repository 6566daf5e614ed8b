#!/usr/bin/python3
"""The trade-off vtime exists to study: periodic_fcfs spending real CPU time per decision
(--work-ms) gives, under the timeout sync policy with a small --timeout, a measurable deviation
from the exact schedule; under exact sync (idle detection) it gives none.

usage: timeout_policy.py --vtime VTIME --periodic-fcfs BIN --platform XML --workload JSON
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile


def run(args, tmp, name, extra, work_ms):
    prefix = os.path.join(tmp, name)
    cmd = [args.vtime, "run", "-q", "-p", args.platform, "-w", args.workload, "-e", prefix] + extra + [
        "--", args.periodic_fcfs, "-s", "{endpoint}", "--period", "1", "--work-ms", str(work_ms)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
        sys.exit(1)
    with open(prefix + "_schedule.csv") as f:
        sched = next(csv.DictReader(f))
    with open(prefix + "_jobs.csv") as f:
        jobs = f.read()
    return float(sched["makespan"]), float(sched["mean_waiting_time"]), jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtime")
    ap.add_argument("--periodic-fcfs")
    ap.add_argument("--platform")
    ap.add_argument("--workload")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vtime-timeout-test-") as tmp:
        ref = run(args, tmp, "exact", [], 0)
        exact_work = run(args, tmp, "exact_work", [], 3)
        timeout_work = run(args, tmp, "timeout_work", ["--sync", "timeout", "--timeout", "1"], 3)
    print("exact, no work:       makespan %.6f mean wait %.6f" % ref[:2])
    print("exact, 3 ms/decision: makespan %.6f mean wait %.6f" % exact_work[:2])
    print("timeout 1 ms, 3 ms/decision: makespan %.6f mean wait %.6f" % timeout_work[:2])
    if exact_work[2] != ref[2]:
        print("FAIL: exact sync deviates when decisions take real time")
        sys.exit(1)
    if timeout_work[:2] == ref[:2]:
        print("FAIL: the timeout policy showed no deviation although decisions outlast the timeout")
        sys.exit(1)
    print("PASS: deviation %+.6f s makespan, %+.6f s mean wait under the timeout policy; none in exact mode"
          % (timeout_work[0] - ref[0], timeout_work[1] - ref[1]))


main()
