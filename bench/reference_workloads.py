#!/usr/bin/python3
"""Seeded workloads for comparing vtime with real-time references (issue 41): jobs of 1-4 nodes
on 8 one-CPU nodes, submitted at whole seconds with about a third of them sharing their second
with the job before (as submissions in any SWF trace do), delays of 5-40 s, walltimes 10-100 s
above the delay, enough work to keep the cluster contended. With --k8s: 30 one-host jobs (a Pod
runs on one Node) and no walltime, written as k8s<seed>.json.

usage: reference_workloads.py OUTDIR [--count 5] [--jobs 24] [--k8s]   writes OUTDIR/ref<seed>.json
"""
import argparse
import json
import os
import random


def workload(seed, n, nodes=8, one_host=False):
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 2
    for i in range(n):
        if i and rng.random() > 0.35:
            t += rng.randint(1, 6)
        d = rng.randint(5, 40)
        res, walltime = rng.randint(1, 4), d + rng.randint(10, 100)
        if one_host:
            res, walltime = 1, -1
        jobs.append({"id": str(i), "subtime": t, "res": res, "walltime": walltime, "profile": "d%d" % d})
        profiles["d%d" % d] = {"type": "delay", "delay": d}
    return {"nb_res": nodes, "jobs": jobs, "profiles": profiles}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=0, help="jobs per workload (default 24, 30 with --k8s)")
    ap.add_argument("--k8s", action="store_true", help="one-host jobs without walltime, for Kubernetes")
    a = ap.parse_args()
    n = a.jobs or (30 if a.k8s else 24)
    os.makedirs(a.outdir, exist_ok=True)
    for seed in range(1, a.count + 1):
        path = os.path.join(a.outdir, "%s%d.json" % ("k8s" if a.k8s else "ref", seed))
        with open(path, "w") as f:
            json.dump(workload(seed, n, one_host=a.k8s), f, indent=1, sort_keys=True)
        print(path)


if __name__ == "__main__":
    main()
