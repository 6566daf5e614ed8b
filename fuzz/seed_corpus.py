#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target into fuzz/corpus/<target>/, drawn from the tests'
own inputs (Batsim transcripts, traces, workloads, platforms, SWF, Slurm configurations) plus a
few hand-made cases per grammar. Files are named by the SHA-1 of their bytes, like libFuzzer's.

    fuzz/seed_corpus.py [--vtime build/release/cli/vtime]

With --vtime, a zstd-compressed trace is added (made by `vtime trace compress`). The script only
adds files; run fuzz/run.sh --merge to minimise a corpus after fuzzing."""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, hashlib.sha1(data).hexdigest())
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)


def read(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


def protocol():
    tdir = os.path.join(ROOT, "tests/data/batsim-4.2.1/transcripts")
    seen = set()
    for name in sorted(os.listdir(tdir)):
        with open(os.path.join(tdir, name)) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                raw = rec.get("raw")
                if not isinstance(raw, str) or len(raw) > 4096 or raw in seen:
                    continue
                seen.add(raw)
                mode = b"\x00" if rec.get("dir") == "batsim->sched" else b"\x01"
                add("protocol", mode + raw.encode())
    for alloc in ["0-3 5", "0", "7-8 1 2-4", "0-0", "3-1", "2147483640-2147483647", "1 1 1", " 0 ", "-1"]:
        add("protocol", b"\x02" + alloc.encode())
    for js in ['{"a":1.5,"b":[true,null,"x"]}', '{"id":"w0!1","subtime":1e3,"res":2}', "[1,2,3]", '"\\u00e9"']:
        add("protocol", b"\x03" + js.encode())


def platform():
    add("platform", read("examples/platforms/cluster16.xml"))
    add("platform", """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="AS0" routing="Full">
  <prop id="zone_kind" value="cold"/>
  <host id="master_host" speed="100Mf"/>
  <host id="h1" speed="1Gf"><prop id="role" value="storage"/></host>
  <host id="h0" speed="1Gf" pstate="0"><prop id="watt_per_state" value="95:190"/></host>
  <cluster id="c" prefix="n" suffix="" radical="0-3,7" speed="1Gf" bw="10Gbps" lat="0us"/>
</zone></platform>
""")
    xml = read("tests/data/batsim-4.2.1/inputs/energy_platform_homogeneous_no_net_128.xml")
    add("platform", xml[:6000])  # the head of it: the whole is 119 kB


def workload():
    for rel in ["tests/data/traces/small_workload.json", "tests/data/batsim-4.2.1/inputs/wl20.json",
                "examples/workloads/kit_10h_80.json"]:
        add("workload", read(rel))
    add("workload", json.dumps({
        "nb_res": 4,
        "jobs": [{"id": "b", "subtime": 1, "res": 2, "profile": "p", "walltime": 10},
                 {"id": 1, "subtime": 1, "res": 1, "profile": "q", "extra": {"k": [1, 2]}},
                 {"id": "a", "subtime": 0.5, "res": 4, "profile": "p"}],
        "profiles": {"p": {"type": "delay", "delay": 2.5}, "q": {"type": "delay", "delay": 0, "ret": 3}}}))
    add("workload", '{"profiles":{"p":{"type":"delay","delay":1}},"jobs":[{"id":"1","subtime":0,"res":1,"profile":"p"}],"jobs":[]}')


def trace(vtime):
    for rel in ["tests/data/traces/small.trace", "tests/data/traces/bad_reply.trace"]:
        add("trace", read(rel))
    head = b"".join(read("tests/data/traces/cml_basic.trace").splitlines(keepends=True)[:40])
    add("trace", head)  # cut mid-run: no trailer
    if vtime:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "small.trace.zst")
            subprocess.run([vtime, "trace", "compress", os.path.join(ROOT, "tests/data/traces/small.trace"),
                            "-o", out], check=True, capture_output=True)
            with open(out, "rb") as f:
                add("trace", f.read())


def swf():
    sample = read("tests/workload/sample.swf")
    for opts in [b"\x00\x00\x00", b"\x03\x10\x05", b"\x2d\xc0\x85", b"\x61\x3f\x4f", b"\xff\xff\xff"]:
        add("swf", opts + sample)
    add("swf", b"\x01\x00\x00; MaxProcs: 64\n1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n2 x\n")


def values():
    for e in ["2024-05-01", "2024-05-01T12:00:00.123+02:00", "2024-05-01 12:00Z", "@1700000000.5", "1999-12-31T23:59:59-0130"]:
        add("values", b"\x00" + e.encode())
    for d in ["10", "1.5h", "2d", "30min", "0s", "1e3"]:
        add("values", b"\x01" + d.encode())
    for s in ["completed,failed", "1,0,5", "unknown,partial"]:
        add("values", b"\x01" + s.encode())
    for kind in range(5):
        for spec in ["1,2,5", "exact,timeout", "0ms:100ms:10ms", "log:1ms:1s:4", "0.5:2:0.5", "10ms,0.5s"]:
            add("values", bytes([2 + 4 * kind]) + spec.encode())


def slurm_extra():
    for rel in ["examples/slurm/backfill.conf", "examples/slurm/fcfs.conf"]:
        add("slurm_extra", read(rel))
    add("slurm_extra", "# a comment\nSchedulerType=sched/backfill\n\nPartitionName=big Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
                       "SchedulerParameters=bf_interval=30,default_queue_depth=100\n")
    add("slurm_extra", "SlurmctldPort=1234\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vtime", help="a built vtime, for the compressed trace")
    args = ap.parse_args()
    protocol()
    platform()
    workload()
    trace(args.vtime)
    swf()
    values()
    slurm_extra()
    for t in sorted(os.listdir(CORPUS)):
        print(f"{t}: {len(os.listdir(os.path.join(CORPUS, t)))} files")


if __name__ == "__main__":
    sys.exit(main())
