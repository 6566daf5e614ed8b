#!/bin/sh
# Runs the benchmarks of issue 2 that are already built in BUILD_DIR (builds nothing) and prints
# a summary: one line per target with the measured value and PASS/FAIL.
#
# Usage: bench/run_all.sh [BUILD_DIR]     (default: build-bench next to this script's folder)
# Build first:
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-bench -j2 --target bench_clock_compare bench_wake_latency bench_idle_detect
# Exit status: 0 every target met, 1 a target missed, 2 a benchmark is missing or could not run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build-bench}
dir=$build/bench
limit=60  # seconds of real time per benchmark; each one stops itself well before

for b in bench_clock_compare bench_clock_reads bench_sleeper bench_wake_latency bench_idle_detect; do
  if [ ! -x "$dir/$b" ]; then
    echo "run_all.sh: $dir/$b is not built (see the build commands at the top of this script)" >&2
    exit 2
  fi
done

echo "machine: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)," \
     "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

log=$(mktemp)
rcf=$(mktemp)
trap 'rm -f "$log" "$rcf"' EXIT
status=0
for b in bench_clock_compare bench_wake_latency bench_idle_detect; do
  echo
  echo "== $b"
  start=$(date +%s.%N)
  { timeout -k 5 $limit "$dir/$b"; echo $? > "$rcf"; } | tee -a "$log"
  rc=$(cat "$rcf")
  end=$(date +%s.%N)
  awk -v b="$b" -v rc="$rc" -v s="$start" -v e="$end" 'BEGIN { printf "(%s: exit %d, %.1f s)\n", b, rc, e - s }'
  if [ "$rc" -ge 2 ]; then
    echo "RESULT $b did-not-run FAIL" >> "$log"
    status=2
  elif [ "$rc" -eq 1 ] && [ "$status" -eq 0 ]; then
    status=1
  fi
done

echo
echo "== summary"
grep '^RESULT' "$log" | sed 's/^RESULT //'
exit $status
