"""What the recorder's case scripts share: paths of the inputs, the failure type, and a scratch
directory for the runs one case records."""
import os
import shutil
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PLATFORM16 = os.path.join(ROOT, "examples", "platforms", "cluster16.xml")
SPACED = os.path.join(ROOT, "examples", "workloads", "spaced_200_delay170.json")
BURST = os.path.join(ROOT, "examples", "workloads", "burst_200_delay170.json")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-zmq


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Scratch:
    """A private directory for one case; args carry --vtime and --periodic-fcfs."""

    def __init__(self, args, prefix):
        self.vtime = args.vtime
        self.periodic_bin = args.periodic_fcfs
        self.dir = tempfile.mkdtemp(prefix=prefix)

    def path(self, name):
        return os.path.join(self.dir, name)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
