#!/bin/sh
# vtime-k8s's speed and determinism (issue 21): the shipped workloads on cluster16 scheduled by
# Kubernetes' own kube-scheduler (with its etcd and kube-apiserver, unmodified) in virtual time.
#
# For each workload (default: spaced_200_delay170 burst_200_delay170 kit_10h_80; WORKLOADS=...)
# and each of ROUNDS runs (default 2): wall time, speed-up over real time (the simulated span),
# Batsim messages and clock advances, the peak resident size of the largest process of the run (the
# API server: what /usr/bin/time reports for vtime and its descendants), and whether every run's
# _jobs.csv is byte-identical to the first's. The anchors: real time is the simulated span; the
# Batkube thesis reports "nearly two minutes" for spaced_200_delay170 (with a 50 ms timeout, and
# schedules that moved from run to run).
# Usage: bench/k8s_speed.sh BUILD_DIR     ROUNDS=N WORKLOADS="spaced_200_delay170" bench/k8s_speed.sh BUILD_DIR
# Exit status: 0 every run completed every job and the runs of a workload agreed, 1 otherwise, 2
# the benchmark could not run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
rounds=${ROUNDS:-2}
workloads=${WORKLOADS:-"spaced_200_delay170 burst_200_delay170 kit_10h_80"}
vt=$build/cli/vtime
[ -x "$vt" ] && [ -x "$build/k8s/vtime-k8s" ] || { echo "k8s_speed.sh: build vtime and vtime-k8s first" >&2; exit 2; }
command -v etcd >/dev/null || { echo "k8s_speed.sh: etcd is not installed (etcd-server)" >&2; exit 2; }
plat=$here/../examples/platforms/cluster16.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
printf '%-22s %5s %9s %9s %8s %9s %10s %9s %s\n' workload run wall_s sim_s speedup messages advances peak_MB same
for w in $workloads; do
  wl=$here/../examples/workloads/$w.json
  for r in $(seq 1 "$rounds"); do
    p=$tmp/$w-$r
    /usr/bin/time -f '%e %M' -o "$p.time" "$vt" k8s -p "$plat" -w "$wl" -e "$p" >"$p.out" 2>"$p.err" || {
      echo "k8s_speed.sh: $w run $r failed:" >&2; tail -5 "$p.err" >&2; status=1; continue; }
    line=$(grep '^vtime run:' "$p.err" | tail -1)
    sim=$(echo "$line" | sed -n 's/.*simulated \([0-9.]*\) s.*/\1/p')
    msgs=$(echo "$line" | sed -n 's/.* \([0-9]*\) messages.*/\1/p')
    adv=$(echo "$line" | sed -n 's/.* \([0-9]*\) advances.*/\1/p')
    wall=$(cut -d' ' -f1 "$p.time")
    peak=$(awk '{ printf "%.0f", $2 / 1024 }' "$p.time")
    bad=$(awk -F, 'NR > 1 && $8 != "COMPLETED_SUCCESSFULLY"' "${p}_jobs.csv" 2>/dev/null | wc -l)
    [ "$bad" -eq 0 ] || { echo "k8s_speed.sh: $w run $r: $bad jobs did not complete" >&2; status=1; }
    same=yes
    if [ "$r" -gt 1 ]; then cmp -s "$tmp/$w-1_jobs.csv" "${p}_jobs.csv" || { same=NO; status=1; }; fi
    printf '%-22s %5s %9s %9s %8.0f %9s %10s %9s %s\n' "$w" "$r" "$wall" "$sim" "$(echo "$sim / $wall" | bc -l)" \
      "$msgs" "$adv" "$peak" "$same"
  done
done
exit $status
