"""The batch-window policy shared by batch_window.py (threading.Timer) and its event-based twin
batch_window_event.py (CALL_ME_LATER). Pure state, no I/O and no clock: the two programs differ
only in what tells them that a window has ended. The policy is defined in examples/README.md.
spend_cpu (their --decision-cost) is the one thing here that reads a clock: the thread's CPU time.
"""
import time


class BatchWindow:
    def __init__(self):
        self.nb_resources = 0
        self.free = set()         # free resource ids
        self.batch = []           # (job_id, res) submitted while the window is open, in order
        self.ready = []           # (job_id, res) schedulable, in FCFS order
        self.window_open = False
        self.ended = False

    def record(self, events):
        """Applies one Batsim message's events in order. Returns True when a submission opened
        a window (the caller then arranges for close_window() to be called W seconds later)."""
        opened = False
        for e in events:
            kind, data = e["type"], e["data"]
            if kind == "SIMULATION_BEGINS":
                self.nb_resources = data["nb_compute_resources"]
                self.free = {r["id"] for r in data["compute_resources"]}
            elif kind == "JOB_SUBMITTED":
                self.batch.append((data["job_id"], data["job"]["res"]))
                if not self.window_open:
                    self.window_open = opened = True
            elif kind == "JOB_COMPLETED":
                self.free |= parse_alloc(data["alloc"])
            elif kind == "SIMULATION_ENDS":
                self.ended = True
        return opened

    def close_window(self):
        """The window's end: every job submitted so far becomes schedulable, after the older ones."""
        self.ready += self.batch
        self.batch = []
        self.window_open = False

    def schedule(self):
        """One strict FCFS pass over the schedulable jobs, on the lowest-numbered free resources.
        Returns the decisions as events without timestamp (the caller stamps them)."""
        out = []
        while self.ready:
            job_id, res = self.ready[0]
            if res > self.nb_resources:  # can never run here: reject rather than stall
                out.append({"type": "REJECT_JOB", "data": {"job_id": job_id}})
            elif res <= len(self.free):
                ids = sorted(self.free)[:res]
                self.free -= set(ids)
                out.append({"type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": " ".join(map(str, ids))}})
            else:
                break  # the head waits for resources, and everything behind it too
            self.ready.pop(0)
        return out


def parse_alloc(text):
    """Batsim's "0-3 5" -> {0, 1, 2, 3, 5}."""
    ids = set()
    for part in text.split():
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def spend_cpu(ms):
    """--decision-cost: spin until this thread has used `ms` milliseconds of CPU time.

    time.thread_time() reads CLOCK_THREAD_CPUTIME_ID, real computation even under vtime, so a sync
    policy that gives the scheduler less real time than this shows late decisions."""
    end = time.thread_time() + ms / 1000.0
    while time.thread_time() < end:
        pass
