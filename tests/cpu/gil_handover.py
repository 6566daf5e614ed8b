# A CPU-bound thread holds the GIL; the main thread sleeps, then needs the GIL back. CPython's
# switch interval (5 ms) is a timed wait: it must come although the other thread never blocks.
import threading, time
done = False
def spin():
    x = 0
    while not done:
        x += 1
t = threading.Thread(target=spin)
t.start()
time.sleep(0.05)
done = True
t.join()
print("OK")
