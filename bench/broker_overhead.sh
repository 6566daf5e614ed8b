#!/bin/sh
# Broker overhead (issue 3): round trips per second of a trivial event-based scheduler
# (bench/trivial_scheduler.py) directly against `vtime sim`, and through `vtime run` (broker +
# shim + idle detection), in the same run, as a ratio (target >= 0.8). Also the wall time of `vtime run` with periodic_fcfs --period 1 for each
# example workload (target < 1 s each) and its peak memory.
#
# Usage: bench/broker_overhead.sh BUILD_DIR     (a release build with the examples built)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
vt=$build/cli/vtime
pfcfs=$build/examples/periodic_fcfs/periodic_fcfs
plat=$here/../examples/platforms/cluster16.xml
wl=$here/../examples/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
rt() {  # seconds between two `now` readings
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

# A trivial event-based scheduler (FCFS, blocking recv, no timers), both ways, same workload:
# the same number of round trips on each side.
w=$wl/spaced_200_delay170.json
triv=$here/trivial_scheduler.py
ep="ipc://$tmp/direct"
/usr/bin/python3 "$triv" "$ep" & sched=$!
t0=$(now); "$vt" sim -p "$plat" -w "$w" -e "$tmp/direct" -s "$ep" 2> "$tmp/direct.err"; t1=$(now)
wait $sched
direct=$(rt "$t0" "$t1")
t0=$(now); "$vt" run -p "$plat" -w "$w" -e "$tmp/broker" -- /usr/bin/python3 "$triv" '{endpoint}' 2> "$tmp/broker.err"; t1=$(now)
broker=$(rt "$t0" "$t1")
msgs=$(sed -n 's/.* \([0-9][0-9]*\) messages.*/\1/p' "$tmp/broker.err")
cmp -s "$tmp/direct_jobs.csv" "$tmp/broker_jobs.csv" || { echo "schedules differ between direct and broker runs"; exit 1; }
awk -v d="$direct" -v b="$broker" -v m="$msgs" 'BEGIN {
  printf "round trips: %d (spaced workload, trivial FCFS scheduler)\n", m
  printf "direct:  %.3f s, %.0f round trips/s (start-up included)\n", d, m / d
  printf "broker:  %.3f s, %.0f round trips/s (start-up included)\n", b, m / b
  r = d / b; printf "RESULT broker_overhead_ratio %.3f target >= 0.8 %s\n", r, (r >= 0.8 ? "PASS" : "FAIL") }'

for name in spaced_200_delay170 burst_200_delay170 kit_10h_80; do
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$vt" run -q -p "$plat" -w "$wl/$name.json" -e "$tmp/$name" -- \
    "$pfcfs" -s '{endpoint}' --period 1
  read -r secs kb < "$tmp/time"
  awk -v n="$name" -v s="$secs" -v k="$kb" 'BEGIN {
    printf "RESULT vtime_run_periodic_fcfs_%s %.2f s (peak RSS of vtime %d KiB) target < 1 s %s\n", n, s, k, (s < 1 ? "PASS" : "FAIL") }'
done
