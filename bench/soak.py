#!/usr/bin/env python3
"""Soak (docs/reliability.md): many consecutive `vtime run`s alternating periodic_fcfs and
batch_window.py on the reference workloads, checking that every configuration gives the same
outputs every time and that nothing accumulates.

    bench/soak.py [--build build/release] [--runs 1000] [--json FILE]

Per run: exit status 0; PREFIX_jobs.csv byte-identical to the configuration's first run (and, for
periodic_fcfs, the whole decision trace too: batch_window.py's clock reads depend on CPython's
thread races, its decisions do not); no process, /dev/shm entry or /tmp entry left; the vtime
process's open file descriptors (sampled during the run) and its peak RSS (from its summary).
At the end: first/last/max of each, and whether any grew. Exit 0 when every run passed and nothing
grew, 1 otherwise."""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fds_of(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def vtime_processes():
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if any(b"periodic_fcfs" in c or b"batch_window" in c or c.endswith(b"vtime-tracer") for c in cmd[:3]):
                out.append(int(name))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--json", help="write every run's figures here")
    args = ap.parse_args()
    vtime = os.path.join(args.build, "cli", "vtime")
    ex = os.path.join(ROOT, "examples")
    platform = os.path.join(ex, "platforms", "cluster16.xml")
    scheds = {
        "periodic_fcfs": [os.path.join(args.build, "examples", "periodic_fcfs", "periodic_fcfs"), "-s", "{endpoint}",
                          "--period", "1"],
        "batch_window.py": ["/usr/bin/python3", os.path.join(ex, "batch_window", "batch_window.py"), "-s",
                            "{endpoint}", "--window", "5"],
    }
    workloads = ["spaced_200_delay170", "burst_200_delay170", "kit_10h_80"]
    configs = [(s, w) for w in workloads for s in scheds]
    tmp = tempfile.mkdtemp(prefix="vtime-soak-")
    first = {}
    rows, failures = [], []
    shm0, tmp0 = set(os.listdir("/dev/shm")), set(os.listdir("/tmp"))
    t_start = time.monotonic()
    for i in range(args.runs):
        sched, wl = configs[i % len(configs)]
        prefix = os.path.join(tmp, "run")
        cmd = [vtime, "run", "-p", platform, "-w", os.path.join(ex, "workloads", wl + ".json"), "-e", prefix,
               "--record", prefix + ".trace", "--"] + scheds[sched]
        t0 = time.monotonic()
        # stderr to a file, not a pipe: a process left behind would keep a pipe open for ever.
        with open(prefix + ".stderr", "w") as ef:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=ef, text=True)
        fds = None
        while p.poll() is None:  # sample the vtime process's descriptors while it runs
            n = fds_of(p.pid)
            if n is not None:
                fds = max(fds or 0, n)
            time.sleep(0.02)
        with open(prefix + ".stderr") as ef:
            err = ef.read()
        wall = time.monotonic() - t0
        m = re.search(r"peak RSS ([0-9.]+) MB", err)
        rss = float(m.group(1)) if m else None
        problems = []
        if p.returncode != 0:
            problems.append(f"exit {p.returncode}: {err.strip()[-300:]}")
        else:
            got = {"jobs": digest(prefix + "_jobs.csv")}
            if sched == "periodic_fcfs":
                got["trace"] = digest(prefix + ".trace")
            ref = first.setdefault((sched, wl), got)
            for k in got:
                if got[k] != ref[k]:
                    problems.append(f"{k} differs from the configuration's first run")
        left = vtime_processes()
        for _ in range(200):  # killed ones may take a moment to be reaped: 2 s at most
            if not left:
                break
            time.sleep(0.01)
            left = vtime_processes()
        if left:
            problems.append(f"processes left: {left}")
        shm = set(os.listdir("/dev/shm")) - shm0
        if shm:
            problems.append(f"/dev/shm left: {sorted(shm)}")
        tmpleft = {t for t in set(os.listdir("/tmp")) - tmp0 if t.startswith("vtime-") and not tmp.endswith(t)}
        if tmpleft:
            problems.append(f"/tmp left: {sorted(tmpleft)}")
        rows.append({"run": i, "scheduler": sched, "workload": wl, "exit": p.returncode, "wall_s": round(wall, 3),
                     "fds": fds, "peak_rss_mb": rss, "problems": problems})
        if problems:
            failures.append(rows[-1])
            print(f"run {i} ({sched}, {wl}): {'; '.join(problems)}", file=sys.stderr)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} runs, {len(failures)} failed, {time.monotonic() - t_start:.0f} s", flush=True)
    subprocess.run(["rm", "-rf", tmp], check=False)

    def trend(key):
        per_config = {}
        for r in rows:
            if r[key] is not None:
                per_config.setdefault((r["scheduler"], r["workload"]), []).append(r[key])
        out, grew = [], False
        for (s, w), v in sorted(per_config.items()):
            k = max(1, len(v) // 10)
            head, tail = sum(v[:k]) / k, sum(v[-k:]) / k
            # A leak grows with the runs; noise does not: compare the first and last tenths.
            if tail > head * 1.10 + (1 if key == "fds" else 0.5):
                grew = True
            out.append(f"{s}/{w}: first tenth {head:.1f}, last tenth {tail:.1f}, max {max(v):.1f}")
        return out, grew

    fd_lines, fd_grew = trend("fds")
    rss_lines, rss_grew = trend("peak_rss_mb")
    print(f"soak: {len(rows)} runs in {time.monotonic() - t_start:.0f} s, {len(failures)} failed "
          f"(identical outputs per configuration, nothing left behind)")
    print("open descriptors of vtime: " + "; ".join(fd_lines) + (" -- GREW" if fd_grew else " -- flat"))
    print("peak RSS (MB): " + "; ".join(rss_lines) + (" -- GREW" if rss_grew else " -- flat"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)
    return 0 if not failures and not fd_grew and not rss_grew else 1


if __name__ == "__main__":
    sys.exit(main())
