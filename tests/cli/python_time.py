# Python's own time machinery under `vtime exec`: every wait must take exactly its virtual length.
# Prints one "ok NAME" line per check and "ALL-OK" at the end; any mismatch raises.
import asyncio
import subprocess
import sys
import threading
import time


def exact(name, got, want):
    if abs(got - want) > 1e-6:
        print(f"MISMATCH {name}: {got!r} != {want!r}")
        sys.exit(1)
    print(f"ok {name} {got}")


t0, m0 = time.time(), time.monotonic()
time.sleep(86400)
exact("sleep.time", time.time() - t0, 86400)
exact("sleep.monotonic", time.monotonic() - m0, 86400)


async def wait_for_timeout():
    s = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.sleep(100), 10)
    except asyncio.TimeoutError:
        return time.monotonic() - s
    return None


exact("asyncio.wait_for", asyncio.run(wait_for_timeout()), 10)

s = time.monotonic()
fired = []
t = threading.Timer(42, lambda: fired.append(time.monotonic() - s))
t.start()
t.join()
exact("threading.Timer", fired[0], 42)

s = time.monotonic()
r = threading.Event().wait(7.5)
exact("Event.wait", time.monotonic() - s, 7.5)
assert r is False

# An Event set by another thread after 3 s: wait(10) returns True at exactly 3 s.
ev = threading.Event()
threading.Timer(3, ev.set).start()
s = time.monotonic()
assert ev.wait(10) is True
exact("Event.set", time.monotonic() - s, 3)

s = time.monotonic()
subprocess.run(["sleep", "50"], check=True)
exact("subprocess.sleep", time.monotonic() - s, 50)

out = subprocess.run(["date", "+%s"], capture_output=True, text=True, check=True).stdout
exact("subprocess.date", float(out), float(int(time.time())))
print("ALL-OK")
