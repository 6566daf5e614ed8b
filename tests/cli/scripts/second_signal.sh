#!/bin/sh
# vtime exec passes SIGTERM on to its program; a program that ignores it (a shell with `trap ""
# TERM`, blocked in the open of a FIFO no one writes, reported and waited for) keeps running; a
# second SIGTERM ends vtime (status 143) and the whole tree with it.
# Usage: second_signal.sh VTIME
vt=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo"
"$vt" exec --on-deadlock report -- sh -c 'trap "" TERM; echo $$ > '"$dir/pid"'; read x < '"$dir/fifo" 2>/dev/null &
vt_pid=$!
i=0
while [ ! -s "$dir/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
child=$(cat "$dir/pid")
[ -n "$child" ] || { echo "FAIL: the program did not start"; exit 1; }
sleep 0.5
kill -TERM "$vt_pid"
sleep 0.5
kill -0 "$vt_pid" 2>/dev/null || { echo "FAIL: vtime ended on the first SIGTERM, which its program ignores"; exit 1; }
kill -0 "$child" 2>/dev/null || { echo "FAIL: the program ended on the SIGTERM it ignores"; exit 1; }
kill -TERM "$vt_pid"
wait "$vt_pid"
echo "rc=$?"
i=0
while kill -0 "$child" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$child" 2>/dev/null && { echo "FAIL: the program outlived vtime"; kill -KILL "$child"; exit 1; }
echo "tree gone"
