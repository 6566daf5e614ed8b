#!/bin/bash
# Fault injection at scale (docs/reliability.md): tests/reliability/faults.py with 200 trials
# per fault (about 20 minutes; the suite runs 2 per fault). Run as root for the tmpfs faults.
#   bench/faults.sh [BUILD_DIR] [TRIALS]
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
B="${1:-$ROOT/build/release}"
N="${2:-200}"
exec /usr/bin/python3 "$ROOT/tests/reliability/faults.py" --vtime "$B/cli/vtime" --examples "$ROOT/examples" \
  --bin "$B/examples" --trials "$N" --json "$B/faults.json"
