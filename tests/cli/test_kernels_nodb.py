#!/usr/bin/env python3
"""`kernels` and `info` read trace files without a database (issue 24): a
file with --by op, --rank, --trace or --steps, and a directory of per-rank
traces (each file streamed in turn) open no temporary database, seen with
`strace -f -e trace=openat` (no tracetool-db-*, tracetool-input-* or SQLite
etilqs_* file), and print what the same command prints from a database
ingested of the same files; so do `kernels --by activity` (the activities
sorted by start, --steps, --row-limit) and `info` of a file. A file whose
rows lack the links --by op needs is read twice, no database either, and
prints what its database prints. Skipped without strace or the
shared traces.
"""

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("kernels_nodb")
DATA = os.path.join(te.shared_dir(), "testdata", "hta")
FILE = os.path.join(DATA, "trace_diff", "test", "test.json.gz")  # torch.compile, CUDA graphs
DIR = os.path.join(DATA, "trace_compare")
def traced(args, tmp):
    """(return code, stdout, whether a temporary database was opened)"""
    return te.traced_temp_db(args, tmp)


def no_db(args, tmp, want_rc=0):
    rc, out, opened = traced(args, tmp)
    C.eq(rc, want_rc, "%s: exit code" % " ".join(args))
    C.check(not opened, "%s: no temporary database" % " ".join(args))
    return out


def be_file(tmp):
    """a trace whose rows need the database passes ('B' slices closed after
    their rows were handed over)"""
    def X(name, ts, dur, cat="cpu_op", tid=1, pid=1, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
                "dur": dur, "args": args}
    ev = [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}]
    for i in range(300):
        t = 10 + 30 * i
        ev += [X("aten::op%d" % (i % 7), t, 20),
               X("cudaLaunchKernel", t + 2, 3, cat="cuda_runtime", correlation=i),
               X("gemm%d" % (i % 3), t + 5, 4 + i % 5, cat="kernel", pid=0, tid=7,
                 correlation=i)]
    ev.append({"ph": "E", "pid": 1, "tid": 1, "ts": 100000})
    f = os.path.join(tmp, "be.json")
    with open(f, "w") as fh:
        json.dump({"traceEvents": ev}, fh)
    return f


def fallback(tmp, f):
    """--by op reads a file whose rows lack its links again, twice (no
    database), into the same consumer, and prints what the database of the
    file prints"""
    db = os.path.join(tmp, "be.db")
    C.eq(te.run_tool(["ingest", "--quiet", db, f]).returncode, 0, "ingest be.json")
    rc, got, opened = traced(["kernels", "--by", "op", f], tmp)
    want = te.run_tool(["kernels", "--by", "op", db]).stdout
    C.eq(rc, 0, "B/E far apart: exit code")
    C.check(not opened, "B/E far apart: --by op reads the file twice, no temporary database")
    C.eq(got.replace(f.encode(), b"P"), want.replace(f.encode(), b"P"),
         "B/E far apart: --by op as from the database")
    C.check(b"aten::op3" in got, "B/E far apart: the kernels under their ops", got[:300])


def main():
    if not shutil.which("strace"):
        C.skip("strace", "not installed")
        return C.finish()
    if not os.path.exists(FILE) or not os.path.isdir(DIR):
        C.skip("data", "shared traces missing")
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-nodb-")
    try:
        be = be_file(tmp)
        rc, _, lines = te.traced_opens(["kernels", "--by", "op", be], tmp)
        if rc != 0 or not any(be in l for l in lines):
            C.skip("strace", "cannot see the openat calls here (rc %d)" % rc)
            return C.finish()
        C.check(any(be in l for l in lines), "control: strace sees be.json opened")
        db = os.path.join(tmp, "file.db")
        dirdb = os.path.join(tmp, "dir.db")
        for d, src in ((db, FILE), (dirdb, DIR)):
            cp = te.run_tool(["ingest", "--quiet", d, src])
            C.eq(cp.returncode, 0, "ingest %s" % src)
        for args in (["--by", "op"], ["--by", "op", "--steps", "0-1000000"], ["--rank", "1"],
                     ["--trace", "1", "--by", "runtime"], ["--by", "memsize"], [],
                     ["--by", "activity"], ["--by", "activity", "--only", "memory"],
                     ["--by", "activity", "--steps", "0-1000000", "--row-limit", "50",
                      "--format", "json"]):
            got = no_db(["kernels"] + args + [FILE], tmp)
            want = te.run_tool(["kernels"] + args + [db]).stdout
            C.eq(got.replace(FILE.encode(), b"P"), want.replace(FILE.encode(), b"P"),
                 "kernels %s: the file's summaries are the database's" % " ".join(args))
        no_db(["kernels", "--rank", "0", FILE], tmp, want_rc=4)  # rank 1 only
        no_db(["kernels", "--by", "activity", "--rank", "0", FILE], tmp, want_rc=4)
        # info of a file: the database's summary but for its first line
        got = no_db(["info", FILE], tmp)
        want = te.run_tool(["info", db]).stdout
        C.eq(got.split(b"\n", 1)[1], want.split(b"\n", 1)[1], "info FILE: as the database's")
        for cmd in (["kernels", "--by", "op"], ["kernels", "--rank", "1", "--format", "json"],
                    ["kernels", "--by", "activity"],
                    ["kernels", "--by", "activity", "--format", "csv", "--row-limit", "9"],
                    ["info"], ["info", "--format", "json"]):
            got = no_db(cmd + [DIR], tmp)
            want = te.run_tool(cmd + [dirdb]).stdout
            C.eq(got, want, "%s DIR: as from a database of the directory" % " ".join(cmd))
        fallback(tmp, be)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
