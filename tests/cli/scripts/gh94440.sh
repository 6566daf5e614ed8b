#!/bin/sh
# gh94440.sh VTIME PYTHON SCRIPT: CPython's gh-94440 (pool_cancel_shutdown.py) under `vtime exec`.
# Whether the program deadlocks is a real-time race between two threads of one process (the
# pool's manager thread must run beside the main thread, on another cpu, while the main thread
# cancels and shuts down), which vtime does not order for a dynamic program. On an idle machine
# with two cpus it deadlocked in every run seen; pinned to one cpu, or with both cpus busy (CI
# running tests in parallel), it never did. Either way vtime must say the right thing: a
# deadlock is named at once with each thread's wait (exit 121), an end is an end (exit 0).
out=$("$1" exec -- "$2" "$3" 2>&1)
rc=$?
printf '%s\n' "$out"
case $rc in
  121)
    for pat in "blocked forever at virtual time 0\." "poll with no timeout" "read \(blocking call" "futex \(blocking call"; do
      printf '%s\n' "$out" | grep -Eq -- "$pat" || { echo "FAIL: the deadlock report lacks /$pat/"; exit 1; }
    done
    echo "PASS: deadlocked, named at once";;
  0)
    printf '%s\n' "$out" | grep -q "^shutdown returned$" || { echo "FAIL: exit 0 without 'shutdown returned'"; exit 1; }
    echo "PASS: the race went the other way, the program ended";;
  *)
    echo "FAIL: exit status $rc"; exit 1;;
esac
