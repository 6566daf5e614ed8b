#!/usr/bin/python3
"""Seeded workloads for comparing vtime with real-time references (issue 41): jobs of 1-4 nodes
on 8 one-CPU nodes, submitted at whole seconds with about a third of them sharing their second
with the job before (as submissions in any SWF trace do), delays of 5-40 s, walltimes 10-100 s
above the delay, enough work to keep the cluster contended.

usage: reference_workloads.py OUTDIR [--count 5] [--jobs 24]   writes OUTDIR/ref<seed>.json
"""
import argparse
import json
import os
import random


def workload(seed, n, nodes=8):
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 2
    for i in range(n):
        if i and rng.random() > 0.35:
            t += rng.randint(1, 6)
        d = rng.randint(5, 40)
        jobs.append({"id": str(i), "subtime": t, "res": rng.randint(1, 4), "walltime": d + rng.randint(10, 100),
                     "profile": "d%d" % d})
        profiles["d%d" % d] = {"type": "delay", "delay": d}
    return {"nb_res": nodes, "jobs": jobs, "profiles": profiles}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=24)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for seed in range(1, a.count + 1):
        path = os.path.join(a.outdir, "ref%d.json" % seed)
        with open(path, "w") as f:
            json.dump(workload(seed, a.jobs), f, indent=1, sort_keys=True)
        print(path)


if __name__ == "__main__":
    main()
