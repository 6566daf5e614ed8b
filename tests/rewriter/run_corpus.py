#!/usr/bin/env python3
"""Golden tests of `vtime rewrite`, run by ctest against the real tool binary.

Each check copies the corpus input to a fresh work directory, writes a compile_commands.json
the way a GCC build would (compiler first, -c, -o, a GCC-only flag, -Werror: the tool must
filter them), runs the tool and compares with the expected files:

  golden      --in-place over every file: outputs == corpus/expected, report == expected report
  idempotent  a second run over the rewritten tree makes zero edits
  fixes       --export-fixes + clang-apply-replacements == --in-place
  diff        the default diff mode changes nothing; the diff applied with patch == --in-place
  compile     the rewritten sources compile against libvtime's headers (vtime.h, std.h)
  clean       a run where every site is rewritten exits 0
  usage       bad command lines exit 2
  named       a file named on the command line outside the current directory (no compilation
              database, no -I for libvtime) is rewritten; a header it includes from there is
              not (outside --root); a second run parses the rewritten file and edits nothing

Usage: run_corpus.py CHECK --tool BIN --corpus DIR --include DIR --work DIR
                     [--apply-replacements BIN] [--update]
--update rewrites corpus/expected and the expected report from the tool's output (review the
git diff before committing it).
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys

SOURCES = (".c", ".cpp")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def prepare(args, name):
    work = os.path.join(os.path.abspath(args.work), name)
    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, "src")
    shutil.copytree(os.path.join(args.corpus, "input"), src)
    with open(os.path.join(args.corpus, "flags.json")) as f:
        extra = json.load(f)
    build = os.path.join(work, "build")
    os.makedirs(build)
    entries = []
    for name_ in sorted(os.listdir(src)):
        if not name_.endswith(SOURCES):
            continue
        cxx = name_.endswith(".cpp")
        cmd = ["g++" if cxx else "gcc"]
        cmd += ["-std=c++20", "-fconcepts-diagnostics-depth=2"] if cxx else ["-std=gnu11"]
        cmd += ["-Wall", "-Werror", "-I" + args.include] + extra.get(name_, [])
        cmd += ["-MD", "-MF", name_ + ".d", "-c", os.path.join("..", "src", name_), "-o", name_ + ".o"]
        entries.append({"directory": build, "arguments": cmd, "file": os.path.join("..", "src", name_)})
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump(entries, f, indent=1)
    return work, src, build


def run_tool(args, work, extra, expect_codes):
    cmd = [args.tool, "rewrite", "-p", os.path.join(work, "build")] + extra
    r = subprocess.run(cmd, cwd=os.path.join(work, "src"), capture_output=True, text=True)
    if r.returncode not in expect_codes:
        print(r.stdout)
        print(r.stderr)
        fail("%s exited %d, expected %s" % (" ".join(cmd), r.returncode, expect_codes))
    return r


def tree_files(d):
    return sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)) and ".vtime-" not in n)


def compare_tree(got, expected, what):
    names = tree_files(expected)
    if tree_files(got) != names:
        fail("%s: file list %s != %s" % (what, tree_files(got), names))
    bad = [n for n in names if not filecmp.cmp(os.path.join(got, n), os.path.join(expected, n), shallow=False)]
    if bad:
        for n in bad:
            subprocess.run(["diff", "-u", os.path.join(expected, n), os.path.join(got, n)])
        fail("%s: differs from expected: %s" % (what, bad))


def normalized_report(path):
    with open(path) as f:
        rep = json.load(f)
    rep.pop("root", None)
    rep.pop("mode", None)
    return rep


def check_golden(args):
    work, src, _ = prepare(args, "golden")
    report = os.path.join(work, "report.json")
    run_tool(args, work, ["--in-place", "--report", report], [1])
    expected_dir = os.path.join(args.corpus, "expected")
    expected_report = os.path.join(args.corpus, "expected-report.json")
    if args.update:
        shutil.rmtree(expected_dir, ignore_errors=True)
        shutil.copytree(src, expected_dir)
        with open(expected_report, "w") as f:
            json.dump(normalized_report(report), f, indent=2, sort_keys=True)
            f.write("\n")
        print("updated " + expected_dir)
        return
    compare_tree(src, expected_dir, "in-place output")
    with open(expected_report) as f:
        want = json.load(f)
    got = normalized_report(report)
    if got != want:
        with open(os.path.join(work, "report.normalized.json"), "w") as f:
            json.dump(got, f, indent=2, sort_keys=True)
            f.write("\n")
        subprocess.run(["diff", "-u", expected_report, os.path.join(work, "report.normalized.json")])
        fail("report differs from expected")
    # The file with a syntax error is reported and left byte-identical.
    if not any(f["path"] == "broken.c" and f["status"] == "failed" for f in got["files"]):
        fail("broken.c not reported as failed")
    if not filecmp.cmp(os.path.join(src, "broken.c"), os.path.join(args.corpus, "input", "broken.c"), shallow=False):
        fail("broken.c was modified")


def check_idempotent(args):
    work, src, _ = prepare(args, "idempotent")
    run_tool(args, work, ["--in-place"], [1])
    snapshot = os.path.join(work, "after-first")
    shutil.copytree(src, snapshot)
    report = os.path.join(work, "report2.json")
    r = run_tool(args, work, ["--in-place", "--report", report], [1])
    rep = normalized_report(report)
    failed = [f["path"] for f in rep["files"] if f["status"] == "failed"]
    if failed != ["broken.c"]:
        print(r.stderr)
        fail("second run: the rewritten files must parse (with libvtime's headers): failed %s" % failed)
    if rep["summary"]["rewritten"] != 0 or rep["summary"]["changed_files"] != 0:
        print(r.stderr)
        fail("second run made edits: %s" % rep["summary"])
    compare_tree(src, snapshot, "second run")


def check_fixes(args):
    work, src, _ = prepare(args, "fixes")
    fixes_dir = os.path.join(work, "fixes")
    os.makedirs(fixes_dir)
    run_tool(args, work, ["--export-fixes", os.path.join(fixes_dir, "vtime.yaml")], [1])
    compare_tree(src, os.path.join(args.corpus, "input"), "export-fixes must not edit")
    r = subprocess.run([args.apply_replacements, fixes_dir], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        fail("clang-apply-replacements failed")
    compare_tree(src, os.path.join(args.corpus, "expected"), "clang-apply-replacements output")


def check_diff(args):
    work, src, _ = prepare(args, "diff")
    r = run_tool(args, work, [], [1])
    compare_tree(src, os.path.join(args.corpus, "input"), "diff mode must not edit")
    if not r.stdout.startswith("--- a/"):
        fail("no unified diff on stdout")
    p = subprocess.run(["patch", "-p1", "--quiet", "--no-backup-if-mismatch"], input=r.stdout, cwd=src,
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        fail("patch could not apply the diff")
    compare_tree(src, os.path.join(args.corpus, "expected"), "patched output")


def check_compile(args):
    expected = os.path.join(args.corpus, "expected")
    with open(os.path.join(args.corpus, "flags.json")) as f:
        extra = json.load(f)
    for n in tree_files(expected):
        if not n.endswith(SOURCES) or n == "broken.c":
            continue
        cxx = n.endswith(".cpp")
        cmd = ["g++", "-std=c++20"] if cxx else ["gcc", "-std=gnu11"]
        cmd += ["-fsyntax-only", "-Wall", "-I" + args.include] + extra.get(n, []) + [os.path.join(expected, n)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr)
            fail("rewritten %s does not compile" % n)


def check_clean(args):
    work, src, _ = prepare(args, "clean")
    report = os.path.join(work, "report.json")
    run_tool(args, work, ["--in-place", "--report", report, "c_calls.c", "user_names.cpp", "user_b.cpp"], [0])
    rep = normalized_report(report)
    if rep["summary"]["skipped"] != 0 or rep["summary"]["rewritten"] == 0:
        fail("clean run: %s" % rep["summary"])
    for n in ("c_calls.c", "user_names.cpp"):
        if not filecmp.cmp(os.path.join(src, n), os.path.join(args.corpus, "expected", n), shallow=False):
            fail("clean run: %s differs from expected" % n)


def check_usage(args):
    work, _, _ = prepare(args, "usage")
    run_tool(args, work, ["--in-place", "--diff", "c_calls.c"], [2])
    run_tool(args, work, ["no-such-file.c"], [2])
    r = subprocess.run([args.tool, "rewrite", "-p", os.path.join(work, "no-such-dir"), "x.c"], capture_output=True)
    if r.returncode != 2:
        fail("missing build dir exited %d" % r.returncode)


def check_named(args):
    work = os.path.join(os.path.abspath(args.work), "named")
    shutil.rmtree(work, ignore_errors=True)
    elsewhere = os.path.join(work, "elsewhere")
    src = os.path.join(work, "src")
    os.makedirs(elsewhere)
    os.makedirs(src)
    helper = "static inline void pause_a_bit(void) { usleep(1000); }\n"
    with open(os.path.join(src, "helper.h"), "w") as f:
        f.write("#include <unistd.h>\n" + helper)
    with open(os.path.join(src, "named.c"), "w") as f:
        f.write("#include <time.h>\n#include <unistd.h>\n#include \"helper.h\"\n\n"
                "int main(void) {\n  struct timespec t;\n  clock_gettime(CLOCK_MONOTONIC, &t);\n"
                "  sleep(1);\n  pause_a_bit();\n  return 0;\n}\n")

    def run(report):
        cmd = [args.tool, "rewrite", "--in-place", "--report", report, os.path.join("..", "src", "named.c")]
        r = subprocess.run(cmd, cwd=elsewhere, capture_output=True, text=True)
        if r.returncode != 1:
            print(r.stdout, r.stderr)
            fail("%s exited %d, expected 1 (the header's site is outside the root)" % (" ".join(cmd), r.returncode))
        rep = normalized_report(report)
        skipped = [(s["file"], s["reason"]) for s in rep["sites"] if s["status"] == "skipped"]
        if len(skipped) != 1 or not skipped[0][0].endswith("src/helper.h") or "outside the project root" not in skipped[0][1]:
            fail("expected exactly the header's usleep skipped as outside the root, got %s" % skipped)
        if any(f["status"] == "failed" for f in rep["files"]):
            print(r.stderr)
            fail("a file failed to parse: %s" % rep["files"])
        return rep

    first = run(os.path.join(work, "report1.json"))
    with open(os.path.join(src, "named.c")) as f:
        text = f.read()
    for want in ("#include <vtime/vtime.h>", "vtime_clock_gettime(", "vtime_sleep("):
        if want not in text:
            fail("named.c not rewritten (%s missing):\n%s" % (want, text))
    if first["summary"]["rewritten"] != 2:
        fail("first run: %s" % first["summary"])
    with open(os.path.join(src, "helper.h")) as f:
        if helper not in f.read():
            fail("helper.h (outside the root, not named) was edited")
    second = run(os.path.join(work, "report2.json"))
    if second["summary"]["rewritten"] != 0 or second["summary"]["changed_files"] != 0:
        fail("second run made edits: %s" % second["summary"])
    with open(os.path.join(src, "named.c")) as f:
        if f.read() != text:
            fail("second run changed named.c")


CHECKS = {
    "golden": check_golden,
    "idempotent": check_idempotent,
    "fixes": check_fixes,
    "diff": check_diff,
    "compile": check_compile,
    "clean": check_clean,
    "usage": check_usage,
    "named": check_named,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=sorted(CHECKS))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--apply-replacements", default="clang-apply-replacements")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    args.corpus = os.path.abspath(args.corpus)
    args.include = os.path.abspath(args.include)
    args.tool = os.path.abspath(args.tool)
    CHECKS[args.check](args)
    print("PASS: " + args.check)


if __name__ == "__main__":
    main()
