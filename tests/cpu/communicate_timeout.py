# subprocess.communicate(timeout=5) on a child that never answers: CPython wakes at the deadline
# (later by the timer slack) and checks `_time() > endtime`, which needs time to move past it
# (strict inequality).
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
try:
    p.communicate(timeout=5)
    print("no timeout?")
except subprocess.TimeoutExpired:
    print("timeout after %.3f s" % (time.monotonic() - t0))
p.kill()
p.wait()
print("OK")
