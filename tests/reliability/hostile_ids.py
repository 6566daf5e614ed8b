#!/usr/bin/env python3
"""Hostile names (docs/reliability.md, security review): job ids and scheduler arguments made of
quotes, spaces, shell syntax and format directives go through vtime as data, never as code.

    hostile_ids.py CASE --vtime VTIME --examples DIR --bin DIR [--with-slurm]

Cases:
  schedulers  a workload whose ids are hostile, through `vtime run` with periodic_fcfs and with
              batch_window.py: exit 0, every id back in _jobs.csv exactly (RFC 4180 quoting
              where a comma or quote needs it), no file made by a command hidden in an id
  slurm       the same workload through `vtime slurm` (Debian's Slurm: ids become job names and
              comments): the same checks (skipped, 77, without --with-slurm)
  newline     an id with a line break or another control character: refused at load time, exit 2,
              one line naming the job (it would forge a line of _jobs.csv, a log or Slurm's records)
  arguments   scheduler arguments with the same characters reach the program unchanged
              (`vtime exec` and `vtime run` pass argv, never a shell line)
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def hostile_ids(marker):
    return ["plain", "with space", "quote'single", 'quote"double', f"$(touch {marker})", f"`touch {marker}`",
            f";touch {marker};", "c,omma", "\u00fcn\u00efc\u00f6d\u00e9", "--help", "-s", "*", "\\back\\slash",
            "%s%n%x", "a&b|c>d", " lead and trail ", "{endpoint}"]


def workload(path, ids):
    jobs = [{"id": i, "subtime": n, "res": 1 + n % 3, "profile": "d"} for n, i in enumerate(ids)]
    with open(path, "w") as f:
        json.dump({"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 5}}}, f)


def check_outputs(prefix, ids, marker, what):
    with open(prefix + "_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    got = sorted(r["job_id"] for r in rows)
    if got != sorted(ids):
        fail(f"{what}: _jobs.csv ids {got} != {sorted(ids)}")
    bad = [r["job_id"] for r in rows if r["final_state"] != "COMPLETED_SUCCESSFULLY"]
    if bad:
        fail(f"{what}: jobs not completed: {bad}")
    if os.path.exists(marker):
        fail(f"{what}: a command hidden in a job id ran (made {marker})")


def run(cmd, what, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        fail(f"{what}: exit {p.returncode}, expected {expect}\n{p.stderr[-2000:]}")
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=["schedulers", "slurm", "newline", "arguments"])
    ap.add_argument("--vtime", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--with-slurm", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vtime-hostile-")
    marker = os.path.join(tmp, "pwned")
    ids = hostile_ids(marker)
    wl = os.path.join(tmp, "hostile.json")
    workload(wl, ids)
    periodic = os.path.join(a.bin, "periodic_fcfs", "periodic_fcfs")
    batch = os.path.join(a.examples, "batch_window", "batch_window.py")
    if a.case == "schedulers":
        for name, sched in [("periodic_fcfs", [periodic, "-s", "{endpoint}", "--period", "1"]),
                            ("batch_window.py", ["/usr/bin/python3", batch, "-s", "{endpoint}", "--window", "2"])]:
            prefix = os.path.join(tmp, name)
            run([a.vtime, "run", "-q", "--hosts", "4", "-w", wl, "-e", prefix, "--record", prefix + ".trace", "--"] +
                sched, name)
            check_outputs(prefix, ids, marker, name)
            # The trace rebuilds the same _jobs.csv, quoting included.
            p = run([a.vtime, "trace", "export", "-f", "jobs-csv", prefix + ".trace"], name + " trace export")
            with open(prefix + "_jobs.csv") as f:
                if p.stdout != f.read():
                    fail(f"{name}: `vtime trace export -f jobs-csv` differs from _jobs.csv")
            print(f"{name}: {len(ids)} hostile ids intact")
    elif a.case == "slurm":
        if not a.with_slurm:
            print("skipped: vtime-slurm not built")
            return 77
        prefix = os.path.join(tmp, "slurm")
        run([a.vtime, "slurm", "-q", "--hosts", "4", "-w", wl, "-e", prefix], "vtime slurm")
        check_outputs(prefix, ids, marker, "vtime slurm")
        print(f"vtime slurm: {len(ids)} hostile ids intact")
    elif a.case == "newline":
        for bad in ["new\nline", "carriage\rreturn", "tab\there", "nul\u0000"]:
            path = os.path.join(tmp, "bad.json")
            workload(path, ["fine", bad])
            p = run([a.vtime, "run", "-q", "--hosts", "4", "-w", path, "-e", os.path.join(tmp, "bad"), "--", periodic,
                     "-s", "{endpoint}"], repr(bad), expect=2)
            lines = p.stderr.strip().splitlines()
            if len(lines) != 1 or "job 1" not in lines[0] or "control character" not in lines[0]:
                fail(f"{bad!r}: not one clear line: {p.stderr!r}")
        print("ids with control characters refused, each in one line")
    else:
        args = [i for i in ids if not i.startswith("-") and i != "{endpoint}"]  # {endpoint} is replaced, by design
        p = run([a.vtime, "exec", "--", "/usr/bin/printf", "[%s]\\n"] + args, "vtime exec printf")
        if p.stdout != "".join(f"[{x}]\n" for x in args):
            fail(f"vtime exec changed the arguments: {p.stdout!r}")
        # vtime run: {endpoint} is replaced, everything else passed as is; the scheduler here is a
        # shell script that records its arguments and then becomes periodic_fcfs.
        record = os.path.join(tmp, "args.txt")
        script = os.path.join(tmp, "sched.sh")
        with open(script, "w") as f:
            f.write('#!/bin/sh\nprintf "[%s]\\n" "$@" > "$RECORD"\nexec "$PERIODIC" -s "$1" --period 1\n')
        os.chmod(script, 0o755)
        env = dict(os.environ, RECORD=record, PERIODIC=periodic)
        small = os.path.join(tmp, "small.json")
        workload(small, ["1", "2"])
        p = subprocess.run([a.vtime, "run", "-q", "--hosts", "4", "-w", small, "-e", os.path.join(tmp, "args"), "--",
                            script, "{endpoint}"] + args, capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            fail(f"vtime run with hostile arguments: exit {p.returncode}: {p.stderr}")
        with open(record) as f:
            got = f.read().splitlines()
        want = [f"[{x}]" for x in args]
        if got[1:] != want or not got[0].startswith("[ipc://"):
            fail(f"vtime run changed the arguments: {got} != [endpoint] + {want}")
        if os.path.exists(marker):
            fail("a command hidden in an argument ran")
        print(f"{len(args)} hostile arguments passed unchanged by vtime exec and vtime run")
    subprocess.run(["rm", "-rf", tmp], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
