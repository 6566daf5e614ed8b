#!/bin/bash
# Runs the libFuzzer targets (fuzz/*.cpp) for a given time each and writes what they did.
#
#   fuzz/run.sh [--time SECONDS] [--jobs N] [--no-build] [--merge] [TARGET...]
#
# --time     seconds per target (default 600)
# --jobs     targets run at once (default 2: one per core here)
# --no-build use build/fuzz as it is (default: configure and build the fuzz preset first)
# --merge    afterwards, add the inputs that reached new coverage to fuzz/corpus/<target>
#            (libFuzzer -merge=1: only inputs that add coverage), to be committed
# TARGET     protocol platform workload trace swf values slurm_extra (default: all built)
#
# Each target starts from the committed corpus plus the inputs earlier runs kept
# (build/fuzz/work/<target>); a finding (crash, leak, UB, broken invariant, timeout, out of
# memory) is written to build/fuzz/findings/<target>/ and named in the report,
# build/fuzz/report.txt: target, seconds, executions, coverage, corpus size, findings.
# Reproduce one with build/release/fuzz/fuzz_<target> FILE (or build/fuzz/fuzz/fuzz_<target> FILE).
# Exit: 0 no finding, 1 a finding, 2 usage or build error.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TIME=600 JOBS=2 BUILD=1 MERGE=0
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --merge) MERGE=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
case "$TIME$JOBS" in *[!0-9]*) echo "fuzz/run.sh: --time and --jobs take whole numbers" >&2; exit 2 ;; esac
cd "$ROOT" || exit 2
if [ "$BUILD" = 1 ]; then
  { cmake --preset fuzz && cmake --build --preset fuzz; } > build-fuzz.log 2>&1 || {
    echo "fuzz/run.sh: building the fuzz preset failed (build-fuzz.log)" >&2; exit 2; }
  rm -f build-fuzz.log
fi
B="$ROOT/build/fuzz"
# Symbolised reports (Debian 12's clang-19 ships no llvm-symbolizer-19; any version reads the DWARF).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-19 llvm-symbolizer; do
    command -v "$s" > /dev/null && { export ASAN_SYMBOLIZER_PATH="$(command -v "$s")"; break; }
  done
fi
if [ ${#TARGETS[@]} -eq 0 ]; then
  for exe in "$B"/fuzz/fuzz_*; do TARGETS+=("$(basename "$exe" | sed 's/^fuzz_//')"); done
fi
dict_of() {
  case "$1" in
    protocol|workload|trace) echo "-dict=$ROOT/fuzz/json.dict" ;;
    platform) echo "-dict=$ROOT/fuzz/xml.dict" ;;
  esac
}
run_one() {
  local t="$1" exe="$B/fuzz/fuzz_$1"
  [ -x "$exe" ] || { echo "$t: not built" > "$B/logs/$t.summary"; return; }
  mkdir -p "$B/work/$t" "$B/findings/$t"
  # Fork mode keeps fuzzing past a finding (each is saved), so one run reports all it found.
  # -rss_limit_mb: an input that makes a parser hold gigabytes is a finding, not a slow run;
  # -timeout: so is one that takes seconds.
  "$exe" $(dict_of "$t") -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$TIME" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$B/findings/$t/" "$B/work/$t" "$ROOT/fuzz/corpus/$t" > "$B/logs/$t.log" 2>&1
  local rc=$?
  local execs cov corpus last
  last=$(grep -a '^#[0-9]*: cov:' "$B/logs/$t.log" | tail -1)
  execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  corpus=$(ls "$B/work/$t" | wc -l)
  local found
  found=$(ls "$B/findings/$t" | wc -l)
  printf '%-12s %6ss  %12s execs  cov %6s  corpus %6s  findings %s  (exit %s)\n' \
    "$t" "$TIME" "${execs:-?}" "${cov:-?}" "$corpus" "$found" "$rc" > "$B/logs/$t.summary"
}
mkdir -p "$B/logs"
running=0
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
{
  echo "fuzz/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null), --time $TIME"
  for t in "${TARGETS[@]}"; do cat "$B/logs/$t.summary"; done
} > "$B/report.txt"
cat "$B/report.txt"
if [ "$MERGE" = 1 ]; then
  for t in "${TARGETS[@]}"; do
    "$B/fuzz/fuzz_$t" -merge=1 -max_len=65536 "$ROOT/fuzz/corpus/$t" "$B/work/$t" > "$B/logs/$t.merge.log" 2>&1 &&
      echo "$t: corpus now $(ls "$ROOT/fuzz/corpus/$t" | wc -l) files"
  done
fi
findings=$(find "$B/findings" -type f | wc -l)
[ "$findings" -eq 0 ] || { echo "findings:"; find "$B/findings" -type f; exit 1; }
exit 0
