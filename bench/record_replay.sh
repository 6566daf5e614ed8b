#!/bin/sh
# Recorder benchmarks (issue 4), all in one run:
#  1. recording overhead: `vtime run` of periodic_fcfs --period 1 on the spaced workload with and
#     without --record, interleaved, medians of 5 (target: <= 10% more wall time);
#  2. replay vs the recorded run: wall time of `vtime replay` of that trace (no simulator);
#  3. a trace of >= 100,000 messages (periodic_fcfs --period 0.05 on the spaced workload): trace
#     bytes per message, plain and zstd; the replay engine's own throughput on it
#     (bench_trace_throughput: read + parse + compare every record; target >= 50,000
#     messages/s), plain and compressed; and the end-to-end replay with the real scheduler.
#
# Usage: bench/record_replay.sh BUILD_DIR     (a release build with the examples and benchmarks)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
vt=$build/cli/vtime
pfcfs=$build/examples/periodic_fcfs/periodic_fcfs
plat=$here/../examples/platforms/cluster16.xml
w=$here/../examples/workloads/spaced_200_delay170.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
rt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$tmp/plain"; : > "$tmp/rec"
for i in 1 2 3 4 5; do
  t0=$(now); "$vt" run -q -p "$plat" -w "$w" -e "$tmp/p$i" -- "$pfcfs" -s '{endpoint}' --period 1; t1=$(now)
  rt "$t0" "$t1" >> "$tmp/plain"; echo >> "$tmp/plain"
  t0=$(now); "$vt" run -q -p "$plat" -w "$w" -e "$tmp/r$i" --record "$tmp/r$i.trace" -- "$pfcfs" -s '{endpoint}' --period 1; t1=$(now)
  rt "$t0" "$t1" >> "$tmp/rec"; echo >> "$tmp/rec"
done
plain=$(median < "$tmp/plain"); rec=$(median < "$tmp/rec")
echo "without --record: $(tr '\n' ' ' < "$tmp/plain")-> median $plain s"
echo "with --record:    $(tr '\n' ' ' < "$tmp/rec")-> median $rec s"
awk -v p="$plain" -v r="$rec" 'BEGIN { o = (r / p - 1) * 100;
  printf "RESULT recording_overhead %.1f %% target <= 10 %% %s\n", o, (o <= 10 ? "PASS" : "FAIL") }'

: > "$tmp/replay"
for i in 1 2 3; do
  t0=$(now); "$vt" replay "$tmp/r1.trace" -- "$pfcfs" -s '{endpoint}' --period 1 > /dev/null; t1=$(now)
  rt "$t0" "$t1" >> "$tmp/replay"; echo >> "$tmp/replay"
done
rep=$(median < "$tmp/replay")
awk -v r="$rec" -v x="$rep" 'BEGIN {
  printf "RESULT replay_vs_recorded %.3f s / %.3f s = %.2f (less wall time than the recorded run: %s)\n", x, r, x / r, (x < r ? "PASS" : "FAIL") }'

big=$tmp/big.trace
t0=$(now); "$vt" run -q -p "$plat" -w "$w" -e "$tmp/big" --record "$big" -- "$pfcfs" -s '{endpoint}' --period 0.05; t1=$(now)
bigrec=$(rt "$t0" "$t1")
msgs=$(grep -c '"type":"msg"' "$big")
bytes=$(stat -c %s "$big")
"$vt" trace compress "$big" -o "$big.zst" > /dev/null
zbytes=$(stat -c %s "$big.zst")
awk -v m="$msgs" -v b="$bytes" -v z="$zbytes" -v s="$bigrec" 'BEGIN {
  printf "big trace: %d messages (%s), %d records bytes, recorded in %.1f s\n", m, (m >= 100000 ? ">= 100,000" : "TOO FEW"), b, s
  printf "RESULT trace_bytes_per_message plain %.0f zstd %.1f (ratio %.1fx)\n", b / m, z / m, b / z }'
echo "replay engine, plain trace:"; "$build/bench/bench_trace_throughput" "$big"
echo "replay engine, zstd trace:"; "$build/bench/bench_trace_throughput" "$big.zst"
t0=$(now); "$vt" replay "$big" -- "$pfcfs" -s '{endpoint}' --period 0.05 > "$tmp/big.replay"; t1=$(now)
bigrep=$(rt "$t0" "$t1")
cat "$tmp/big.replay"
awk -v m="$msgs" -v s="$bigrep" -v r="$bigrec" 'BEGIN {
  printf "RESULT replay_end_to_end_messages_per_s %.0f (%.1f s, recorded run %.1f s; bounded by the scheduler and idle detection)\n", m / s, s, r }'
