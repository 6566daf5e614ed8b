"""What the bridge schedulers' integration tests share (tests/slurm/slurm_cases.py,
tests/k8s/k8s_cases.py): a failure type, reading outputs, a scratch directory per case, running
a `vtime` command with a time limit and an expected status, checking that no process of the run
is left behind (none names the run's directory on its command line or runs in it:
run_processes.py), and the command line of a case runner."""
import argparse
import csv
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from run_processes import processes_mentioning


class Failure(Exception):
    pass


class Skip(Exception):
    """A case that cannot run here (exit 77), e.g. one that needs root."""


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def read(path):
    check(os.path.exists(path), "no output %s" % path)
    with open(path) as f:
        return f.read()



def validate_refuses(c, cases):
    """`vtime validate ARGS` refuses each case before starting anything: exit status 2, the expected
    words on stderr, within seconds, and no results written. cases: [(args, words)]."""
    for args, want in cases:
        t0 = time.monotonic()
        r = subprocess.run([c.a.vtime, "validate"] + args + ["-e", c.prefix("bad")], capture_output=True, text=True,
                           timeout=60, cwd=c.dir, stdin=subprocess.DEVNULL)
        check(r.returncode == 2, "%s: exit %d, expected 2: %s" % (args, r.returncode, r.stderr))
        check(want in r.stderr, "%s: stderr does not say %r: %s" % (args, want, r.stderr))
        check(time.monotonic() - t0 < 30, "%s: took %.0f s: it started something" % (args, time.monotonic() - t0))
        check(not os.path.exists(c.prefix("bad") + "_validation.json"), "%s: wrote results" % args)


def validate_small_run(c, scheduler, wl, more, ids, column):
    """`vtime validate SCHEDULER -w wl --runs 2` end to end (more: its other options): exit 0 or 1
    (whether jobs fall within reality's range is the machine's), progress and summary lines, a
    CSV row per job in `ids` with two real starts, none before its submission (nor the vtime start,
    column `column`), every run in the JSON, a PNG figure. Returns what it printed and the JSON."""
    prefix = c.prefix("small")
    r = subprocess.run([c.a.vtime, "validate", scheduler, "-w", wl, "--runs", "2", "-e", prefix] + list(more),
                       capture_output=True, text=True, timeout=600, cwd=c.dir, stdin=subprocess.DEVNULL)
    sys.stdout.write(r.stderr[-3000:])
    check(r.returncode in (0, 1), "vtime validate exited %d" % r.returncode)
    check("real run 2 of 2" in r.stderr, "no progress line for the real runs")
    check("vtime runs identical" in r.stderr, "the two vtime runs differ, or no summary")
    check("gnuplot failed" not in r.stderr and "no figure" not in r.stderr, "no figure drawn")
    with open(prefix + "_validation.csv") as f:
        table = list(csv.DictReader(f))
    check(sorted(t["job_id"] for t in table) == sorted(ids), "CSV rows: %s" % [t["job_id"] for t in table])
    for t in table:
        starts = [float(x) for x in t["real_starts"].split()]
        check(len(starts) == 2, "job %s: real starts %r" % (t["job_id"], t["real_starts"]))
        check(min(starts) >= float(t["subtime"]), "job %s starts before its submission in a real run" % t["job_id"])
        check(float(t[column]) >= float(t["subtime"]), "job %s starts before its submission" % t["job_id"])
    with open(prefix + "_validation.json") as f:
        runs = json.load(f)
    check(len(runs["real"]) == 2 and len(runs["vtime"]) == 2, "the JSON does not hold 2 real and 2 vtime runs")
    with open(prefix + "_validation.png", "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "no PNG figure")
    return r.stderr, runs

class BridgeCase:
    """A scratch directory and the runs of one test case."""

    timeout = 600

    def __init__(self, args, tag):
        self.a = args
        self.dir = tempfile.mkdtemp(prefix="vtime-%s-test-" % tag)
        self.n = 0

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def prefix(self, tag):
        self.n += 1
        return self.path("%s-%d" % (tag, self.n))

    def run(self, cmd, tag, expect=0, on_started=None, prefix=None, env=None):
        """Runs cmd (in env, or this process's environment); checks its exit status; returns its
        stderr. on_started(popen, prefix) runs while the command does (to kill a daemon mid-run)."""
        return self.run_both(cmd, tag, expect, on_started, prefix, env)[1]

    def run_stdout(self, cmd, tag, expect=0):
        """The same, returning its stdout."""
        return self.run_both(cmd, tag, expect)[0]

    def run_both(self, cmd, tag, expect=0, on_started=None, prefix=None, env=None):
        p = subprocess.Popen(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        try:
            if on_started:
                on_started(p, prefix)
            out, err = p.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Failure("timed out after %d s: %s" % (self.timeout, shlex.join(cmd)))
        sys.stderr.write("[%s stderr] %s\n" % (tag, err.strip()[-3000:]))
        check(p.returncode == expect, "%s\nexited %d, expected %d; stderr:\n%s" % (shlex.join(cmd), p.returncode,
                                                                                   expect, err.strip()[-3000:]))
        return out, err

    def nothing_left(self, run_dir, wait_s=10):
        """No process of the run is left: none mentions the run's directory or runs in it."""
        deadline = time.time() + wait_s
        while True:
            left = processes_mentioning(run_dir)
            if not left:
                return
            if time.time() > deadline:
                raise Failure("processes left running after the run:\n" +
                              "\n".join("%d: %s" % p for p in left))
            time.sleep(0.1)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def main(cases, options, make_case, skip_reason):
    """`RUNNER CASE --OPTION PATH ...` or `RUNNER --list`. Exit 0 when the case passes; 1 and the
    reason on stdout otherwise; 2 for an unknown case; 77 (skipped) when skip_reason() says why
    the system under test is missing."""
    if sys.argv[1:] == ["--list"]:
        print("\n".join(cases))
        return 0
    p = argparse.ArgumentParser()
    p.add_argument("case")
    for o in options:
        p.add_argument(o)
    args = p.parse_args()
    if args.case not in cases:
        print("unknown case " + args.case)
        return 2
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77
    c = make_case(args)
    try:
        cases[args.case](c)
        return 0
    except Failure as e:
        print("FAIL %s: %s" % (args.case, e))
        return 1
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    finally:
        c.cleanup()
