"""How late each kind of timed wait of CPython ends, in virtual ns past its timeout (cli.timer_slack):
under `vtime exec --timer-slack 50us --sleep-latency 0`, Linux's rule (docs/shim.md): a sleep and
the futex waits behind an Event and a Lock by the slack, select, poll and epoll by 0.1% of their
timeout when that is more than the slack."""
import select
import threading
import time


def late(timeout, wait):
    t0 = time.monotonic_ns()
    wait()
    return time.monotonic_ns() - t0 - int(timeout * 1e9)


ep = select.epoll()
pl = select.poll()
print("sleep", late(1.0, lambda: time.sleep(1.0)))
print("event", late(1.0, lambda: threading.Event().wait(1.0)))
lock = threading.Lock()
lock.acquire()
print("lock", late(1.0, lambda: lock.acquire(timeout=1.0)))
print("select", late(1.0, lambda: select.select([], [], [], 1.0)))
print("select_short", late(0.01, lambda: select.select([], [], [], 0.01)))
print("poll", late(1.0, lambda: pl.poll(1000)))
print("epoll", late(1.0, lambda: ep.poll(1.0)))
