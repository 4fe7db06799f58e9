#!/usr/bin/env python3
"""`tracetool record -- PROG` where PROG is a shell-script shim (as pyenv's
`python3`: a bash script that runs a few helper processes, then execs the
real program), issue 23.

Every process the shim starts inherits the injection library. Checked:

- exec shim (bash runs `uname` and `dirname` 5 times each, then `exec`s the
  program, a C program built here that links libtracetool_capture.so and
  records a scope "shim_work" in the profile the injection library runs):
  the program's stdout and exit status are its own; "GPU capture off" is said
  once for the whole record (libcupti is made unfindable with
  TT_CAPTURE_CUPTI, so every process turns GPU capture off), and no
  `tracetool capture:` line twice; exactly one trace is written, the
  program's (valid JSON, the "shim_work" cpu_op in it): the 10 helpers,
  which recorded nothing, write none, and record says so in one line
  ("10 other processes (uname, dirname) recorded no event");
- a shim that runs the program as its child (no exec): the program's trace
  (it recorded a scope) is written although it is not the process record
  started; the shim itself, the process record started, writes its (empty)
  trace as any program record runs does; `uname` writes none.

Not run in a sanitizer build (the sanitizer's runtime must come first in
LD_PRELOAD), as test_record.py.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("record_shim")
INJECT = os.path.abspath(os.environ.get("TT_INJECT") or
                         os.path.join(ROOT, "build", "capture", "libtracetool_inject.so"))
SANITIZED = os.environ.get("TT_SANITIZED", "")
TIMEOUT = 180

PROG = r"""
#include <stdio.h>
#include <tracetool/capture.h>

static volatile long sink;

int main(int argc, char **argv)
{
    long k;
    {
        TT_CAP_SCOPE("shim_work"); /* recorded by the injected profile */
        for (k = 0; k < 200000; k++)
            sink += k;
    }
    printf("shim_prog ran %s\n", argc > 1 ? argv[1] : "");
    return 3;
}
"""

EXEC_SHIM = """#!/bin/bash
# as pyenv's shims: helpers first, then exec the real program
for i in 1 2 3 4 5; do
    uname >/dev/null
    dirname x/y >/dev/null
done
exec "%s" "$@"
"""

CHILD_SHIM = """#!/bin/bash
uname >/dev/null
"%s" "$@"
exit $?
"""


def lines(b):
    return b.decode("utf-8", "replace").splitlines()


def record(args, prog, env=None):
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    # every process turns GPU capture off, whether this host has a GPU or not
    full["TT_CAPTURE_CUPTI"] = "/nonexistent/libcupti.so"
    full.update(env or {})
    return subprocess.run([te.tracetool_path(), "record"] + args + ["--"] + prog,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                          env=full)


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.pt.trace.json")))


def scopes(path, name):
    doc = te.parse_json(te.read_bytes(path))
    return [e for e in doc.get("traceEvents", []) if e.get("name") == name and
            e.get("cat") == "cpu_op"]


def build(tmp):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    libdir = os.path.dirname(INJECT)
    src = os.path.join(tmp, "shim_prog.c")
    exe = os.path.join(tmp, "shim_prog")
    with open(src, "w") as f:
        f.write(PROG)
    cp = subprocess.run([cc, "-O1", "-o", exe, src, "-I", os.path.join(ROOT, "capture", "include"),
                         "-L", libdir, "-ltracetool_capture", "-Wl,-rpath," + libdir],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    if not C.eq(cp.returncode, 0, "shim_prog builds (%s, libtracetool_capture.so)" % cc):
        print(cp.stderr.decode("utf-8", "replace")[-1500:])
        return None
    return exe


def shim(tmp, name, body):
    path = os.path.join(tmp, "bin", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(body)
    os.chmod(path, 0o755)
    return path


def check_exec_shim(tmp, prog):
    d = os.path.join(tmp, "exec")
    sh = shim(tmp, "python3", EXEC_SHIM % prog)
    cp = record(["-o", d], [sh, "hello"])
    err = lines(cp.stderr)
    C.eq((cp.returncode, cp.stdout), (3, b"shim_prog ran hello\n"),
         "exec shim: the program's stdout and exit status")
    off = [l for l in err if "GPU capture off" in l]
    C.eq(len(off), 1, "exec shim: one 'GPU capture off' line for the record, not one per process")
    said = [l for l in err if l.startswith("tracetool capture:")]
    C.eq(len(said), len(set(said)), "exec shim: no capture line said twice")
    files = traces(d)
    C.eq(len(files), 1, "exec shim: one trace, the program's (the helpers recorded nothing)")
    C.eq(sum(len(scopes(f, "shim_work")) for f in files), 1,
         "exec shim: the program's trace holds its scope")
    C.check(any(l.startswith("tracetool record: 1 trace written") for l in err),
            "exec shim: record lists one trace", err)
    C.check(any(l.startswith("tracetool record: 10 other processes (uname, dirname) recorded no"
                             " event") for l in err),
            "exec shim: record says which processes wrote no trace, in one line", err)
    C.eq(len([l for l in err if "recorded no event" in l]), 1,
         "exec shim: one line for the processes without a trace")


def check_child_shim(tmp, prog):
    d = os.path.join(tmp, "child")
    sh = shim(tmp, "runner", CHILD_SHIM % prog)
    cp = record(["-o", d, "--no-summary"], [sh, "x"])
    err = lines(cp.stderr)
    C.eq((cp.returncode, cp.stdout), (3, b"shim_prog ran x\n"),
         "child shim: the program's stdout and exit status")
    files = traces(d)
    with_scope = [f for f in files if scopes(f, "shim_work")]
    C.eq(len(with_scope), 1, "child shim: the program (a child of the shim) wrote its trace")
    C.eq(len(files), 2, "child shim: its trace and the shim's own (the process record started);"
                        " none of uname")
    C.check(any("1 other process (uname) recorded no event" in l for l in err),
            "child shim: record names the helper without a trace", err)
    C.eq(len([l for l in err if "GPU capture off" in l]), 1, "child shim: one 'GPU capture off'")


def main():
    if SANITIZED:
        C.skip("record through a shim", "preloading is not tested in a sanitizer build (%s)"
               % SANITIZED)
        return C.finish()
    if not C.check(os.path.exists(INJECT), "the injection library is built", INJECT):
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_record_shim_") as tmp:
        prog = build(tmp)
        if prog:
            C.section("exec shim", check_exec_shim, tmp, prog)
            C.section("child shim", check_child_shim, tmp, prog)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
