#!/usr/bin/env python3
"""What `cmake --install` and `cpack -G DEB` deliver, checked from the outside.

Cases (ctest runs each as install.CASE; `prepare` installs into WORK/root with DESTDIR and prefix
/usr, the others use that tree and nothing of the build tree):
  prepare            cmake --install into WORK/root/usr; the expected files are there
  exec               the installed `vtime exec -- sleep 100` works with only the installed tree on
                     PATH, and preloads the installed shim (not the build tree's); as nobody, with
                     the installed vtime-treewatch given its capabilities (as the .deb's postinst
                     does), it runs with the kernel's count (VTIME_IDLE=kernel)
  rewrite_cmake      the installed `vtime rewrite` rewrites a user's program named on the command
                     line; it builds fully static through find_package(vtime) and sleeps 100
                     virtual seconds under the installed `vtime exec`, real ones without it
  rewrite_pkgconfig  the same program built with `cc -static ... $(pkg-config --cflags --libs
                     --static vtime)`
  man                `man -l` renders every installed page; every option of every command's
                     --help (and of vtime-slurm/vtime-k8s in theirs) appears in its page
  completion         the installed bash completion completes subcommands, options, option values
                     and the wrapped command after --
  deb                `cpack -G DEB` builds a package whose Depends are run-time packages only
                     (no -dev), holding the files above, with a postinst that grants the helper
                     its capabilities

Usage: install_cases.py CASE --build BUILD_DIR --source SOURCE_DIR --work WORK_DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

EXPECTED = [
    "usr/bin/vtime", "usr/bin/vtime-rewrite", "usr/lib/vtime/libvtime-shim.so", "usr/lib/vtime/vtime-tracer",
    "usr/lib/vtime/vtime-treewatch",
    "usr/include/vtime/vtime.h", "usr/include/vtime/std.h", "usr/lib/libvtime.a", "usr/lib/libvtime.so.0",
    "usr/lib/cmake/vtime/vtimeConfig.cmake", "usr/lib/pkgconfig/vtime.pc", "usr/share/man/man1/vtime.1",
    "usr/share/man/man1/vtime-exec.1", "usr/share/bash-completion/completions/vtime",
    "usr/share/doc/vtime/README.md", "usr/share/doc/vtime/docs/cli.md",
    "usr/share/vtime/examples/platforms/cluster16.xml", "usr/lib/vtime/examples/periodic_fcfs",
]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, env=None, cwd=None, code=0, what=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    if code is not None and r.returncode != code:
        print(r.stdout[-4000:])
        print(r.stderr[-4000:])
        fail("%s exited %d, expected %d" % (what or " ".join(cmd), r.returncode, code))
    return r


class Installed:
    def __init__(self, work):
        self.root = os.path.join(work, "root")
        self.usr = os.path.join(self.root, "usr")
        self.bin = os.path.join(self.usr, "bin")
        if not os.path.exists(os.path.join(self.bin, "vtime")):
            fail("nothing installed in %s (install.prepare runs first)" % self.root)

    def env(self, **extra):
        """Only the installed tree and the system on PATH; no VTIME_* variable."""
        env = {"PATH": self.bin + ":/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LC_ALL": "C"}
        env.update(extra)
        return env

    def vtime(self):
        return os.path.join(self.bin, "vtime")


def case_prepare(a):
    root = os.path.join(a.work, "root")
    shutil.rmtree(root, ignore_errors=True)
    env = dict(os.environ, DESTDIR=root)
    run(["cmake", "--install", a.build, "--prefix", "/usr"], env=env)
    missing = [p for p in EXPECTED if not os.path.exists(os.path.join(root, p))]
    if missing:
        fail("not installed: %s" % missing)


def case_exec(a):
    inst = Installed(a.work)
    r = run([inst.vtime(), "exec", "--stats", "--", "sh", "-c", "sleep 100; grep vtime-shim /proc/self/maps"],
            env=inst.env(), cwd=a.work)
    # 100 s and the 50 us a real kernel adds to a sleep (vtime exec's default sleep latency).
    if "virtual time 100.000050000 s" not in r.stderr:
        fail("installed vtime exec: no 100 s (and 50 us) of virtual time: %s" % r.stderr)
    shim = [line.split()[-1] for line in r.stdout.splitlines() if "vtime-shim" in line]
    want = os.path.join(inst.usr, "lib/vtime/libvtime-shim.so")
    if not shim or os.path.realpath(shim[0]) != os.path.realpath(want):
        fail("the wrapped shell preloaded %s, expected the installed %s" % (shim, want))
    r = run([inst.vtime(), "--version"], env=inst.env())
    if not r.stdout.startswith("vtime "):
        fail("vtime --version: %r" % r.stdout)
    helper = os.path.join(inst.usr, "lib/vtime/vtime-treewatch")
    if os.geteuid() != 0 or not shutil.which("setcap"):
        print("note: not root or no setcap: the installed helper is not checked as nobody")
        return
    run(["setcap", "cap_bpf,cap_perfmon=ep", helper])  # what the postinst does (DESTDIR grants none)
    r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", inst.vtime(), "exec", "--stats", "--",
             "sleep", "100"], env=inst.env(VTIME_IDLE="kernel"), cwd="/")
    if "virtual time 100.000050000 s" not in r.stderr or "/proc" in r.stderr:
        fail("the installed vtime as nobody, with the kernel count: %s" % r.stderr)


def rewritten_project(a, inst, name):
    """The user's program, copied and rewritten by the installed vtime, named from another folder."""
    proj = os.path.join(a.work, name)
    shutil.rmtree(proj, ignore_errors=True)
    shutil.copytree(os.path.join(a.source, "tests/install/project"), proj)
    elsewhere = os.path.join(a.work, name + "-cwd")
    os.makedirs(elsewhere, exist_ok=True)
    run([inst.vtime(), "rewrite", "--in-place", os.path.join(proj, "wait.c")], env=inst.env(), cwd=elsewhere)
    with open(os.path.join(proj, "wait.c")) as f:
        text = f.read()
    if "vtime_sleep(" not in text or "#include <vtime/vtime.h>" not in text:
        fail("the installed vtime rewrite did not rewrite wait.c:\n" + text)
    return proj


def check_program(inst, binary):
    if subprocess.run(["ldd", binary], capture_output=True).returncode == 0:
        fail("%s is dynamically linked" % binary)
    r = run([inst.vtime(), "exec", "--", binary, "100"], env=inst.env())
    if r.stdout.strip() != "slept_ns=100000050000":
        fail("under the installed vtime exec: %r (expected 100 s and the default 50 us of sleep latency)" % r.stdout)
    r = run([binary, "1"], env=inst.env())
    ns = int(r.stdout.strip().split("=")[1])
    if ns < 1000000000:
        fail("without a session the program slept %d ns, expected a real second" % ns)


def case_rewrite_cmake(a):
    inst = Installed(a.work)
    proj = rewritten_project(a, inst, "cmake-project")
    build = os.path.join(proj, "build")
    env = inst.env(CMAKE_PREFIX_PATH=inst.usr)
    run(["cmake", "-S", proj, "-B", build], env=env)
    run(["cmake", "--build", build], env=env)
    check_program(inst, os.path.join(build, "wait"))


def case_rewrite_pkgconfig(a):
    inst = Installed(a.work)
    proj = rewritten_project(a, inst, "pkgconfig-project")
    env = inst.env(PKG_CONFIG_PATH=os.path.join(inst.usr, "lib/pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "--static", "vtime"], env=env).stdout.split()
    binary = os.path.join(proj, "wait")
    run(["cc", "-static", "-o", binary, os.path.join(proj, "wait.c")] + flags, env=env)
    check_program(inst, binary)


def options_in(help_text):
    """Every option name a --help lists: '-h,--help', '--epoch TEXT', '-p,--build-dir DIR'."""
    names = set()
    for line in help_text.splitlines():
        m = re.match(r"\s+(-[-\w,]+)", line)
        if m:
            for n in m.group(1).split(","):
                if re.fullmatch(r"--?[\w][\w-]*", n):
                    names.add(n)
    return names


def rendered(page):
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "MANWIDTH": "250"}
    r = run(["man", "--no-hyphenation", "--no-justification", "-l", page], env=env)
    if len(r.stdout) < 200:
        fail("man -l %s rendered almost nothing" % page)
    return r.stdout


def case_man(a):
    inst = Installed(a.work)
    man1 = os.path.join(inst.usr, "share/man/man1")
    listing = run([inst.vtime(), "completion", "list"], env=inst.env()).stdout
    paths = [line.split("\t")[0] for line in listing.splitlines()]
    pages = sorted(os.listdir(man1))
    want = sorted(("vtime-" + p.replace(" ", "-") if p else "vtime") + ".1" for p in paths)
    if pages != want:
        fail("man pages %s, expected one per command %s" % (pages, want))
    for p in paths:
        page = os.path.join(man1, ("vtime-" + p.replace(" ", "-") if p else "vtime") + ".1")
        text = rendered(page)
        helps = [run([inst.vtime()] + p.split() + ["--help"], env=inst.env()).stdout]
        if p in ("slurm", "k8s"):
            helps.append(run([os.path.join(inst.bin, "vtime-" + p), "--help"], env=inst.env()).stdout)
        for h in helps:
            names = options_in(h)
            if not names:
                fail("no option found in the --help of %r" % p)
            missing = sorted(n for n in names if n not in text)
            if missing:
                fail("%s does not mention %s" % (os.path.basename(page), missing))
    print("%d pages rendered, every option present" % len(pages))


def complete(inst, words):
    """COMPREPLY of the installed completion for the words typed so far (the last is the cursor's)."""
    script = os.path.join(inst.usr, "share/bash-completion/completions/vtime")
    quoted = " ".join("'%s'" % w for w in words)
    cmd = 'source "%s"; COMP_WORDS=(%s); COMP_CWORD=%d; _vtime; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        script, quoted, len(words) - 1)
    r = run(["bash", "-c", cmd], env=inst.env())
    return [w for w in r.stdout.splitlines() if w]


def case_completion(a):
    inst = Installed(a.work)
    checks = [
        (["vtime", "ex"], ["exec"]),
        (["vtime", "trace", "s"], ["show", "stats"]),
        (["vtime", "exec", "--on-dead"], ["--on-deadlock"]),
        (["vtime", "exec", "--on-deadlock", ""], ["report", "exit"]),
        (["vtime", "run", "--sync", "ex"], ["exact"]),
        (["vtime", "workload", "from-swf", "--win"], ["--window", "--window-length"]),
        (["vtime", "rewrite", "--in-"], ["--in-place"]),
    ]
    for words, want in checks:
        got = complete(inst, words)
        if sorted(got) != sorted(want):
            fail("completion of %s: %s, expected %s" % (words, got, want))
    got = complete(inst, ["vtime", "exec", "--stats", "--", "slee"])
    if "sleep" not in got:
        fail("after --, the wrapped command's name is completed from PATH: %s" % got)


def case_deb(a):
    out = os.path.join(a.work, "deb")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run(["cpack", "-G", "DEB", "-B", out, "--config", os.path.join(a.build, "CPackConfig.cmake")], cwd=a.build)
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    if len(debs) != 1:
        fail("expected one .deb in %s, got %s" % (out, os.listdir(out)))
    deb = os.path.join(out, debs[0])
    info = run(["dpkg-deb", "-I", deb]).stdout
    m = re.search(r"^ Depends: (.*)$", info, re.M)
    if not m:
        fail("no Depends in dpkg-deb -I:\n" + info)
    depends = [d.strip().split()[0] for d in m.group(1).split(",")]
    dev = [d for d in depends if d.endswith("-dev") or d in ("cmake", "build-essential", "clang-19")]
    if dev:
        fail("build dependencies in Depends: %s" % dev)
    for lib in ("libc6", "libzmq5"):
        if lib not in depends:
            fail("%s missing from Depends: %s" % (lib, depends))
    listed = set()
    for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
        path = line.split(None, 5)[5].split(" -> ")[0]  # mode owner size date time path[ -> target]
        listed.add(path[2:] if path.startswith("./") else path)
    missing = [p for p in EXPECTED if p not in listed]
    if missing:
        fail("not in the package: %s" % missing)
    control = os.path.join(out, "control")
    run(["dpkg-deb", "-e", deb, control])
    postinst = os.path.join(control, "postinst")
    with open(postinst) as f:
        script = f.read()
    if "setcap cap_bpf,cap_perfmon=ep /usr/lib/vtime/vtime-treewatch" not in script or not os.access(postinst, os.X_OK):
        fail("the package's postinst does not grant the helper its capabilities:\n" + script)
    print("Depends: " + ", ".join(depends))


CASES = {
    "prepare": case_prepare,
    "exec": case_exec,
    "rewrite_cmake": case_rewrite_cmake,
    "rewrite_pkgconfig": case_rewrite_pkgconfig,
    "man": case_man,
    "completion": case_completion,
    "deb": case_deb,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    a.build, a.source, a.work = (os.path.abspath(p) for p in (a.build, a.source, a.work))
    os.makedirs(a.work, exist_ok=True)
    CASES[a.case](a)
    print("PASS: install.%s" % a.case)


if __name__ == "__main__":
    main()
