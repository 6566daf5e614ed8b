#!/usr/bin/env python3
"""Fit vtime-slurm's latency models on every kept Slurm reference at once (issue 41).

For each combination of the options given (e.g. `--try "--sleep-latency=170us --bridge-arg
--job-start-latency=17ms"`), runs `vtime slurm` once on every workload and configuration of
bench/references/slurm/ that has real runs (refN.CONF.real.json), and counts the jobs whose start
is off (beyond max(1 s, the real runs' spread) of their median, as bench/slurm_reference.py and
`vtime validate` judge). vtime runs are deterministic, so one run each suffices and the machine's
load does not change the result; no real run and no root beyond what `vtime slurm` needs.

Prints one line per combination: jobs off per reference and in all; with --detail, which jobs,
and the latencies vtime's own slurmctld.log shows for the first reference.
Usage:
  bench/slurm_fit.py --vtime build/release/cli/vtime \
      --try "" --try "--sleep-latency 200us" --try "-- --job-start-latency 22ms"
Each --try is split like a shell line; words before a `--` go to `vtime slurm`, words after it to
vtime-slurm. Exit status: 0 when done, 2 when a run could not be made.
"""
import argparse
import glob
import os
import shlex
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_reference as sr  # noqa: E402
import reference_report as report  # noqa: E402
import slurm_validation as sv  # noqa: E402 (SetupError, latencies)


def references(directory, only):
    """(name, workload, conf file, real file) for every kept real run set."""
    out = []
    for real in sorted(glob.glob(os.path.join(directory, "*.real.json"))):
        base = os.path.basename(real)[: -len(".real.json")]  # refN.CONF
        wl_name, conf = base.rsplit(".", 1)
        if only and base not in only:
            continue
        out.append((base, os.path.join(directory, wl_name + ".json"), os.path.join(directory, conf + ".conf"), real))
    return out


def run_one(vtime, ref, vtime_args, bridge_args, work):
    """The jobs of one reference whose vtime start is off, as "id:deviation", and the latencies
    vtime's slurmctld.log shows (sv.slurm_latencies)."""
    name, wl, conf, real_path = ref
    jobs, nb_res = sr.load_workload(wl)
    _, real = report.load_real(real_path)
    v = sr.vtime_run(vtime, wl, jobs, conf, nb_res or max(j["res"] for j in jobs), work, name.replace(".", "_"),
                     bridge_args, vtime_args)
    rows = report.compare(jobs, real, v["slurm"], v["batsim"], quiet=True)
    return ["%s:%+g" % (r["job"], r["deviation"]) for r in rows if r["off"]], v["latencies"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vtime", required=True, metavar="PATH", help="the vtime binary")
    ap.add_argument("--try", dest="tries", action="append", default=[], metavar="ARGS",
                    help="one combination of options (repeatable; default: vtime slurm's defaults)")
    ap.add_argument("--refs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "references", "slurm"),
                    help="the folder of references (default bench/references/slurm)")
    ap.add_argument("--only", action="append", default=[], metavar="REF.CONF", help="only this reference (repeatable)")
    ap.add_argument("--detail", action="store_true", help="print which jobs are off")
    a = ap.parse_args()
    refs = references(a.refs, a.only)
    if not refs:
        print("slurm_fit: no references in %s" % a.refs, file=sys.stderr)
        return 2
    tries = a.tries or [""]
    print("%-50s %s | all" % ("options", " ".join("%-9s" % r[0][:9] for r in refs)), flush=True)
    try:
        for t in tries:
            words = shlex.split(t)
            vargs, bargs = (words[: words.index("--")], words[words.index("--") + 1:]) if "--" in words else (words, [])
            with tempfile.TemporaryDirectory(prefix="vtime-slurm-fit-") as work:
                runs = [run_one(os.path.abspath(a.vtime), r, vargs, bargs, work) for r in refs]
            offs = [o for o, _ in runs]
            print("%-50s %s | %d" % (t or "(defaults)", " ".join("%-9d" % len(o) for o in offs),
                                     sum(len(o) for o in offs)), flush=True)
            if a.detail:
                print("    vtime's latencies (%s): %s" % (refs[0][0], sv.describe_latencies(runs[0][1])), flush=True)
                for r, o in zip(refs, offs):
                    if o:
                        print("    %s: %s" % (r[0], " ".join(o)), flush=True)
    except sv.SetupError as e:
        print("slurm_fit: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
