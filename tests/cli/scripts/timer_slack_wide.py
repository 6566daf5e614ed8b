"""A timer slack wider than the range a waiter slot holds (4.29 s, abi::WaiterSlot::early_ns), under
--timer-slack 5s (cli.timer_slack_wide): a lone 1 s Event wait ends at its deadline plus the slack
("alone"); beside an alarm at 3 s (timers have no slack) it ends with the alarm, its range being
all it can hold, from 6 - 4.29 s on ("beside"). A range cut to its low 32 bits (0.71 s) would have
kept it waiting until 6 s."""
import signal
import threading
import time


def late_wait(out):
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])  # the alarm goes to the main thread
    t0 = time.monotonic_ns()
    threading.Event().wait(1.0)
    out.append(time.monotonic_ns() - t0 - 1_000_000_000)


got = []
late_wait(got)
signal.signal(signal.SIGALRM, lambda *_: None)
signal.alarm(3)
t = threading.Thread(target=late_wait, args=(got,))
t.start()
t.join()
print("alone", got[0])
print("beside", got[1])
