#!/bin/sh
# A million jobs (issue 14): `vtime sim` + event_fcfs directly, and the same through `vtime run`
# (broker, shim, idle detection, embedded simulator), on a synthetic workload of JOBS jobs on
# HOSTS hosts. Reports wall time, jobs/s, messages, the peak resident memory of the simulator
# (and of the broker, which shares the `vtime run` process with it), and the protocol's floor:
# the run's messages x a bare ZeroMQ round trip (bench_zmq_round_trip, measured in the same run,
# before and after). Targets: peak <= 100 MB; direct wall <= 1.2 x the floor; `vtime run` <= 1.5
# x direct. Also times the conversion of the trace (target: 1 M SWF lines in <= 10 s).
#
# Usage: bench/scale.sh BUILD_DIR        (a release build with bench_zmq_round_trip and the examples)
#        JOBS=200000 HOSTS=1024 bench/scale.sh BUILD_DIR
# Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
set -eu
build=$1
jobs=${JOBS:-1000000}
util=${UTIL:-0.4}
serial=${SERIAL:-0.95}
hosts=${HOSTS:-1024}
vt=$build/cli/vtime
efcfs=$build/examples/event_fcfs/event_fcfs
rt=$build/bench/bench_zmq_round_trip
for f in "$vt" "$efcfs" "$rt"; do
  [ -x "$f" ] || { echo "scale.sh: $f is not built" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
status=0

# The workload: mostly serial jobs (as on real machines) at an offered utilisation FCFS keeps up
# with, so that the jobs in flight stay few and memory shows what the simulator holds per job.
"$vt" workload synth -o "$tmp/w.swf" -n "$jobs" --procs "$hosts" --seed 1 --utilisation "$util" \
  --serial-fraction "$serial" --min-runtime 10 --max-runtime 2h
t0=$(now)
"$vt" workload from-swf "$tmp/w.swf" -o "$tmp/w.json" --hosts "$hosts" -q
t1=$(now)
conv=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
lines=$(grep -vc '^;' "$tmp/w.swf")
echo "conversion: $lines SWF lines in $conv s (target <= 10 s per million)"
awk -v s="$conv" -v n="$lines" 'BEGIN { exit !(s <= 10 * n / 1e6) }' || status=1

floor1=$("$rt" 200000 | awk '{ print $2 }')

# Direct: the simulator and the scheduler, nothing else.
ep="ipc://$tmp/direct.sock"
"$efcfs" -s "$ep" 2> "$tmp/efcfs.err" & sched=$!
t0=$(now)
/usr/bin/time -f "%M" -o "$tmp/direct.rss" "$vt" sim --hosts "$hosts" -w "$tmp/w.json" -e "$tmp/direct" -s "$ep" --stats 2> "$tmp/direct.err"
t1=$(now)
wait $sched
direct=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
msgs=$(sed -n 's/.* \([0-9][0-9]*\) messages.*/\1/p' "$tmp/direct.err")
direct_rss=$(sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p' "$tmp/direct.err")

# Through vtime run: broker + shim + idle detection + the embedded simulator.
t0=$(now)
"$vt" run --hosts "$hosts" -w "$tmp/w.json" -e "$tmp/run" -- "$efcfs" -s '{endpoint}' 2> "$tmp/run.err"
t1=$(now)
run=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
run_rss=$(sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p' "$tmp/run.err")
run_msgs=$(sed -n 's/.* \([0-9][0-9]*\) messages.*/\1/p' "$tmp/run.err")
cmp -s "$tmp/direct_jobs.csv" "$tmp/run_jobs.csv" || { echo "scale.sh: the two schedules differ"; status=1; }

floor2=$("$rt" 200000 | awk '{ print $2 }')
inflight=$(awk -F, 'NR > 1 && $9 != "" { print $4, 1; print $11, -1 }' "$tmp/direct_jobs.csv" | sort -g -k1,1 -k2,2 |
           awk '{ c += $2; if (c > m) m = c } END { print m }')
makespan=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "makespan") k = i } NR == 2 { print $k }' "$tmp/direct_schedule.csv")

awk -v n="$jobs" -v h="$hosts" -v m="$msgs" -v rm="$run_msgs" -v d="$direct" -v r="$run" -v f1="$floor1" -v f2="$floor2" \
    -v dr="$direct_rss" -v rr="$run_rss" -v inf="$inflight" -v mk="$makespan" 'BEGIN {
  f = (f1 + f2) / 2; floor = m * f / 1e6
  printf "workload: %d jobs on %d hosts, makespan %.0f s, at most %d jobs in flight\n", n, h, mk, inf
  printf "ZeroMQ round trip: %.1f us (%.1f before, %.1f after); floor for %d messages: %.1f s\n", f, f1, f2, m, floor
  printf "direct (vtime sim + event_fcfs): %.1f s, %.0f jobs/s, %d messages, %.2f x the floor (target <= 1.2), simulator peak RSS %.1f MB\n", d, n / d, m, d / floor, dr
  printf "vtime run (+ broker, shim):      %.1f s, %.0f jobs/s, %d messages, %.2f x direct (target <= 1.5), simulator + broker peak RSS %.1f MB\n", r, n / r, rm, r / d, rr
  printf "anchors (jobs/s): AccaSim ~14,900 (in-process), Alea ~10,400, Batsim ~3,200 (AccaSim paper, Table 1)\n"
  ok = (dr <= 100 && rr <= 100 && d / floor <= 1.2 && r / d <= 1.5)
  exit !ok
}' || status=1
exit $status
