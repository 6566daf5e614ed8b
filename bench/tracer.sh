#!/bin/sh
# The tracer's costs (issue 19), natively and under `vtime exec`, interleaved in one run.
#
# 1. time.Now() in a static Go program: (wall(N) - wall(0)) / N, natively and under vtime (the
#    vDSO patched to read the virtual clock) with --cpu-cost 1ns: the read and the CPU-time
#    model's charge, whose payments (a virtual sleep per --cpu-quantum of debt) are then one per
#    million reads; at the default cost a loop of 20 million reads IS a busy-wait that pays a
#    sleep every thousand reads past its burst. Target: no slower than native.
# 2. One virtualised timed wait: a static C program calling nanosleep(1 us) N times (a notified
#    sleep where the kernel allows it, else a direct one: docs/tracer.md), and a Go program calling
#    time.Sleep(1 us) N times; the wall time N calls add to a run, per call ((wall(N) - wall(0)) /
#    N: the run's start-up is reported apart), under vtime, and natively for reference (where the
#    kernel's timer slack makes a 1 us sleep last ~60 us). Target: <= 10 us per wait.
#    Then the same wait through the shim (the C program built dynamically), and both with the
#    whole run on one vCPU (taskset -c 0): docs/performance.md "Where 10 us stands".
# 3. Debian's etcd: the lease test of tests/tracer/etcd_lease.sh (73 virtual seconds, with the
#    start-up), wall time and speed-up. Target: >= 10x real time (aim: 50x).
#
# Usage: bench/tracer.sh BUILD_DIR        ROUNDS=N (default 5)
# Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
rounds=${ROUNDS:-5}
vt=$build/cli/vtime
command -v go >/dev/null && [ -x "$vt" ] || { echo "tracer.sh: build vtime and install golang-go" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOCACHE=$tmp/gocache GO111MODULE=off GOFLAGS=
CGO_ENABLED=0 go build -o "$tmp/now_loop" "$here/go/now_loop.go"
CGO_ENABLED=0 go build -o "$tmp/sleep_loop" "$here/go/sleep_loop.go"
gcc -O2 -static -o "$tmp/nanosleep_loop" "$here/go/nanosleep_loop.c"
status=0

now() { date +%s.%N; }
# wall seconds of a command (the minimum over the rounds is taken by the caller)
wall() { t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }
min() { sort -g | head -1; }

echo "== 1. time.Now() in Go (ns per call, min of $rounds interleaved rounds)"
N=20000000
: >"$tmp/n0"; : >"$tmp/nN"; : >"$tmp/v0"; : >"$tmp/vN"
for r in $(seq "$rounds"); do
  wall "$tmp/now_loop" 0 >>"$tmp/n0"
  wall "$tmp/now_loop" $N >>"$tmp/nN"
  wall "$vt" exec --cpu-cost 1ns -- "$tmp/now_loop" 0 >>"$tmp/v0"
  wall "$vt" exec --cpu-cost 1ns -- "$tmp/now_loop" $N >>"$tmp/vN"
done
native=$(echo "($(min <"$tmp/nN") - $(min <"$tmp/n0")) * 1000000000 / $N" | bc -l)
vtime=$(echo "($(min <"$tmp/vN") - $(min <"$tmp/v0")) * 1000000000 / $N" | bc -l)
printf "native %.2f ns, vtime %.2f ns, ratio %.2f\n" "$native" "$vtime" "$(echo "$vtime / $native" | bc -l)"
[ "$(echo "$vtime <= $native * 1.05" | bc -l)" = 1 ] || { echo "MISSED: time.Now() slower than native"; status=1; }

echo "== 2. one virtualised timed wait (us per call, (wall(N) - wall(0)) / N, min of $rounds interleaved rounds)"
# What a wait costs is the wall time it adds to a run. A run's start-up (vtime itself, the tree
# watch's eBPF program and the kernel's type information it needs, the tracer) is paid once per
# run, whatever it does: reported apart, as section 1 does for time.Now().
S=20000
for f in cn cn0 cv cv0 gn gn0 gv gv0; do : >"$tmp/$f"; done
for r in $(seq "$rounds"); do
  wall "$tmp/nanosleep_loop" 0 >>"$tmp/cn0"
  wall "$tmp/nanosleep_loop" 2000 >>"$tmp/cn"
  wall "$vt" exec -- "$tmp/nanosleep_loop" 0 >>"$tmp/cv0"
  wall "$vt" exec -- "$tmp/nanosleep_loop" $S >>"$tmp/cv"
  wall "$tmp/sleep_loop" 0 >>"$tmp/gn0"
  wall "$tmp/sleep_loop" 2000 >>"$tmp/gn"
  wall "$vt" exec -- "$tmp/sleep_loop" 0 >>"$tmp/gv0"
  wall "$vt" exec -- "$tmp/sleep_loop" $S >>"$tmp/gv"
done
# per FILE ZERO_FILE N: microseconds per call
per() { echo "($(min <"$tmp/$1") - $(min <"$tmp/$2")) * 1000000 / $3" | bc -l; }
cn=$(per cn cn0 2000)
cv=$(per cv cv0 $S)
gn=$(per gn gn0 2000)
gv=$(per gv gv0 $S)
printf "static C nanosleep(1us): native %.1f us, vtime %.1f us (start-up %.1f ms; counted in, %.1f us a call over %d)\n" \
  "$cn" "$cv" "$(echo "$(min <"$tmp/cv0") * 1000" | bc -l)" "$(echo "$(min <"$tmp/cv") * 1000000 / $S" | bc -l)" $S
printf "Go time.Sleep(1us):      native %.1f us, vtime %.1f us (start-up %.1f ms)\n" \
  "$gn" "$gv" "$(echo "$(min <"$tmp/gv0") * 1000" | bc -l)"
[ "$(echo "$cv <= 10" | bc -l)" = 1 ] || { echo "MISSED: a virtualised timed wait costs more than 10 us"; status=1; }

echo "== 2b. where 10 us stands: the same wait through the shim (dynamic), and both on one vCPU"
# A timed wait costs at least one hand-off from the controller to the waiting thread; between two
# vCPUs of this kind of VM that alone is ~11 us, on one vCPU ~2 us, unless the kernel keeps both
# hand-offs on one cpu as it does for notified sleeps (docs/performance.md "Where 10 us stands").
gcc -O2 -o "$tmp/nanosleep_dyn" "$here/go/nanosleep_loop.c"
for f in dv dv0 cp cp0 dp dp0 cd cd0; do : >"$tmp/$f"; done
for r in $(seq "$rounds"); do
  for n in 0 $S; do
    if [ "$n" = 0 ]; then z=0; else z=; fi
    wall "$vt" exec -- "$tmp/nanosleep_dyn" $n >>"$tmp/dv$z"
    wall taskset -c 0 "$vt" exec -- "$tmp/nanosleep_loop" $n >>"$tmp/cp$z"
    wall taskset -c 0 "$vt" exec -- "$tmp/nanosleep_dyn" $n >>"$tmp/dp$z"
    # The static loop's sleeps as the tracer's own (direct sleeps), not notified (docs/tracer.md).
    wall env VTIME_NOTIFY=0 "$vt" exec -- "$tmp/nanosleep_loop" $n >>"$tmp/cd$z"
  done
done
printf "shim (dynamic) nanosleep: %.1f us; static without notified sleeps: %.1f us; on one vCPU: tracer %.1f us, shim %.1f us\n" \
  "$(per dv dv0 $S)" "$(per cd cd0 $S)" "$(per cp cp0 $S)" "$(per dp dp0 $S)"

echo "== 3. etcd lease test (73 virtual seconds)"
: >"$tmp/e"
for r in $(seq 3); do
  d=$(mktemp -d)
  wall "$vt" exec -- sh "$here/../tests/tracer/etcd_lease.sh" "$d" 23791 23792 >>"$tmp/e"
  rm -rf "$d"
done
e=$(min <"$tmp/e")
printf "wall %.3f s, speed-up x%.1f\n" "$e" "$(echo "73 / $e" | bc -l)"
[ "$(echo "73 / $e >= 10" | bc -l)" = 1 ] || { echo "MISSED: etcd under 10x real time"; status=1; }
exit $status
