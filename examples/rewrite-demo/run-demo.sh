#!/bin/sh
# Rewrites, builds (fully static) and runs the demo; exits 0 and prints PASS when
#  - the rewritten binary is static,
#  - under `vtime exec` a one-hour sleep ends at once with both clocks showing 3600 s and 50 us
#    (a real kernel's timer slack, `vtime exec`'s default sleep latency) and the 700 s periodic
#    thread ticking 5 times,
#  - without a session it runs normally (a 1 s sleep takes 1 s of real time).
#
# Usage: run-demo.sh VTIME REWRITE LIBVTIME_A WORK_DIR
#   VTIME       the vtime binary (for `vtime exec`)
#   REWRITE     a binary that takes `rewrite ...`: vtime itself, or the standalone vtime-rewrite
#   LIBVTIME_A  libvtime's static library (target vtime_static)
#   WORK_DIR    scratch directory (emptied)
# Example, from a vtime build directory:
#   ../examples/rewrite-demo/run-demo.sh cli/vtime cli/vtime libvtime/libvtime.a /tmp/demo
set -eu
[ $# -eq 4 ] || { sed -n '2,16p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
vtime=$(abs "$1"); rewrite=$(abs "$2"); lib=$(abs "$3"); work=$4

rm -rf "$work"
mkdir -p "$work"
cp -r "$here/CMakeLists.txt" "$here/src" "$work/"
work=$(cd "$work" && pwd)
cmake -S "$work" -B "$work/build" -DVTIME_SOURCE_DIR="$here/../.." -DVTIME_LIBRARY="$lib" >/dev/null

echo "== vtime rewrite"
(cd "$work" && "$rewrite" rewrite -p build --in-place --report report.json) || {
  echo "FAIL: the rewrite left sites (see $work/report.json)"; exit 1; }
grep -q 'vtime::this_thread::sleep_for' "$work/src/main.cpp" || { echo "FAIL: main.cpp not rewritten"; exit 1; }

echo "== build (static)"
cmake --build "$work/build" >/dev/null
bin="$work/build/rewrite-demo"
if ldd "$bin" >/dev/null 2>&1; then echo "FAIL: $bin is dynamically linked"; exit 1; fi

echo "== under vtime exec"
out=$("$vtime" exec -- "$bin" 3600)
echo "$out"
case "$out" in
  *"elapsed_ns=3600000050000 c_elapsed_ns=3600000050000 ticks=5 "*) ;;
  *) echo "FAIL: expected one virtual hour and 50 us, and 5 ticks"; exit 1 ;;
esac

echo "== without a session"
t0=$(date +%s%N)
out=$("$bin" 1)
t1=$(date +%s%N)
echo "$out"
real_ms=$(( (t1 - t0) / 1000000 ))
ns=$(echo "$out" | sed -n 's/^elapsed_ns=\([0-9]*\) .*/\1/p')
if [ "$real_ms" -lt 1000 ] || [ "${ns:-0}" -lt 1000000000 ]; then
  echo "FAIL: without a session the 1 s sleep took ${real_ms} ms (clock says ${ns} ns)"; exit 1
fi
echo "PASS: rewrite-demo"
