#!/bin/sh
# vtime-slurm's speed (issues 11 and 12): the reference workload spaced_200_delay170 on cluster16
# scheduled by Debian's unmodified Slurm (sched/builtin) in virtual time, against real time.
#
# For each of ROUNDS runs (default 3): wall time, speed-up over real time, Batsim messages, ticks
# and clock advances (per simulated second), the tree's size (processes and threads of the Slurm
# cluster, sampled mid-run) and the peak memory of the whole tree (vtime, the bridge, slurmctld,
# slurmds, job processes: the sum of the reaped tree's maximum resident sizes is not what we
# want, so the peak of the sum of RSS over the run is sampled every second of real time; the
# sampling itself, ps over every process, costs a few percent of a cpu).
# Then the cost of an advance alone: one job of 1,700 s (17,000 advances of slurmctld's 100 ms
# loop, a single job launch), minus the same with a job of 170 s, divided by the difference in
# advances. The rules are measured, interleaved: the kernel count ("kernel"), the same as the
# unprivileged user nobody, the count loaded for it by vtime-treewatch ("user": when the script
# runs as root and the helper has its capabilities, docs/install.md "Without root"), and
# VTIME_IDLE=proc ("proc").
#
# Then, as root, the spaced run's floor: the tree's own CPU time (its cgroup's CPU time less vtime's).
# Targets: speed-up >= 300 (issue 11); <= 300 us per advance of Slurm's tree (issue 12); as
# nobody, the spaced run within 1.2x of root's wall time and <= 60 us per advance; the spaced run
# within 1.2x of its floor (issue 42).
# Usage: bench/slurm_speed.sh BUILD_DIR      ROUNDS=N bench/slurm_speed.sh BUILD_DIR
# Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
rounds=${ROUNDS:-3}
vt=$build/cli/vtime
[ -x "$vt" ] && [ -x "$build/slurm/vtime-slurm" ] || { echo "slurm_speed.sh: build vtime and vtime-slurm first" >&2; exit 2; }
command -v slurmctld >/dev/null || { echo "slurm_speed.sh: slurmctld is not installed" >&2; exit 2; }
plat=$here/../examples/platforms/cluster16.xml
conf=$here/../examples/slurm/fcfs.conf
tmp=$(mktemp -d)
status=0
modes="kernel proc"
helper=$build/shim/vtime-treewatch
if [ "$(id -u)" = 0 ] && command -v getcap >/dev/null && getcap "$helper" 2>/dev/null | grep -q cap_bpf; then
  modes="kernel user proc"
  chmod 755 "$tmp"
  mkdir -m 1777 "$tmp/u"
else
  echo "(not root, or $helper without capabilities: no run as an unprivileged user)"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Samples the tree below pid $1 every second into $2: "processes threads rss_kib" per line.
sample_tree() {
  root=$1 out=$2
  while kill -0 "$root" 2>/dev/null; do
    ps -e -o pid=,ppid=,nlwp=,rss= 2>/dev/null | awk -v root="$root" '
      { ppid[$1] = $2; nlwp[$1] = $3; rss[$1] = $4 }
      END {
        for (p in ppid) { q = p; while (q != "" && q != root && q > 1) q = ppid[q]; if (q == root) { np++; nt += nlwp[p]; r += rss[p] } }
        print np + 0, nt + 0, r + 0 }' >> "$out"
    sleep 1
  done
}

# The CPU time of a whole run (vtime, Slurm's daemons, their jobs and the bridge, reaped or orphaned
# alike) from a cgroup of its own: cgroup v1's cpuacct (ns) or v2's cpu.stat (us). Root only.
cg_root=""
if [ "$(id -u)" = 0 ]; then
  for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
    mkdir "$d/vtime-slurm-speed-$$" 2>/dev/null || continue
    if [ -f "$d/vtime-slurm-speed-$$/cpuacct.usage" ] || [ -f "$d/vtime-slurm-speed-$$/cpu.stat" ]; then cg_root=$d; break; fi
    rmdir "$d/vtime-slurm-speed-$$"
  done
fi
cg=${cg_root:+$cg_root/vtime-slurm-speed-$$}
trap 'rm -rf "$tmp"; [ -n "$cg" ] && rmdir "$cg" 2>/dev/null; true' EXIT
in_cgroup() {  # runs its arguments in the cgroup
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
}
cg_cpu() {  # the cgroup's CPU time so far, seconds
  if [ -f "$cg/cpuacct.usage" ]; then awk '{ printf "%.6f", $1 / 1e9 }' "$cg/cpuacct.usage"
  else awk '$1 == "usage_usec" { printf "%.6f", $2 / 1e6 }' "$cg/cpu.stat"; fi
}

# run LABEL WORKLOAD IDLE_MODE: prints "wall simulated messages ticks advances vtime_cpu"; tree samples
# in $tmp/LABEL.tree; with a cgroup, the run's whole CPU time in $tmp/LABEL.cpu
run() {
  label=$1 wl=$2 mode=$3
  wrap=""
  if [ "$mode" = kernel ] && [ -n "$cg" ]; then wrap=in_cgroup before=$(cg_cpu); fi
  if [ "$mode" = user ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/u" VTIME_IDLE=kernel \
      "$vt" slurm -p "$plat" -w "$wl" -e "$tmp/u/$label" --slurm-conf "$conf" 2> "$tmp/$label.err" &
  else
    $wrap env VTIME_IDLE=$mode "$vt" slurm -p "$plat" -w "$wl" -e "$tmp/$label" --slurm-conf "$conf" 2> "$tmp/$label.err" &
  fi
  pid=$!
  sample_tree "$pid" "$tmp/$label.tree" &
  sampler=$!
  if ! wait "$pid"; then echo "slurm_speed.sh: $label failed:" >&2; cat "$tmp/$label.err" >&2; exit 2; fi
  wait "$sampler" 2>/dev/null || true
  if [ -n "$wrap" ]; then echo "$(cg_cpu) - $before" | bc -l > "$tmp/$label.cpu"; fi
  sed -n 's/.*simulated \([0-9.]*\) s in \([0-9.]*\) s of wall time.*; \([0-9]*\) messages, \([0-9]*\) ticks, \([0-9]*\) advances.*own CPU \([0-9.]*\) s.*/\2 \1 \3 \4 \5 \6/p' "$tmp/$label.err"
}

# 1. The reference workload.
echo "spaced_200_delay170 on cluster16 through vtime-slurm (sched/builtin), $rounds runs per rule, interleaved"
for r in $(seq "$rounds"); do
  for mode in $modes; do
    run "spaced_${mode}_$r" "$here/../examples/workloads/spaced_200_delay170.json" $mode >> "$tmp/spaced_$mode"
  done
done
for mode in $modes; do
  wall=$(cut -d' ' -f1 "$tmp/spaced_$mode" | median)
  set -- $(head -1 "$tmp/spaced_$mode")
  sim=$2 msgs=$3 ticks=$4 adv=$5
  peak=$(cat "$tmp"/spaced_"$mode"_*.tree | awk '$3 > m { m = $3 } END { print m / 1024 }')
  shape=$(cat "$tmp"/spaced_"$mode"_*.tree | awk '$2 > t { t = $2; p = $1 } END { print p " processes, " t " threads" }')
  printf '  %-6s wall median %s s (%s), speed-up x%.0f; %s messages, %s ticks, %s advances (%.1f advances per simulated s); largest tree %s; peak RSS of the tree %.1f MiB\n' \
    "$mode" "$wall" "$(cut -d' ' -f1 "$tmp/spaced_$mode" | sort -g | tr '\n' ' ' | sed 's/ $//')" \
    "$(echo "$sim / $wall" | bc -l)" "$msgs" "$ticks" "$adv" "$(echo "$adv / $sim" | bc -l)" "$shape" "$peak"
  [ "$mode" = kernel ] && kernel_speedup=$(echo "$sim / $wall" | bc -l) && kernel_wall=$wall
  [ "$mode" = user ] && user_wall=$wall
done

# The floor (issue 42): with the clock frozen while the tree computes, the run cannot be shorter
# than the tree's own CPU time (Slurm's daemons, their jobs, the bridge; the tracer, idle here), i.e.
# the whole run's CPU time, from its cgroup, less vtime's own (the broker, the simulator, the
# clock's controller: its summary line). Per round, interleaved with the other rules' runs.
if [ -n "$cg" ]; then
  for r in $(seq "$rounds"); do
    set -- $(cat "$tmp/spaced_kernel_$r.cpu") $(sed -n "${r}p" "$tmp/spaced_kernel")
    echo "$2 $1 $7" | awk '{ printf "%.3f %.3f %.3f %.3f\n", $1, $2 - $3, $3, $1 / ($2 - $3) }' >> "$tmp/floor"
  done
  floor_ratio=$(cut -d' ' -f4 "$tmp/floor" | median)
  echo "the floor of the spaced run (kernel rule): wall, the tree's own CPU (its cgroup's less vtime's own), vtime's own CPU, wall / tree CPU"
  awk '{ printf "  round %d: wall %.2f s, tree CPU %.2f s, vtime CPU %.2f s, %.2fx the floor\n", NR, $1, $2, $3, $4 }' "$tmp/floor"
else
  echo "(not root or no cgroup: the floor of the spaced run is not measured)"
fi

# 2. The cost of one advance: 1,700 s minus 170 s of one job, per advance.
mk() { printf '{"nb_res": 16, "jobs": [{"id": "0", "subtime": 0, "res": 1, "profile": "p"}], "profiles": {"p": {"type": "delay", "delay": %s}}}\n' "$1" > "$2"; }
mk 170 "$tmp/short.json"
mk 1700 "$tmp/long.json"
echo "cost of one advance of the Slurm tree: (one job of 1,700 s) - (one job of 170 s), per extra advance, $rounds runs each"
for r in $(seq "$rounds"); do
  for mode in $modes; do
    set -- $(run "short_${mode}_$r" "$tmp/short.json" $mode)
    sw=$1 sa=$5
    set -- $(run "long_${mode}_$r" "$tmp/long.json" $mode)
    echo "$(echo "($1 - $sw) / ($5 - $sa) * 1000000" | bc -l)" >> "$tmp/per_advance_$mode"
  done
done
for mode in $modes; do
  us=$(median < "$tmp/per_advance_$mode")
  printf '  %-6s %.0f us per advance (runs: %s)\n' "$mode" "$us" "$(sort -g "$tmp/per_advance_$mode" | awk '{ printf "%.0f ", $1 }')"
  [ "$mode" = kernel ] && kernel_us=$us
  [ "$mode" = user ] && user_us=$us
done
if [ "$(echo "$kernel_speedup >= 300" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
printf 'RESULT slurm_spaced_speedup x%.0f target >= 300 %s\n' "$kernel_speedup" "$r"
if [ "$(echo "$kernel_us <= 300" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
printf 'RESULT slurm_cost_per_advance %.0f us target <= 300 %s\n' "$kernel_us" "$r"
if [ -n "${floor_ratio:-}" ]; then
  if [ "$(echo "$floor_ratio <= 1.2" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
  printf 'RESULT slurm_spaced_over_floor %.2f target <= 1.2 %s\n' "$floor_ratio" "$r"
fi
if [ -n "${user_wall:-}" ]; then
  ratio=$(echo "$user_wall / $kernel_wall" | bc -l)
  if [ "$(echo "$ratio <= 1.2" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
  printf 'RESULT slurm_unprivileged_over_root %.2f target <= 1.2 %s\n' "$ratio" "$r"
  if [ "$(echo "$user_us <= 60" | bc)" = 1 ]; then r=PASS; else r=FAIL; status=1; fi
  printf 'RESULT slurm_unprivileged_cost_per_advance %.0f us target <= 60 %s\n' "$user_us" "$r"
fi
exit $status
