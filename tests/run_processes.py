"""The processes of a run still alive, found from /proc: shared by the bridge schedulers' tests
(tests/bridge_cases.py) and the validation benchmarks (bench/k8s_validation.py,
bench/slurm_validation.py), which all check that nothing of a run is left behind."""
import os


def processes_mentioning(text):
    """(pid, command line) of every process but this one whose command line contains text, or,
    when text is an absolute path, whose working directory is text or lies under it (vtime-k8s
    runs its components in the run's directory, with relative paths in their arguments)."""
    found = []
    path = text.rstrip("/") if text.startswith("/") else None
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            cwd = ""
        under = path is not None and (cwd == path or cwd.startswith(path + "/"))
        if text in cmdline or under:
            found.append((int(pid), cmdline))
    return found
