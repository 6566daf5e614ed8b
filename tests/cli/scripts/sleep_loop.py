# Ten sleeps of 100 ms in a row, as a daemon's polling loop: prints how long they took (the
# clock's own, monotonic), to the microsecond.
import time

t = time.monotonic()
for _ in range(10):
    time.sleep(0.1)
print("%.6f" % (time.monotonic() - t))
