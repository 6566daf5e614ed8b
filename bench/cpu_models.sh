#!/bin/sh
# The CPU-time models side by side (issue 18): what each costs, measured in one run, interleaved.
#
# 1. The clock read under each model: bench_clock_reads (clock_gettime(CLOCK_MONOTONIC) in
#    batches, timed with a raw system call no preload sees) natively and under `vtime exec` with
#    --cpu-model zero, calls (--cpu-cost 1ns: the hot path, one payment per million reads),
#    calls at the default cost (a tight loop on the clock IS a busy-wait: it pays a virtual sleep
#    every hundred reads past its burst, so this is the amortised cost of spinning), and real.
#    Minimum ns per read over ROUNDS interleaved rounds. Targets: calls (1ns) within 10% of zero's
#    read, zero faster than the native vDSO read; real (whose running clock must read real time:
#    the CPU's counter where the kernel trusts it, one rdtsc, else the vDSO) faster than the
#    native read where the counter is used, within 30% of it otherwise. `rdtsc` alone, the floor
#    of any running clock, is printed beside them (bench_clock_reads' BM_rdtsc).
# 2. The patterns that used to hang, under the default model (wall time of the whole
#    `vtime exec`, Python's start included): a C loop and a Python loop on the clock for 100 ms,
#    subprocess.communicate(timeout=5) on a child that never answers. Target: each under 1 s.
# 3. CPython's own tests about time (libpython3.11-testsuite), natively and under each model, as
#    nobody: wall time of each module and of the whole, and the ratio to native.
#
# Usage: bench/cpu_models.sh BUILD_DIR       ROUNDS=N (default 3) bench/cpu_models.sh BUILD_DIR
# Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
rounds=${ROUNDS:-3}
vt=$build/cli/vtime
reads=$build/bench/bench_clock_reads
spin=$build/tests/cpu/spin_clock
py=/usr/bin/python3
[ -x "$vt" ] && [ -x "$reads" ] && [ -x "$spin" ] || { echo "cpu_models.sh: build vtime, bench_clock_reads and spin_clock first" >&2; exit 2; }
[ -f /usr/lib/python3.11/test/test_time.py ] || { echo "cpu_models.sh: install libpython3.11-testsuite" >&2; exit 2; }
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
status=0

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }

# --- 1. clock reads -------------------------------------------------------------------------
read_ns() {  # prints the minimum ns_per_call of BM_clock_gettime_monotonic over the repetitions
  "$@" "$reads" --benchmark_filter=BM_clock_gettime_monotonic --benchmark_format=json \
    --benchmark_min_time=0.2 --benchmark_repetitions=3 2>/dev/null |
    $py -c 'import json,sys; d=json.load(sys.stdin); print(min(b["ns_per_call"] for b in d["benchmarks"] if b.get("run_type")=="iteration"))'
}
modes="native zero calls_1ns calls real"
for m in $modes; do : > "$tmp/read_$m"; done
r=1
while [ $r -le "$rounds" ]; do
  for m in $modes; do
    case $m in
      native) v=$(read_ns env) ;;
      zero) v=$(read_ns "$vt" exec --cpu-model zero --) ;;
      calls_1ns) v=$(read_ns "$vt" exec --cpu-model calls --cpu-cost 1ns --) ;;
      calls) v=$(read_ns "$vt" exec --cpu-model calls --) ;;
      real) v=$(read_ns "$vt" exec --cpu-model real --) ;;
    esac
    echo "$v" >> "$tmp/read_$m"
  done
  r=$((r + 1))
done
echo "clock_gettime(CLOCK_MONOTONIC), ns per read (minimum of $rounds interleaved rounds x 3 repetitions):"
min_of() { sort -g "$1" | head -1; }
z=$(min_of "$tmp/read_zero")
for m in $modes; do
  v=$(min_of "$tmp/read_$m")
  printf '  %-10s %8.2f ns   x%.2f of zero\n' "$m" "$v" "$(echo "$v / $z" | bc -l)"
done
v=$(min_of "$tmp/read_calls_1ns")
if [ "$(echo "$v > $z * 1.10" | bc -l)" = 1 ]; then echo "  TARGET MISSED: calls' read is more than 10% slower than zero's"; status=1; fi
n=$(min_of "$tmp/read_native")
# While the clock runs (real, busy tree) a read must read real time: the counter, or the vDSO.
v=$(min_of "$tmp/read_real")
if [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ]; then
  if [ "$(echo "$v >= $n" | bc -l)" = 1 ]; then echo "  TARGET MISSED: real's read (the counter) is not faster than the native vDSO read"; status=1; fi
elif [ "$(echo "$v > $n * 1.30" | bc -l)" = 1 ]; then
  echo "  TARGET MISSED: real's read is more than 30% slower than the native vDSO read"; status=1
fi
t=$("$reads" --benchmark_filter=BM_rdtsc --benchmark_format=json --benchmark_min_time=0.2 --benchmark_repetitions=3 2>/dev/null |
  $py -c 'import json,sys; d=json.load(sys.stdin); print(min(b["ns_per_call"] for b in d["benchmarks"] if b.get("run_type")=="iteration"))' || echo "")
[ -n "$t" ] && printf '  %-10s %8.2f ns   (the floor of a running clock)\n' rdtsc "$t"
if [ "$(echo "$z >= $n" | bc -l)" = 1 ]; then echo "  TARGET MISSED: the virtual read is not faster than the vDSO"; status=1; fi

# --- 2. the patterns that used to hang ----------------------------------------------------------
cat > "$tmp/spin.py" <<'EOF'
import time
d = time.time() + 0.1
while time.time() < d:
    pass
EOF
echo "patterns under the default model (wall s of the whole vtime exec; target < 1 s):"
for name in c_spin python_spin communicate; do
  case $name in
    c_spin) cmd="$spin" ;;
    python_spin) cmd="$py $tmp/spin.py" ;;
    communicate) cmd="$py $here/../tests/cpu/communicate_timeout.py" ;;
  esac
  best=
  r=1
  while [ $r -le "$rounds" ]; do
    t0=$(now)
    $nobody "$vt" exec -- $cmd >/dev/null 2>&1 || { echo "  $name failed"; status=1; }
    t=$(elapsed "$t0" "$(now)")
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
    r=$((r + 1))
  done
  printf '  %-12s %6.3f s\n' "$name" "$best"
  if [ "$(echo "$best >= 1" | bc -l)" = 1 ]; then echo "  TARGET MISSED: $name took a second or more"; status=1; fi
done

# --- 3. CPython's tests -------------------------------------------------------------------------
mods="test_time test_sched test_selectors test_timeout test_epoll test_poll test_select test_thread test_asyncio.test_tasks"
echo "CPython's tests (wall s, one run each, modes interleaved per module; as nobody):"
printf '  %-26s %9s %9s %9s %9s\n' module native zero calls real
for mode in native zero calls real; do echo 0 > "$tmp/total_$mode"; done
for mod in $mods; do
  line=$(printf '  %-26s' "$mod")
  for mode in native zero calls real; do
    t0=$(now)
    if [ "$mode" = native ]; then
      (cd "$tmp" && $nobody $py -m test "$mod" >"$tmp/out" 2>&1) || { echo "  $mod failed natively"; status=1; }
    else
      (cd "$tmp" && $nobody "$vt" exec --cpu-model "$mode" -- $py -m test "$mod" >"$tmp/out" 2>&1) || { echo "  $mod failed under $mode"; tail -5 "$tmp/out"; status=1; }
    fi
    t=$(elapsed "$t0" "$(now)")
    echo "$(cat "$tmp/total_$mode") + $t" | bc > "$tmp/total_$mode.n" && mv "$tmp/total_$mode.n" "$tmp/total_$mode"
    line="$line$(printf ' %9.2f' "$t")"
  done
  echo "$line"
done
tn=$(cat "$tmp/total_native")
line=$(printf '  %-26s' "total")
ratios=$(printf '  %-26s' "native / mode")
for mode in native zero calls real; do
  t=$(cat "$tmp/total_$mode")
  line="$line$(printf ' %9.2f' "$t")"
  ratios="$ratios$(printf ' %9.1f' "$(echo "$tn / $t" | bc -l)")"
done
echo "$line"
echo "$ratios"
exit $status
