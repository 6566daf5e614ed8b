"""The timer slack is a range (cli.timer_slack_range): under `vtime exec --timer-slack 50us
--sleep-latency 0`, a select of 1 s may end anywhere from 1 s to 1.001 s (0.1% of its timeout).
Alone it ends at 1.001 s; beside a thread whose 1.0005 s sleep ends at 1.00055 s (its own 50 us
slack), the advance that ends that sleep ends the select too, as a Linux timer interrupt expires
every range timer whose soft expiry has passed. A select whose range starts after that instant
(1.0006 s) is not ended by it."""
import select
import threading
import time


def late_beside(timeout, other):
    """ns past `timeout` at which a select of `timeout` s ends while another thread sleeps `other` s."""
    out = {}

    def sleeper():
        t0 = time.monotonic_ns()
        time.sleep(other)
        out["sleep"] = time.monotonic_ns() - t0 - round(other * 1e9)

    t = threading.Thread(target=sleeper)
    t0 = time.monotonic_ns()
    t.start()
    select.select([], [], [], timeout)
    late = time.monotonic_ns() - t0 - round(timeout * 1e9)
    t.join()
    return late, out["sleep"]


t0 = time.monotonic_ns()
select.select([], [], [], 1.0)
print("alone", time.monotonic_ns() - t0 - 1_000_000_000)
print("shared %d %d" % late_beside(1.0, 1.0005))
print("apart %d %d" % late_beside(1.0006, 1.0005))
