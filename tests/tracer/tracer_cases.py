#!/usr/bin/python3
"""Programs the shim cannot reach, under `vtime exec` through the tracer (docs/tracer.md).

usage: tracer_cases.py --list | CASE --vtime VTIME --bin DIR

DIR holds the programs built for these tests: timers_static (a Go program built with
CGO_ENABLED=0), timers_cgo (the same with cgo: dynamically linked, loads the shim as well),
forever (Go, sleeps forever), raw_timers (Go, timers armed with raw system calls), static_clock
and static_timers (statically linked C programs).
  go_static, go_cgo     Go's time.Sleep, Ticker, time.After, context.WithTimeout, Timer.Reset and
                        time.Since print exact virtual instants (timers_expected.txt), twice the
                        same; the wall clock is the session's epoch + 15 s (go_static: its
                        poller's waits answered by the controller where the kernel allows, and
                        again with VTIME_NOTIFY=0);
  go_unprivileged       the same as nobody (the filter then needs no_new_privs): with the kernel's
                        count loaded by vtime-treewatch (VTIME_IDLE=kernel, when the build gave it
                        its capabilities), and with a copy of the helper that has none, where vtime
                        says once that idle decisions read /proc;
  go_via_shell          a dynamic shell executes the static Go program: the shim hands it over;
  go_spawns             a static Go program runs coreutils' sleep and date (fork + execve of
                        dynamic programs from a traced one): exact instants, the same clock;
  static_c              a static C program's nanosleep, clock_nanosleep, select and vDSO clock
                        reads (its sleeps answered by the controller where the kernel allows:
                        --stats says so), and four of its threads sleeping at once;
  go_spin               a Go loop on time.Since for 100 ms ends at exactly 100 ms under the
                        default CPU-time model (the injected clock code charges reads), twice;
  static_signal         a signal from a (traced, forked) child interrupts a 10 s nanosleep at
                        virtual 1 s with EINTR and 9 s left in its `rem`, as natively;
  static_restart        signals that run no handler (ignored SIGUSR2, a child's SIGCHLD) do not
                        end a 3 s nanosleep (0 at 3 s), and an SA_RESTART handler ends an absolute
                        clock_nanosleep with EINTR at the signal's instant, as natively, whose
                        deadline then moves the clock no more (5 advances); twice;
  static_proc           static_c, static_signal and static_restart with idle decisions read from
                        /proc (VTIME_IDLE=proc): the tracer, not the controller, then ends the
                        sleeps it rewrote into waits on their slot's word (docs/tracer.md);
  static_direct         the same with the kernel count but no notified sleeps (VTIME_NOTIFY=0):
                        the tracer's direct sleeps, which the controller wakes on their word;
  exec_thread           a thread of a static C program executes the program again (which waits
                        for ever on a pipe) while the main thread sleeps 100 s: the tree is
                        blocked for ever at virtual 1 s (exit 121), the dead sleep's deadline
                        moves nothing, with the kernel count and with the /proc rule;
  static_timers         a static C program's timers made as raw system calls (timerfd periodic and
                        absolute through epoll, POSIX timers by signal with overruns, to a thread and
                        through glibc's SIGEV_THREAD, alarm, setitimer and getitimer): exact
                        instants, twice the same, and the same as nobody; an alarm survives
                        execve into coreutils' sleep (killed at virtual 2 s), a POSIX timer does not;
  go_raw_timers         a static Go program arming a timerfd and setitimer(ITIMER_REAL) with raw
                        system calls (blocking reads, SIGALRM through signal.Notify): exact
                        instants, twice the same;
  real_timeout          a wait vtime leaves on the real clock (sigtimedwait) is named, exit 123,
                        not reported as a deadlock;
  etcd                  Debian's etcd started by a shell script: a lease with TTL 60 s keeps its
                        key at virtual 50 s and has lost it at 70 s, twice the same;
  kill_vtime            SIGKILL of vtime while it runs a static Go program leaves no process of
                        the tree and no segment in /dev/shm;
  settime_static,       raw clock_settime, settimeofday, adjtimex and clock_adjtime (a static C
  settime_dynamic,      program; the same program dynamic, through the shim's syscall(2)) and
  settime_go            Go's syscall.Settimeofday move the tree's virtual realtime only: as root
                        (inside a user namespace, where the kernel refuses to set the real clock,
                        so that a regression fails instead of moving this machine's clock) the
                        moves are exact and the monotonic clock stays; as nobody every set is
                        EPERM, as without vtime; the host's clock never moves. An inline `syscall`
                        instruction is emulated in the static program, and meets the clock guard
                        (ENOSYS) in the dynamic one;
  go_spin_real          the Go loop on time.Since under --cpu-model real: the clock runs while it
                        computes (read from the CPU's counter by the injected code), the loop ends;
  serial_gate           vtime exec --serialize, static C: a child woken at 1 s by its parent's first
                        write runs only once the parent is idle (it reads both writes, "12", in one
                        read; without the gate it reads "1" while the parent computes), and the
                        held children then run in start order, twice the same; as root, also
                        with the pids made to wrap around between the two children
                        (/proc/sys/kernel/ns_last_pid): they still run in start order;
  serial_gate_go        the same with static Go children (their poller's epoll_pwait);
  serial_gate_dynamic   the same program dynamically linked: the shim holds its children (and
                        the same wrap check);
  serial_threads        the gate's thread turns, static C: two threads of a child process, both
                        held while their parent computes, run one after another in the order
                        the child made them (the first computes before printing: released
                        together, the second would print first), twice the same;
  serial_topup          the gate and an epoll wait's result, static C: a child whose epoll wait
                        ended at its parent's first write (held while the parent computes and
                        writes a second socket) gets both events at its release, "events 2:
                        a b" (the kernel had handed it one), with and without a timeout, static
                        (the tracer holds it) and dynamic (the shim), each twice the same;
  serial_due            the gate's thread turns, static C: two threads of one process whose timed
                        waits end at one instant run one per step, the one whose wait began
                        first going first (it computes before printing: woken together, or in
                        the order the threads were made, the other would print first), "B"
                        then "A", under --serialize and --serialize-threads, twice the same;
  serial_futex          --serialize-threads, static C: two threads woken together by a futex
                        wake of their process's main thread run one after another in the order
                        they were made, "A" then "B" (A computes before printing), twice the
                        same;
  serial_wake           --serialize-threads, static C: a thread's epoll wait (timed, then untimed)
                        that another thread of its process ends during an advance's step waits
                        for its turn: the waker (released by the advance) computes and prints
                        first, "W" then "P", twice the same;
  serial_ctl            --serialize-threads, static C: a descriptor added ready to the epoll set
                        another thread of its process waits on (timed, then untimed), then
                        removed at once: the waiting thread gets its event every time (the adding
                        thread waits at its epoll_ctl's exit until the woken wait has taken it),
                        held for its turn, "W" then "P 1", twice the same;
  go_syscall_timers     a Go program's timers while one of its goroutines blocks in a system call
                        (os/exec's wait under a context timeout, AfterFunc during a child's run,
                        syscall.Nanosleep, a blocking pipe read another goroutine's timer ends;
                        with cgo also C's sleep and a pthread condition variable a Go timer
                        signals) fire at their exact deadlines: static twice the same, cgo, and
                        with GOMAXPROCS=2;
  serial_spawn          --serialize-threads, static C: system() and posix_spawn(), whose vfork
                        children run at once (their parent waits for them), three times the same;
                        and the Go program of go_syscall_timers (os/exec's vfork) under the
                        same turns;
  go_random             Go's map iteration order and select among ready channels (seeded from
                        AT_RANDOM and the time-stamp counter, also on a new thread), and
                        crypto/rand's bytes (getrandom): two native runs differ, two runs under
                        vtime print the same (by whichever route the machine allows for the
                        counter: skipped, with vtime's notice, where neither works);
  go_random_patch       the same with the counter reads' fallback forced (VTIME_GO_TICKS=patch:
                        runtime.cputicks patched to fault, for machines that accept the trap's
                        prctl and ignore it), on the program as built, stripped (found through
                        Go's pc-line table) and position-independent: twice the same each, all
                        three the same, and, where the CPU's trap works, the same as with it.
  write_cost            VTIME_WRITE_COST=2:1000000 (each write to descriptor 2 costs 1 ms of virtual
                        time, charged by the tracer before the write) in the environment of a
                        static Go program, given by vtime's own environment and by `env` in the
                        tree: with thread turns, its 20 lines to stderr take exactly 20 ms, its 5
                        to stdout none, and its 3 ms ticker ticks 6 times meanwhile (a charge is a
                        system call to Go: its sysmon hands the processor on);
                        VTIME_SYNC_COST=2000000: its 3 fsyncs take 6 ms, and the ticker ticks
                        twice meanwhile; twice the same each; with VTIME_WRITE_MATCH=|line 1||nowhere
                        only the 11 lines that contain 'line 1' pay (11 ms, 3 ticks); without the
                        variables no time passes; a malformed value charges nothing; without thread turns the same
                        charges (the ticker then runs when its threads' races let it).
  held_call             VTIME_SYNC_COST=2000000, a static Go program that starts a goroutine and
                        then fsyncs, five times, with a thread in its network poller (a timer an
                        hour away): each goroutine runs at the instant its fsync began (0, 2, 4,
                        6, 8 ms; sysmon hands the held processor on, as natively 20 us into the
                        call), not when some later call ends; three times the same.
  timer_slack           a static Go program's waits under --timer-slack 50us: time.Sleep of 1 s
                        (the poller's epoll_pwait of 1000 ms) ends 1 ms late, of 10 ms 50 us late,
                        a raw syscall.Nanosleep of 1 s 50 us late, as Linux ends them; without the
                        option exactly on time; twice the same each.
  go_scavenger          a static Go program that allocates, drops and collects 100 MB three times,
                        sleeping 1 s after each: Go's background scavenger, which would return the
                        memory in rounds a few ms apart each ended by a runtime timer (9 more
                        clock advances here before it was kept from running, their number
                        following the heap), never runs, so the sleeps are its only instants
                        (--stats: 3 advances, GODEBUG=scavtrace=1: 0 KiB released each cycle);
                        also built stripped and position-independent (the function found through
                        Go's pc-line table, patched where the program is loaded).
  go_constant           VTIME_GO_CONSTANT=main.period:1000000000:1250000000 in the environment of a
                        static Go program whose period() returns time.Second and which sleeps it
                        three times: it sleeps 1.25 s each time and ends at 3.75 s, as built and
                        stripped position-independent; without the variable 1 s and 3 s; a
                        function it does not have, a constant that function does not load and a
                        malformed value each leave it as it is with a warning naming why.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UNPRIVILEGED = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
CASES = ["go_static", "go_cgo", "go_unprivileged", "go_via_shell", "go_spawns", "go_spin", "static_c", "static_signal", "static_restart",
         "static_proc", "static_direct", "exec_thread", "static_timers", "go_raw_timers",
         "real_timeout", "etcd", "kill_vtime", "settime_static", "settime_dynamic", "settime_go", "go_spin_real",
         "serial_gate", "serial_gate_go", "serial_gate_dynamic", "serial_threads", "serial_topup", "serial_futex", "serial_due",
         "serial_wake", "serial_ctl",
         "go_random", "go_random_patch", "go_syscall_timers", "serial_spawn", "write_cost", "held_call", "timer_slack",
         "go_scavenger", "go_constant"]
USERNS_ROOT = ["unshare", "--user", "--map-root-user"]
# What syscall_timers.go prints (go_syscall_timers, serial_spawn).
SYSCALL_TIMERS = ("sleep 5 under a 1.2 s context: signal: killed at 1.200000\n"
                  "AfterFunc(1 s) during sleep 3 at 2.200000; sleep: <nil> at 4.200000\n"
                  "AfterFunc(0.5 s) during syscall.Nanosleep(2 s) at 4.700000; nanosleep: <nil> at 6.200000\n"
                  "blocking read of a pipe written after 0.7 s: \"x\" <nil> at 6.900000\n")
SKIP = 77  # ctest's SKIP_RETURN_CODE


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, cmd, prefix=(), timeout=120, extra=()):
    # Exact waits (no sleep latency, no timer slack, unless a case asks for one): the cases check
    # the times the tracer gives to each wait.
    exact = [] if "--timer-slack" in extra else ["--timer-slack", "0"]
    full = list(prefix) + [args.vtime, "exec", "--sleep-latency", "0"] + exact + list(extra) + ["--"] + cmd
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout, cwd="/tmp")
    print("$ %s\n%s%s(exit %d)" % (" ".join(full), r.stdout, r.stderr, r.returncode))
    return r


def random_runs(args, cmd, prefix=(), route=None):
    """random.go twice under vtime (--stats): both the same; its output. Skips where vtime says
    the counter reads stay real (no route here: a machine's limit, not vtime's failure)."""
    outs = []
    for _ in range(2):
        r = run(args, cmd, prefix, extra=["--stats"])
        if r.returncode != 0 or not r.stdout.startswith("map:") or "crypto/rand: " not in r.stdout:
            fail("exit %d" % r.returncode)
        if "0 trapped, 0 patched" in r.stderr:
            print("SKIP: " + [l for l in r.stderr.splitlines() if "random seeds" in l][0])
            sys.exit(SKIP)
        if route is not None and ("Go counter reads: " + route) not in r.stderr:
            fail("--stats does not say 'Go counter reads: %s'" % route)
        outs.append(r.stdout)
    if outs[0] != outs[1]:
        fail("two runs under vtime differ")
    return outs[0]


def expected_timers():
    with open(os.path.join(HERE, "timers_expected.txt")) as f:
        return f.read()


def twice(args, cmd, want, prefix=(), timeout=120, extra=(), stderr_has=None, stderr_lacks=None):
    """Runs cmd twice under vtime: both exit 0 and print exactly `want` (and `stderr_has` on
    stderr, never `stderr_lacks`)."""
    outs = []
    for _ in range(2):
        r = run(args, cmd, prefix, timeout, extra)
        if r.returncode != 0:
            fail("exit %d" % r.returncode)
        if stderr_has is not None and stderr_has not in r.stderr:
            fail("no %r on stderr" % stderr_has)
        if stderr_lacks is not None and stderr_lacks in r.stderr:
            fail("%r on stderr: %s" % (stderr_lacks, r.stderr))
        outs.append(r.stdout)
    if outs[0] != want:
        fail("expected %r" % want)
    if outs[0] != outs[1]:
        fail("two runs differ")


def twice_exact(args, cmd, prefix=(), extra=(), stderr_has=None, stderr_lacks=None):
    twice(args, cmd, expected_timers(), prefix, extra=extra, stderr_has=stderr_has, stderr_lacks=stderr_lacks)


def notified_expected():
    """Whether waits are answered by the controller (docs/tracer.md "Notified sleeps"): Linux 6.6,
    the kernel count (root), neither VTIME_IDLE=proc nor VTIME_NOTIFY=0."""
    release = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    return (os.geteuid() == 0 and release >= (6, 6) and os.environ.get("VTIME_IDLE", "auto") != "proc" and
            os.environ.get("VTIME_NOTIFY") != "0")


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def vtime_segments():
    return {n for n in os.listdir("/dev/shm") if n.startswith("vtime.")}


def settime_c(root, traced):
    """What settime_calls.c prints, as root (in a user namespace) or as nobody."""
    def line(what, moved):
        if root:
            return "%-26s -> 0 (ok): realtime %s s, monotonic +0.000000000 s\n" % (what, moved)
        return "%-26s -> -1 (Operation not permitted): realtime +0.000000000 s, monotonic +0.000000000 s\n" % what
    out = "clock_settime(MONOTONIC)   -> -1 (Invalid argument): realtime +0.000000000 s, monotonic +0.000000000 s\n"
    out += line("clock_settime(+1 h)", "+3600.000000000")
    out += line("settimeofday(-10 s)", "-10.000000000")
    out += line("adjtimex(+10.5 s)", "+10.500000000")
    out += line("clock_adjtime(-0.5 s)", "-0.500000000")
    if traced:
        out += line("inline clock_settime(+1 s)", "+1.000000000")
    elif root:
        # The clock guard: no tracer to emulate the instruction, the call fails before the kernel.
        out += ("inline clock_settime(+1 s) -> -1 (Function not implemented): realtime +0.000000000 s, "
                "monotonic +0.000000000 s\n")
    else:
        # No guard for a process that may not set the time: the kernel refuses it, as natively.
        out += line("inline clock_settime(+1 s)", "")
    out += "adjtimex(read) -> 0: the clock read\na child's realtime agrees\n"
    # Realtime moved by 3600 - 10 + 10.5 - 0.5 (+ 1 where the inline set is emulated) s: the sleep
    # to the start + 2 h ends that much sooner on the monotonic clock.
    moved = (3601 if traced else 3600) if root else 0
    return out + "an absolute realtime sleep to the start + 2 h ended at monotonic %+.9f s\n" % (7200 - moved)


SETTIME_GO_ROOT = "settimeofday(+1 h): <nil>\nwall clock moved 3600 s, monotonic 0.000000 s\nslept: monotonic 1.000000 s\n"
SETTIME_GO_NOBODY = ("settimeofday(+1 h): operation not permitted\nwall clock moved 0 s, monotonic 0.000000 s\n"
                     "slept: monotonic 1.000000 s\n")


def unprivileged_count(args, cmd):
    """nobody has the kernel's count loaded by vtime-treewatch, when the build gave the helper its
    capabilities (as root): VTIME_IDLE=kernel then runs, exactly. With a copy of the helper that
    has none (or none at all), vtime says once that idle decisions read /proc, and why (docs/cli.md
    "What the machine must allow"), unless VTIME_IDLE=proc asked for that rule."""
    helper = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(args.vtime))), "shim", "vtime-treewatch")
    proc_asked = os.environ.get("VTIME_IDLE") == "proc"
    try:
        granted = len(os.getxattr(helper, "security.capability")) > 0
    except OSError:
        granted = False
    if granted and not proc_asked:
        os.environ["VTIME_IDLE"] = "kernel"
        twice_exact(args, cmd, UNPRIVILEGED, stderr_lacks="/proc")
        del os.environ["VTIME_IDLE"]
    else:
        print("note: %s has no capabilities: only the /proc rule is checked" % helper)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        copy = os.path.join(d, "vtime-treewatch")
        shutil.copy(helper if os.path.exists(helper) else "/bin/true", copy)  # copy(): no xattrs
        os.environ["VTIME_TREEWATCH"] = copy
        said = None if proc_asked else "vtime: idle decisions read /proc"
        twice_exact(args, cmd, UNPRIVILEGED, stderr_has=said)
        del os.environ["VTIME_TREEWATCH"]


def settime_case(args, cmd, want_root, want_nobody):
    """Clock setting by a traced program, as root (in a user namespace) and as nobody."""
    probe = subprocess.run(USERNS_ROOT + ["true"], capture_output=True)
    if probe.returncode != 0:
        # Without a user namespace there is no safe way to give the program CAP_SYS_TIME.
        print("SKIP: no user namespaces here: %s" % probe.stderr.decode().strip())
        sys.exit(SKIP)
    host_before = time.time()
    twice(args, cmd, want_root, USERNS_ROOT)
    twice(args, cmd, want_nobody, UNPRIVILEGED)
    moved = time.time() - host_before
    if not 0 <= moved < 60:
        fail("the host's clock moved by %.3f s" % moved)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", nargs="?")
    p.add_argument("--list", action="store_true")
    p.add_argument("--vtime")
    p.add_argument("--bin")
    args = p.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    b = lambda name: os.path.join(args.bin, name)
    c = args.case
    if c == "go_static":
        # Its poller's timed epoll waits answered by the controller where the kernel allows.
        twice_exact(args, [b("timers_static")], extra=["--stats"], stderr_has=" notified waits" if notified_expected() else None)
        if notified_expected():
            os.environ["VTIME_NOTIFY"] = "0"  # and with the tracer's own waits
            twice_exact(args, [b("timers_static")])
    elif c == "go_cgo":
        twice_exact(args, [b("timers_cgo")])
    elif c == "go_unprivileged":
        unprivileged_count(args, [b("timers_static")])
    elif c == "go_via_shell":
        twice_exact(args, ["sh", "-c", b("timers_static") + "; true"])
    elif c == "go_spawns":
        twice(args, [b("spawn")], "sleep 1.5 done at 1.500000\nsleep 0.25 done at 1.750000\ndate says 00:00:01\n"
              "pipe said ready at 2.250000\n")
    elif c == "go_syscall_timers":
        want = SYSCALL_TIMERS
        twice(args, [b("syscall_timers_static")], want, timeout=60)
        cgo = ("a C condition variable a Go timer signals after 0.3 s: at 0.300000\n"
               "AfterFunc(0.5 s) during C's sleep(2) at 0.800000; sleep done at 2.300000\n") + want
        for cmd, prefix, expect in (([b("syscall_timers_cgo")], (), cgo),
                                    ([b("syscall_timers_static")], ("env", "GOMAXPROCS=2"), want)):
            r = run(args, cmd, prefix, timeout=60)
            if r.returncode != 0 or r.stdout != expect:
                fail("exit %d, expected %r" % (r.returncode, expect))
    elif c == "serial_spawn":
        # A held vfork child hung the run in some runs only (a race of two stops): three runs.
        spawned = "system: 0 at 0.500000\nposix_spawn: 0 at 0.750000\n"
        twice(args, [b("serial_spawn")], spawned, extra=["--serialize-threads"], timeout=20)
        for cmd, expect in (([b("serial_spawn")], spawned), ([b("syscall_timers_static")], SYSCALL_TIMERS)):
            r = run(args, cmd, extra=["--serialize-threads"], timeout=20)
            if r.returncode != 0 or r.stdout != expect:
                fail("exit %d, expected %r" % (r.returncode, expect))
    elif c == "held_call":
        # Before the poller was ignored here (go_sysmon.h), the goroutines waited for the fsyncs
        # (0 4000 10000 10000 10000), and in etcd which side of a call a goroutine ran on was a
        # race in real time.
        want = "0 2000 4000 6000 8000 end 10000\n"
        for _ in range(3):
            r = run(args, ["env", "VTIME_SYNC_COST=2000000", b("held_call")], extra=["--serialize-threads"], timeout=60)
            if r.returncode != 0 or r.stdout != want:
                fail("exit %d, expected %r" % (r.returncode, want))
    elif c == "timer_slack":
        # Without Go's preemption signal: sysmon sends it to a thread in a long raw system call
        # (here the nanosleeps) when its looks, housekeeping that vtime leaves to the runtime's
        # races, find it there 10 ms apart; the sleep then resumes with the time left plus a new
        # slack (as on Linux), 100 us late instead of 50.
        prog = ["env", "GODEBUG=asyncpreemptoff=1", b("slack")]
        twice(args, prog, "sleep 1000\nsleep_short 50\nnanosleep 50\nshared 550 50\n", extra=["--timer-slack", "50us"])
        twice(args, prog, "sleep 0\nsleep_short 0\nnanosleep 0\nshared 0 0\n")
    elif c == "go_scavenger":
        for prog in ("scavenger", "scavenger_pie"):
            for _ in range(2):
                r = run(args, ["env", "GODEBUG=scavtrace=1", b(prog)], extra=["--stats"], timeout=60)
                if r.returncode != 0 or r.stdout != "done at 3.000000\n":
                    fail("exit %d, expected 'done at 3.000000'" % r.returncode)
                if ", 3 advances," not in r.stderr:
                    fail("more instants than the program's three sleeps")
                cycles = [l for l in r.stderr.splitlines() if l.startswith("scav ")]
                if not cycles or any(not l.startswith("scav 0 KiB work") for l in cycles):
                    fail("the scavenger released memory: %r" % cycles)
    elif c == "go_constant":
        plain = "period 1000000000 ns, done at 3.000000\n"
        for prog in ("constant", "constant_pie"):
            twice(args, [b(prog)], plain)
            twice(args, ["env", "VTIME_GO_CONSTANT=main.period:1000000000:1250000000", b(prog)],
                  "period 1250000000 ns, done at 3.750000\n")
            for value, why in (("main.nothere:1000000000:7", "main.nothere left as it is"),
                               ("main.period:999:7", "main.period left as it is: main.period loads 999 nowhere"),
                               ("main.period:1000000000", "VTIME_GO_CONSTANT ignored: 'main.period:1000000000' is not")):
                twice(args, ["env", "VTIME_GO_CONSTANT=" + value, b(prog)], plain, stderr_has=why)
    elif c == "write_cost":
        out = "".join("out %d\n" % i for i in range(5))
        charged = out + "stderr 20000 us, stdout 0 us, ticks 6; sync 0 us\n"
        synced = out + "stderr 0 us, stdout 0 us, ticks 2; sync 6000 us\n"
        free = out + "stderr 0 us, stdout 0 us, ticks 0; sync 0 us\n"
        # With thread turns, which Go's determinism needs (docs/tracer.md), the whole output.
        threads = ["--serialize-threads"]
        twice(args, ["env", "VTIME_WRITE_COST=2:1000000", b("write_cost")], charged, extra=threads, timeout=60)
        twice(args, ["env", "VTIME_SYNC_COST=2000000", b("write_cost")], synced, extra=threads, timeout=60)
        os.environ["VTIME_WRITE_COST"] = "2:1000000"
        twice(args, [b("write_cost")], charged, extra=threads, timeout=60)
        for value in ("", "2:", "x:5", "2:5x", "2:0"):
            os.environ["VTIME_WRITE_COST"] = value
            twice(args, [b("write_cost")], free, extra=threads, timeout=60)
        del os.environ["VTIME_WRITE_COST"]
        # VTIME_WRITE_MATCH: only the lines containing one of its texts pay ("line 1", "line 10" to
        # "line 19": 11 of the 20; empty texts and one found nowhere change nothing).
        twice(args, ["env", "VTIME_WRITE_COST=2:1000000", "VTIME_WRITE_MATCH=|line 1||nowhere", b("write_cost")],
              out + "stderr 11000 us, stdout 0 us, ticks 3; sync 0 us\n", extra=threads, timeout=60)
        # Without them, the charges are the same; the ticker's goroutine runs when it may.
        for env, want in (("VTIME_WRITE_COST=2:1000000", "stderr 20000 us, stdout 0 us"), ("VTIME_SYNC_COST=2000000", "sync 6000 us")):
            r = run(args, ["env", env, b("write_cost")], timeout=60)
            if r.returncode != 0 or want not in r.stdout:
                fail("exit %d, expected %r" % (r.returncode, want))
    elif c == "go_spin":
        twice(args, [b("spin")], "spun until 0.100000\n", timeout=60)
    elif c == "go_spin_real":
        r = run(args, [b("spin")], timeout=60, extra=["--cpu-model", "real"])
        if r.returncode != 0 or not r.stdout.startswith("spun until "):
            fail("exit %d" % r.returncode)
        spun = float(r.stdout.split()[-1])
        if not 0.1 <= spun < 30:
            fail("the loop saw %.6f s pass" % spun)
    elif c == "settime_go":
        settime_case(args, [b("settime")], SETTIME_GO_ROOT, SETTIME_GO_NOBODY)
    elif c == "settime_static":
        settime_case(args, [b("static_settime")], settime_c(True, True), settime_c(False, True))
    elif c == "settime_dynamic":
        settime_case(args, [b("dynamic_settime")], settime_c(True, False), settime_c(False, False))
    elif c in ("static_signal", "static_restart", "static_c", "static_proc", "static_direct"):
        if c == "static_proc":
            os.environ["VTIME_IDLE"] = "proc"
        if c == "static_direct":
            os.environ["VTIME_NOTIFY"] = "0"
        whole = c in ("static_proc", "static_direct")
        if c == "static_signal" or whole:
            twice(args, [b("static_clock"), "signal"], "nanosleep -1 (Interrupted system call) after 1.000000000 s, 9.000000000 s left\n")
        if c == "static_restart" or whole:
            # Advances at 1, 2, 3, 4 and 6 s: none at the interrupted sleep's 5 s.
            twice(args, [b("static_clock"), "restart"],
                  "nanosleep 0 at 3.000000000 s; clock_nanosleep Interrupted system call at 4.000000000 s; "
                  "child gone at 6.000000000 s\n", extra=["--stats"], stderr_has=" 5 advances,")
        if c == "static_c" or whole:
            # 2024-01-01T00:00:00Z is 1704067200; 3 s later. Its clock_nanosleep is answered by
            # the controller (notified sleeps) where the kernel allows it: Linux 6.6 and the
            # kernel count (root); never with VTIME_IDLE=proc or VTIME_NOTIFY=0.
            notified = c == "static_c" and notified_expected()
            twice(args, [b("static_clock")],
                  "select 0, elapsed 3.000000000 s, wall 1704067203.000000000, time() 1704067203\n",
                  extra=["--stats"], stderr_has=" notified waits" if notified else None)
            if whole and " notified waits" in run(args, [b("static_clock")], extra=["--stats"]).stderr:
                fail("%s: a sleep was answered by the controller" % c)
            # Four threads sleeping at once (static_threads.c), the instants they wake at.
            wakes = []
            for k in range(4):
                t = 0
                for i in range(5):
                    t += 1000000000 if k == 2 else (k + 1) * 100000000 + i * 1000
                    wakes.append((t, "thread %d round %d at %d.%09d\n" % (k, i, t // 10**9, t % 10**9)))
            twice(args, [b("static_threads")], "".join(line for _, line in sorted(wakes)))
            # A process's sleeps across its execs (each image's sleep read from its own memory).
            twice(args, [b("static_threads"), "exec", "1"],
                  "image 1 at 1704067200.250000000\nimage 2 at 1704067200.750000000\nimage 3 at 1704067201.500000000\n")
    elif c == "exec_thread":
        for idle in ("auto", "proc"):
            os.environ["VTIME_IDLE"] = idle
            r = run(args, [b("exec_thread")], extra=["--on-deadlock", "exit"])
            if r.returncode != 121 or "blocked forever at virtual time 1.000000000 s" not in r.stderr:
                fail("expected the tree blocked for ever at virtual 1 s (exit 121), VTIME_IDLE=%s" % idle)
    elif c == "static_timers":
        # Natively the same lines, with times only about these (static_timers.c).
        want = ("timerfd: 1 expiration(s) at 1.000000000\n"
                "timerfd: 1 expiration(s) at 1.250000000\n"
                "timerfd: 2 expiration(s) at 1.850000000\n"
                "timerfd_gettime: 0.150000000 left, interval 0.250000000\n"
                "disarmed with 0.150000000 left\n"
                "read before it expires: Resource temporarily unavailable\n"
                "epoll: 1 ready at 3.350000000, 1 expiration(s)\n"
                "POSIX timer signal at 3.850000000: SI_TIMER, value 42, 0.000000000 left\n"
                "pending signal taken at 4.200000000, timer_getoverrun 2\n"
                "SIGEV_THREAD_ID signal at 4.500000000\n"
                "SIGEV_THREAD callback at 4.750000000, value 7\n"
                "alarm(2) returns 5\n"
                "SIGALRM at 6.750000000\n"
                "SIGALRM 4 at 7.050000000\n"
                "getitimer: 0.070000 left, interval 0.100000\n"
                "after disarming: 4 alarms at 7.580000000\n")
        twice(args, [b("static_timers")], want)
        r = run(args, [b("static_timers")], UNPRIVILEGED)
        if r.returncode != 0 or r.stdout != want:
            fail("as nobody: exit %d, or other output" % r.returncode)
        twice(args, ["sh", "-c", b("static_timers") + " exec sleep 5; echo status $?; date -u +%T.%N"],
              "status 142\n00:00:02.000000000\n")
    elif c in ("serial_gate", "serial_gate_go", "serial_gate_dynamic"):
        prog = [b({"serial_gate": "serial_gate", "serial_gate_go": "serial_gate_go",
                   "serial_gate_dynamic": "dynamic_serial_gate"}[c])]
        def gated(more=()):
            r = run(args, prog + list(more), extra=["--serialize", "--stats"])
            if r.returncode != 0:
                fail("exit %d" % r.returncode)
            lines = r.stdout.splitlines()
            if len(lines) != 3 or not lines[2].startswith("parent done at 1.000"):
                fail("expected two children's lines and the parent's")
            kids = [l.split() for l in lines[:2]]  # NAME pid PID read 'DATA' at T
            got = {k[0]: (int(k[2]), k[4]) for k in kids}
            if got.get("second", (0, ""))[1] != "'12'" or got.get("first", (0, ""))[1] != "'x'":
                fail("the second child did not read both writes at once, or the first not its own")
            if kids[0][0] != "first":
                fail("held children did not run in start order:\n" + r.stdout)
            if any(k[-1] != "1.000" for k in kids):
                fail("a child did not run at virtual 1 s")
            return [" ".join([k[0]] + k[3:]) for k in kids], got["first"][0], got["second"][0]
        outs = [gated()[0] for _ in range(2)]
        if outs[0] != outs[1]:
            fail("two runs differ")
        if c in ("serial_gate", "serial_gate_dynamic") and os.geteuid() == 0:
            # Pids wrap around: whose turn comes first must not follow them (two vtime-k8s runs
            # once scheduled differently when kube-scheduler's pid had wrapped below the API
            # server's). Short-lived processes forked between the children make a window of
            # pids in which the wrap falls between them. How many pids the run takes before
            # its first child (and other tests, forking meanwhile) is learnt from each attempt's
            # first child and aimed at the middle of the window for the next.
            with open("/proc/sys/kernel/pid_max") as f:
                pid_max = int(f.read())
            spacers, taken, wrapped = 128, 8, False
            for attempt in range(12):
                last = pid_max - taken - spacers // 2
                with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                    f.write(str(last))
                out, first_pid, second_pid = gated(["200", str(spacers)])
                wrapped = first_pid > second_pid
                if out != outs[0]:
                    fail("pids wrapping around: %s, expected %s" % (out, outs[0]))
                if wrapped:
                    print("pids wrapped between the children (attempt %d)" % (attempt + 1))
                    break
                # Pids the run took before its first child: next time the wrap falls mid-window.
                taken = first_pid - last if first_pid > last else taken + spacers
            if not wrapped:
                fail("the pids never wrapped between the two children: the check did not happen")
        # Without the gate the second child usually runs while its parent computes (not checked:
        # a loaded machine may delay it past the computation).
        run(args, prog)
    elif c == "serial_threads":
        outs = []
        for _ in range(2):
            r = run(args, [b("serial_threads")], extra=["--serialize", "--stats"])
            if r.returncode != 0:
                fail("exit %d" % r.returncode)
            outs.append(r.stdout)
        if outs[0] != "A\nB\n":
            fail("the threads did not run one after another in the order they were made")
        if outs[0] != outs[1]:
            fail("two runs differ")
        run(args, [b("serial_threads")])  # without the gate B usually prints first (not checked)
    elif c == "serial_due":
        for gate in ("--serialize", "--serialize-threads"):
            outs = []
            for _ in range(2):
                r = run(args, [b("serial_due")], extra=[gate, "--stats"])
                if r.returncode != 0:
                    fail("%s: exit %d" % (gate, r.returncode))
                outs.append(r.stdout)
            if outs[0] != "B\nA\n":
                fail("%s: got %r: the threads due together did not run one per step, the first armed first" % (gate, outs[0]))
            if outs[0] != outs[1]:
                fail("%s: two runs differ" % gate)
        run(args, [b("serial_due")])  # without the gate both run at once: "A" first (not checked)
    elif c in ("serial_topup", "serial_futex", "serial_wake", "serial_ctl"):
        if c == "serial_topup":
            gate, want = "--serialize", "events 2: a b\n"
            progs = [[b(p)] + more for p in ("serial_topup", "dynamic_serial_topup") for more in ([], ["untimed"])]
        elif c == "serial_wake":
            gate, want, progs = "--serialize-threads", "W\nP\n", [[b(c)], [b(c), "untimed"]]
        elif c == "serial_ctl":
            # Both threads on one cpu, the poller at the lowest priority (serial_ctl.c): without
            # the wait at epoll_ctl's exit, the timed variant printed "P 0" and the untimed one
            # hung in 10 of 12 runs.
            pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))]
            gate, want, progs = "--serialize-threads", "W\nP 1\n", [pin + [b(c)], pin + [b(c), "untimed"]]
        else:
            gate, want, progs = "--serialize-threads", "A\nB\n", [[b(c)]]
        for prog in progs:
            outs = []
            for _ in range(2):
                r = run(args, prog, extra=[gate, "--stats"])
                if r.returncode != 0:
                    fail("%s: exit %d" % (" ".join(prog), r.returncode))
                outs.append(r.stdout)
            if outs[0] != want:
                fail("%s: got %r, want %r" % (" ".join(prog), outs[0], want))
            if outs[0] != outs[1]:
                fail("%s: two runs differ" % " ".join(prog))
        run(args, progs[0])  # without the gate: usually "events 1: a" / "B" / "P" first (not checked)
    elif c == "go_random":
        native = [subprocess.run([b("random")], capture_output=True, text=True, timeout=60).stdout for _ in range(2)]
        print("natively:\n" + "".join(native))
        if native[0] == native[1]:
            fail("two native runs printed the same: the program shows no randomness")
        outs = random_runs(args, [b("random")])
        if [l for l in native[0].splitlines() if l.startswith("crypto/rand")] == \
           [l for l in native[1].splitlines() if l.startswith("crypto/rand")]:
            fail("two native runs drew the same crypto/rand bytes")
    elif c == "go_random_patch":
        patched = ["env", "VTIME_GO_TICKS=patch"]
        outs = {}
        d = tempfile.mkdtemp(prefix="vtime-random-")
        try:
            for prog in ("random", "random_stripped", "random_pie"):
                # Each under the name "random": the seed of its random bytes comes from the name.
                os.makedirs(os.path.join(d, prog))
                shutil.copy(b(prog), os.path.join(d, prog, "random"))
                outs[prog] = random_runs(args, [os.path.join(d, prog, "random")], patched,
                                         route="0 trapped, 1 patched, 0 real")
        finally:
            shutil.rmtree(d, ignore_errors=True)
        if len(set(outs.values())) != 1:
            fail("the program as built, stripped and position-independent printed different things")
        auto = run(args, [b("random")], extra=["--stats"])
        if "1 trapped, 0 patched" in auto.stderr:
            if auto.stdout != outs["random"]:
                fail("the CPU's trap and the patched reads give different seeds")
        else:
            print("this machine does not trap the counter: the patched route is its only one")
    elif c == "go_raw_timers":
        twice(args, [b("raw_timers")], "timerfd: 1 expiration(s) at 0.500000\ntimerfd: 1 expiration(s) at 0.750000\n"
              "timerfd: 1 expiration(s) at 1.000000\nSIGALRM at 1.300000\n")
    elif c == "real_timeout":
        r = run(args, [b("static_clock"), "sigtimedwait"], timeout=60)
        if r.returncode != 123:
            fail("expected exit 123 (a real timeout vtime does not control), got %d" % r.returncode)
        if "rt_sigtimedwait with a real timeout of 30.000000000 s" not in r.stderr or "blocked forever" in r.stderr:
            fail("the call and its timeout are not named, or it is called a deadlock")
    elif c == "etcd":
        if not shutil.which("etcd") or not shutil.which("etcdctl"):
            fail("etcd and etcdctl are not installed (Debian's etcd-server and etcd-client)")
        outs = []
        for _ in range(2):
            d = tempfile.mkdtemp(prefix="vtime-etcd-")
            try:
                ports = free_ports(2)
                r = run(args, ["sh", os.path.join(HERE, "etcd_lease.sh"), d, str(ports[0]), str(ports[1])])
                if r.returncode != 0:
                    with open(os.path.join(d, "etcd.log")) as f:
                        print(f.read())
                    fail("exit %d" % r.returncode)
                outs.append(r.stdout)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        want = ("etcd ready: yes\nput with a 60 s lease at 00:00:03\nat 00:00:53: lease-key=held\n"
                "at 00:01:13: lease-key=\netcd exited\n")
        if outs[0] != want:
            fail("expected:\n" + want)
        if outs[0] != outs[1]:
            fail("two runs differ")
    elif c == "kill_vtime":
        before = vtime_segments()
        proc = subprocess.Popen([args.vtime, "exec", "--", b("forever")], stdout=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        print("forever says: %r" % line)
        if not line.startswith("ready "):
            fail("the program did not start")
        pids = [int(line.split()[1])]
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True).stdout
        pids += [int(x) for x in children.split()]  # the tracer and the command
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 2
        alive = pids
        while time.monotonic() < deadline:
            alive = [p for p in pids if os.path.exists("/proc/%d" % p) and
                     not open("/proc/%d/stat" % p).read().split(")")[1].split()[0] == "Z"]
            if not alive:
                break
            time.sleep(0.05)
        if alive:
            fail("still alive 2 s after vtime was killed: %s" % alive)
        left = vtime_segments() - before
        if left:
            fail("left in /dev/shm: %s" % sorted(left))
        print("every process of the tree is gone, nothing left in /dev/shm")
    else:
        fail("unknown case %s" % c)
    print("PASS")


main()
