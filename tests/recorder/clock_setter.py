#!/usr/bin/python3
"""A scheduler that sets its clock one hour ahead, then becomes SCHEDULER (an executable path: batch_window_event.py under python3).

usage: clock_setter.py SCHEDULER ARGS...

For the recorder's clock-set case: run as root under vtime (and inside tests/programs/no_clock_set,
so that the machine's clock can never move), the set moves the scheduler's virtual realtime
clock; the trace records it and a replay reproduces it.
"""
import os
import sys
import time

before = time.time()
time.clock_settime(time.CLOCK_REALTIME, before + 3600)
assert time.time() - before >= 3600, "the realtime clock did not move"
os.execv(sys.argv[1], sys.argv[1:])
