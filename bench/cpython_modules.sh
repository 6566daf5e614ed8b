#!/bin/sh
# CPython's 15 time-related test modules (issue 42), natively and under `vtime exec` with the
# default CPU-time model, as an unprivileged user (nobody when the script runs as root, else the
# caller), native and vtime interleaved module by module, ROUNDS times (default 1).
#
# Prints, per module, the median wall time natively and under vtime, the difference, and
# whether every test passed both ways (regrtest's "Tests result: SUCCESS"); then the totals.
# Targets: every module passes under vtime; vtime's total at most half of the native total; no
# module more than 0.5 s slower under vtime than natively.
#
# Debian's python3 with libpython3.11-testsuite. test_concurrent_futures leaves out
# test_map_exception where CPython bug gh-94440 is not fixed (3.11.2: tests/cpu/CMakeLists.txt).
# Usage: bench/cpython_modules.sh BUILD_DIR      ROUNDS=N MODULES="test_queue ..." bench/...
# Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
set -eu
build=$1
rounds=${ROUNDS:-1}
vt=$(cd "$build" && pwd)/cli/vtime
py=/usr/bin/python3
[ -x "$vt" ] || { echo "cpython_modules.sh: build vtime first" >&2; exit 2; }
"$py" -c 'import test.support' 2>/dev/null || { echo "cpython_modules.sh: no CPython test suite (Debian: libpython3.11-testsuite)" >&2; exit 2; }
modules=${MODULES:-"test_time test_sched test_selectors test_timeout test_threading test_signal test_queue test_thread
  test_epoll test_poll test_select test_asyncio.test_tasks test_asyncio.test_base_events test_asyncio.test_timeouts
  test_concurrent_futures"}
as_user=""
[ "$(id -u)" = 0 ] && as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fixed=$("$py" -c 'import sys; print(int(sys.version_info >= (3, 11, 4)))')

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

# one WAY MODULE: appends "wall passed" to $tmp/WAY.MODULE
one() {
  way=$1 mod=$2
  extra=""
  [ "$mod" = test_concurrent_futures ] && [ "$fixed" = 0 ] && extra="--ignore test_map_exception"
  out=$tmp/$way.$mod.out
  t0=$(now)
  if [ "$way" = vtime ]; then
    (cd /tmp && $as_user "$vt" exec -- "$py" -m test "$mod" $extra > "$out" 2>&1) || true
  else
    (cd /tmp && $as_user "$py" -m test "$mod" $extra > "$out" 2>&1) || true
  fi
  t1=$(now)
  ok=0
  grep -q "Tests result: SUCCESS" "$out" && ok=1
  echo "$(echo "$t1 - $t0" | bc -l) $ok" >> "$tmp/$way.$mod"
}

echo "CPython's time-related test modules as $( [ -n "$as_user" ] && echo nobody || id -un ), native and under vtime (default model), $rounds round(s), interleaved"
printf '  %-34s %9s %9s %8s %s\n' module native vtime diff passed
status=0
for mod in $modules; do
  for r in $(seq "$rounds"); do
    one native "$mod"
    one vtime "$mod"
  done
  n=$(cut -d' ' -f1 "$tmp/native.$mod" | median)
  v=$(cut -d' ' -f1 "$tmp/vtime.$mod" | median)
  np=$(awk '{ s += $2 } END { print s == NR ? "yes" : "no" }' "$tmp/native.$mod")
  vp=$(awk '{ s += $2 } END { print s == NR ? "yes" : "no" }' "$tmp/vtime.$mod")
  printf '  %-34s %8.2fs %8.2fs %+7.2fs native %s, vtime %s\n' "$mod" "$n" "$v" "$(echo "$v - $n" | bc -l)" "$np" "$vp"
  echo "$mod $n $v $vp" >> "$tmp/summary"
  if [ "$vp" = no ]; then
    echo "    under vtime: $(grep -E 'Tests result|^FAIL|^ERROR|Timeout' "$tmp/vtime.$mod.out" | head -5 | tr '\n' ' ')"
  fi
done
set -- $(awk 'BEGIN { w = -1e9 } { n += $2; v += $3; d = $3 - $2; if (d > w) { w = d; wm = $1 } if ($4 == "no") f++ }
              END { printf "%.2f %.2f %.2f %s %d", n, v, w, wm == "" ? "-" : wm, f }' "$tmp/summary")
total_n=$1 total_v=$2 worst=$3 worst_mod=$4 failed=$5
printf '  %-34s %8.2fs %8.2fs  (%.2fx native)\n' total "$total_n" "$total_v" "$(echo "$total_v / $total_n" | bc -l)"
if [ "$failed" = 0 ]; then r=PASS; else r=FAIL; status=1; fi
printf 'RESULT cpython_modules_pass %d failed target 0 %s\n' "$failed" "$r"
if [ "$(echo "$total_v <= $total_n / 2" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
printf 'RESULT cpython_modules_total %.2fx native target <= 0.5 %s\n' "$(echo "$total_v / $total_n" | bc -l)" "$r"
if [ "$(echo "$worst <= 0.5" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
printf 'RESULT cpython_modules_worst %+.2f s (%s) target <= +0.5 s %s\n' "$worst" "$worst_mod" "$r"
exit $status
