"""Job-by-job comparison of vtime with independent real-time references (issue 41), shared by the
Slurm and Kubernetes harnesses (bench/slurm_reference.py, bench/k8s_reference.py) and so by
`vtime validate`.

A job passes when vtime's start is within max(1 s, the real runs' spread) of the real runs'
median start, the spread being the range of that job's real starts (issue 41's acceptance).
"""
import csv
import json
import shutil
import statistics
import subprocess
import tempfile
import os


def log(msg):
    print(msg, flush=True)


def add_options(ap, what):
    """The options both harnesses take besides their scheduler's own: -w, --runs, --vtime, --keep,
    --out, --csv, --plot, --bridge-arg, --vtime-arg, --real-from. `what`: "slurm" or "k8s"."""
    ap.add_argument("-w", "--workload", required=True, help="Batsim workload (delay profiles)")
    ap.add_argument("--runs", type=int, default=3, help="real-time runs (default 3)")
    ap.add_argument("--vtime", metavar="PATH", help="also run `vtime %s` twice and compare" % what)
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    ap.add_argument("--out", metavar="FILE", help="write every run's starts and ends as JSON")
    ap.add_argument("--csv", metavar="FILE", help="with --vtime: per-job deviations as CSV")
    ap.add_argument("--plot", metavar="FILE.png", help="with --vtime: start-time scatter and deviation histogram")
    ap.add_argument("--bridge-arg", action="append", default=[], metavar="ARG",
                    help="a vtime-%s option for the vtime runs (repeatable), e.g. --bridge-arg=--submit-order=batsim"
                    % what)
    ap.add_argument("--vtime-arg", action="append", default=[], metavar="ARG",
                    help="a `vtime %s` option for the vtime runs (repeatable), e.g. --vtime-arg=--timer-slack=50us"
                    % what)
    ap.add_argument("--real-from", metavar="FILE", help="take the real runs from an earlier --out (same workload "
                    "and configuration) instead of running them")


def load_real(path):
    """An earlier --out file: (its JSON, its real runs as [{job: (start, end)}])."""
    with open(path) as f:
        saved = json.load(f)
    return saved, [{k: tuple(v) for k, v in r.items()} for r in saved["real"]]


def save(path, result):
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)


def compare(jobs, real, vt_start, vt_batsim, what="vtime", quiet=False):
    """One row per job: the real starts, their median and spread, vtime's start (`vt_start`: what
    is compared, e.g. Slurm's own record; `vt_batsim`: Batsim's start, shown), the deviation and
    whether it is beyond max(1 s, spread). `real` is a list of {job id: (start, end)}. Printed as a
    table unless `quiet`."""
    say = (lambda msg: None) if quiet else log
    say("\n%5s %6s %4s | %-30s %8s %7s | %9s %10s %7s" % (
        "job", "sub", "res", "real starts", "median", "spread", what, "vt batsim", "dev"))
    rows = []
    for j in jobs:
        starts = sorted(r[j["id"]][0] for r in real)
        med = statistics.median(starts)
        spread = starts[-1] - starts[0]
        vs = vt_start.get(j["id"], (float("nan"),))[0]
        vb = vt_batsim.get(j["id"], (float("nan"),))[0]
        dev = vs - med
        bad = not abs(dev) <= max(1.0, spread)
        rows.append({"job": j["id"], "subtime": j["subtime"], "res": j["res"], "real_starts": starts, "median": med,
                     "spread": spread, "vtime": vs, "vtime_batsim": vb, "deviation": dev, "off": bad})
        say("%5s %6g %4d | %-30s %8.3f %7.3f | %9.3f %10.3f %+7.3f%s" % (
            j["id"], j["subtime"], j["res"], ",".join("%.6g" % s for s in starts), med, spread, vs, vb, dev,
            "  <-- off" if bad else ""))
    return rows


def summary(rows):
    """(jobs off, max |deviation|, mean |deviation|, max spread, mean spread)."""
    devs = [abs(r["deviation"]) for r in rows]
    spreads = [r["spread"] for r in rows]
    return (sum(1 for r in rows if r["off"]), max(devs), sum(devs) / len(devs), max(spreads),
            sum(spreads) / len(spreads))


def write_csv(path, rows, what="vtime_start"):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "subtime", "res", "real_starts", "real_median", "real_spread", what,
                    "vtime_start_batsim", "deviation", "off"])
        for r in rows:
            w.writerow([r["job"], "%g" % r["subtime"], r["res"], " ".join("%.6g" % s for s in r["real_starts"]),
                        "%.6g" % r["median"], "%.6g" % r["spread"], "%.6g" % r["vtime"], "%.6f" % r["vtime_batsim"],
                        "%.6g" % r["deviation"], int(r["off"])])


GNUPLOT = """set terminal png size 1200,520
set output '%(out)s'
set multiplot layout 1,2 title "%(title)s: vtime against real time\\n%(conf)s" noenhanced
set xlabel 'real start: median of the real runs (s)'
set ylabel 'vtime start (s)'
set key top left
set xrange [0:%(top)g]
set yrange [0:%(top)g]
plot x with lines lc rgb '#888888' title 'equal', \\
     x+1 with lines dt 2 lc rgb '#bbbbbb' notitle, x-1 with lines dt 2 lc rgb '#bbbbbb' notitle, \\
     '%(data)s' using 1:2:3:4 with xerrorbars pt 7 lc rgb '#1f77b4' title 'job (bar: the real runs range)'
set xlabel 'vtime start - real median (s)'
set ylabel 'jobs'
set autoscale
set yrange [0:%(hist_top)d]
set boxwidth 0.8
set style fill solid 0.6
plot '%(hist)s' using 1:2 with boxes lc rgb '#1f77b4' notitle
unset multiplot
"""


def plot(path, rows, title, conf, tool="reference"):
    """Two panels with gnuplot (Debian's gnuplot-nox): each job's vtime start against the real runs'
    median (bars: the real runs' range; dashed: 1 s either side), and the deviations' histogram
    (whole seconds)."""
    if not shutil.which("gnuplot"):
        log("%s: gnuplot is not installed (Debian: gnuplot-nox); no figure" % tool)
        return
    d = tempfile.mkdtemp(prefix="vtime-validate-plot-")
    try:
        data = os.path.join(d, "jobs.dat")
        with open(data, "w") as f:
            for r in rows:
                f.write("%g %g %g %g\n" % (r["median"], r["vtime"], r["real_starts"][0], r["real_starts"][-1]))
        counts = {}
        for r in rows:
            b = int(round(r["deviation"]))
            counts[b] = counts.get(b, 0) + 1
        hist = os.path.join(d, "hist.dat")
        with open(hist, "w") as f:
            for b in range(min(counts) - 1, max(counts) + 2):
                f.write("%d %d\n" % (b, counts.get(b, 0)))
        top = max(max(r["real_starts"][-1], r["vtime"]) for r in rows) * 1.05 + 1
        script = os.path.join(d, "plot.gp")
        with open(script, "w") as f:
            f.write(GNUPLOT % {"out": os.path.abspath(path), "title": title, "conf": conf.replace('"', "'"),
                               "top": top, "data": data, "hist": hist,
                               "hist_top": max(counts.values()) + 1})
        r = subprocess.run(["gnuplot", script], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            log("%s: gnuplot failed: %s" % (tool, r.stderr.strip()[-500:]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def report(a, jobs, real, vt_start, vt_batsim, same, wall, conf, tool, what="vtime", csv_column="vtime_start"):
    """The whole comparison of a harness's --vtime run: the table, the summary line, the CSV
    (a.csv) and the figure (a.plot) when asked for. Returns the exit status: 0 when every job is
    within and the vtime runs are identical, 1 otherwise."""
    rows = compare(jobs, real, vt_start, vt_batsim, what)
    off, dmax, dmean, smax, smean = summary(rows)
    log("\njobs off (start beyond max(1 s, real spread) from the real median): %d of %d; max/mean |dev| "
        "%.3f/%.3f s; real spread max/mean %.3f/%.3f s; vtime runs %s; vtime wall %.1f s"
        % (off, len(jobs), dmax, dmean, smax, smean, "identical" if same else "DIFFERENT", wall))
    if a.csv:
        write_csv(a.csv, rows, csv_column)
        log("per-job deviations: %s" % a.csv)
    if a.plot:
        plot(a.plot, rows, os.path.basename(a.workload), conf, tool)
        log("figure: %s" % a.plot)
    return 0 if off == 0 and same else 1
