#!/usr/bin/env python3
"""A trace file whose rows one reading cannot link is read twice, never
through a database (store/ingest_fix.c, TT_ROWS_RELINK).

For each of the three shapes that once sent a file through a temporary
SQLite database ('B' slices closed after their row was handed over, GPU
activities far from their runtime call, ops out of order on a thread with
runtime calls to relink), and for all three together (tests/tools/
rare_traces.py), every command that reads rows (averages, also
--group-by-shape and --group-by-stack, kernels summaries / --by op /
--by activity / --steps, breakdown, memtimeline, also --et, crosscheck,
diff A A, export) run on the file:
  - opens no temporary database (strace -f -e trace=openat,open: no
    tracetool-db-*, tracetool-input-*, SQLite etilqs_*, *.db, -journal or
    -wal file);
  - prints what the same command prints from a database ingested of the
    file (the SQL passes' rows), the file's name masked; memtimeline and
    export write the same file;
  - says, with TT_DEBUG_*, that it read the file twice.
With TT_REFERENCE=/path/to/an/older/tracetool in the environment, each
output is also compared byte for byte with that build's on the same file.
Skipped without strace.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import rare_traces  # noqa: E402
import trace_expect as te  # noqa: E402

C = te.Checker("relink")
TRACETOOL = te.tracetool_path()
REFERENCE = os.environ.get("TT_REFERENCE")
SHAPES = ["late_b", "gpu_late", "rt_dirty", "all"]
OPENED_DB = re.compile(r'open(at)?\([^"]*"([^"]*(tracetool-(db|input)-|etilqs_)[^"]*'
                       r'|[^"]*(\.db|-journal|-wal))"')

# (label, arguments): T the trace, E its ET, O an output file, D the database
COMMANDS = [
    ("averages", ["averages", "T"]),
    ("averages --group-by-shape", ["averages", "--group-by-shape", "T"]),
    ("averages --group-by-stack", ["averages", "--group-by-stack", "3", "--format", "json", "T"]),
    ("kernels", ["kernels", "T"]),
    ("kernels --by op", ["kernels", "--by", "op", "T"]),
    ("kernels --by op --steps", ["kernels", "--by", "op", "--steps", "2-3", "T"]),
    ("kernels --by activity", ["kernels", "--by", "activity", "T"]),
    ("kernels --by activity --steps", ["kernels", "--by", "activity", "--steps", "1-2",
                                       "--format", "json", "T"]),
    ("breakdown", ["breakdown", "T"]),
    ("breakdown --format json", ["breakdown", "--format", "json", "T"]),
    ("memtimeline", ["memtimeline", "T", "O"]),
    ("memtimeline --et", ["memtimeline", "T", "O", "--et", "E"]),
    ("crosscheck", ["crosscheck", "--no-store", "E", "T"]),
    ("diff", ["diff", "T", "T"]),
    ("export", ["export", "T", "O"]),
    ("export --steps", ["export", "--steps", "2-3", "T", "O"]),
]
# the same command on the database (the trace and its ET, linked): its arguments
DB_ARGS = {"crosscheck": ["crosscheck", "--no-store", "D"], "diff": ["diff", "D", "D"],
           "memtimeline --et": ["memtimeline", "D", "O"]}
# no links needed: one reading to the end, whatever the shape
ONE_READING = ("kernels", "kernels --by activity")
# the GPU activities not read: a trace whose only shape is gpu_late is read once
NO_GPU = ("memtimeline", "memtimeline --et", "crosscheck")
DEBUG = {"averages": "TT_DEBUG_AVG", "kernels": "TT_DEBUG_KERNELS", "breakdown": "TT_DEBUG_BD",
         "memtimeline": "TT_DEBUG_MEMTL", "crosscheck": "TT_DEBUG_XC", "diff": "TT_DEBUG_DIFF",
         "export": "TT_DEBUG_EXPORT"}


def argv(args, files):
    return [files.get(a, a) for a in args]


def run(tool, args, env=None):
    cp = subprocess.run([tool] + args, capture_output=True, timeout=600,
                        env=dict(os.environ, **(env or {})))
    return cp.returncode, cp.stdout, cp.stderr


def read(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def masked(data, names):
    for n in names:
        data = data.replace(n.encode(), b"P")
    return data


def traced(args, tmp):
    """the temporary databases `tracetool ARGS` opens (strace), or None
    when strace cannot trace here"""
    log = os.path.join(tmp, "strace.txt")
    cp = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", log, TRACETOOL]
                        + args, capture_output=True, timeout=600, env=te.strace_env())
    if cp.returncode != 0 and b"ptrace" in cp.stderr:
        return None
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    if not any("openat" in l or "open(" in l for l in lines):
        return None
    return [m.group(2) for m in map(OPENED_DB.search, lines) if m]


def one_shape(tmp, shape):
    trace = os.path.join(tmp, shape + ".json")
    et = os.path.join(tmp, shape + ".et.json")
    db = os.path.join(tmp, shape + ".db")
    rare_traces.write(shape, 1, trace, et)
    cp = te.run_tool(["ingest", "--quiet", db, trace, et])  # the trace is trace 1
    C.eq(cp.returncode, 0, "%s: ingest" % shape)
    out = os.path.join(tmp, "out.json")
    files = {"T": trace, "E": et, "O": out, "D": db}
    names = [et, trace, db, out]
    for label, args in COMMANDS:
        what = "%s: %s" % (shape, label)
        cmd = args[0]
        rc, got, err = run(TRACETOOL, argv(args, files), {DEBUG[cmd]: "1"})
        got_file = read(out)
        C.eq(rc, 0, what + ": exit code")
        if label not in ONE_READING and not (shape == "gpu_late" and label in NO_GPU):
            C.check(b"read twice" in err, what + ": the file read twice", err[-400:])
        C.check(b"temporary database" not in err, what + ": no temporary database said", err[-400:])
        dargs = DB_ARGS.get(label, DB_ARGS.get(cmd, [files["D"] if a == "T" else a for a in args]))
        drc, want, _ = run(TRACETOOL, argv(dargs, files))
        want_file = read(out)
        if cmd == "crosscheck":  # the database numbers its traces as ingested
            got, want = (re.sub(rb"trace \d+", b"trace N", x) for x in (got, want))
        C.eq((rc, masked(got, names)), (drc, masked(want, names)),
             what + ": prints what the database of the file prints")
        C.check(got_file == want_file, what + ": writes what the database of the file writes")
        if REFERENCE:
            rrc, ref, rerr = run(REFERENCE, argv(args, files))
            ref_file = read(out)
            rc2, got2, err2 = run(TRACETOOL, argv(args, files))
            C.eq(rc2, rrc, what + ": the reference build's exit code")
            got2_file = read(out)
            C.eq((got2, err2, got2_file), (ref, rerr, ref_file),
                 what + ": byte for byte the reference build's")
        opened = traced(argv(args, files), tmp)
        read(out)
        if opened is None:
            C.skip(what + ": strace", "cannot trace here")
        else:
            C.eq(opened, [], what + ": no temporary database opened")


def main():
    if not shutil.which("strace"):
        C.skip("strace", "not installed")
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-relink-")
    try:
        for shape in SHAPES:
            C.section(shape, one_shape, tmp, shape)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
