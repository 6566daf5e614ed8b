#!/usr/bin/python3
"""Prints the table of docs/studies/timeout.md from sweeps' summary.csv files.

usage: timeout_table.py LABEL=SWEEP_DIR ...     (e.g. periodic_fcfs=study/periodic)
"""
import csv
import os
import sys


def num(x, fmt="%.2f"):
    return fmt % float(x) if x not in ("", None) else "-"


print("| scheduler | workload | timeout (ms) | runs ok/all | hangs | makespan vs exact (s) | mean wait vs exact (s) "
      "| mean \\|start delta\\| (s) | jobs late | wall (s) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    with open(os.path.join(path, "summary.csv")) as f:
        for r in csv.DictReader(f):
            exact = r["reference"] == "1"
            print("| %s | %s | %s | %s/%s | %s | %s | %s | %s | %s | %s |" % (
                label, r["workload"], "exact" if exact else r["timeout"], r["ok"], r["runs"], r["hangs"],
                "0 (%s)" % num(r["makespan_mean"], "%.0f") if exact else num(r["makespan_vs_exact"]),
                "0 (%s)" % num(r["mean_waiting_time_mean"]) if exact else num(r["mean_waiting_time_vs_exact"]),
                num(r["mean_abs_start_delta_mean"]), num(r["jobs_late_mean"], "%.1f"), num(r["wall_s_mean"], "%.1f")))
