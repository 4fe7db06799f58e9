#!/usr/bin/env python3
"""tracetool breakdown reads a trace file without a database.

With TT_DEBUG_BD=1, tracetool logs how breakdown read each trace file
("breakdown: PATH: read without a database", or "... read twice: WHY"). A trace file and every file of a directory of per-rank
traces must be read without one, and give what the same traces ingested
into a database give (every table, --by step and stream, --rank).
The directory is 8 ranks of DLRM (param/dlrm_8rank/kineto). A file
whose rows need the SQL passes of an ingest (a 'B' slice closed after
hundreds of rows) is read twice, no database either, and gives the same
as the database too; standard input is read from a spill copy (no database).
Python standard library only.
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("breakdown_stream")
WAY = "breakdown: "
STREAM = ": read without a database"
VIA_DB = ": read twice: "
OPTS = [[], ["--by", "step"], ["--by", "stream"], ["--rank", "1"]]


def run(args, stdin_bytes=None):
    """(exit code, stdout, the 'breakdown: ' log lines)"""
    cp = te.run_tool(["breakdown", "--format", "json"] + args, input_bytes=stdin_bytes,
                     env={"TT_DEBUG_BD": "1"})
    return cp.returncode, cp.stdout, [ln for ln in te.stderr_lines(cp) if ln.startswith(WAY)]


def ingest(tmp, name, inputs):
    db = os.path.join(tmp, name + ".db")
    cp = te.run_tool(["ingest", "-q", db] + inputs)
    C.eq(cp.returncode, 0, "ingest %s" % name)
    return db


def same_as_db(label, path, db, opts=OPTS):
    """every option set: path's output is the database's"""
    for o in opts:
        rc, out, _ = run(o + [path])
        rc_db, out_db, way_db = run(o + [db])
        C.eq(way_db, [], "%s %s: a database logs no file" % (label, o))
        C.check(rc == rc_db and out == out_db, "%s %s: the same as from the database" % (label, o),
                "exit %d / %d" % (rc, rc_db))


def check_file(tmp, shared):
    f = os.path.join(shared, "testdata", "hta", "trace_diff", "test", "test.json.gz")
    if not os.path.exists(f):
        C.skip("file", "no shared trace %s" % f)
        return
    rc, _, way = run([f])
    C.eq(rc, 0, "torch.compile trace: exit code")
    C.eq(way, [WAY + f + STREAM], "torch.compile trace: read without a database")
    same_as_db("torch.compile trace", f, ingest(tmp, "one", [f]))


def check_dir(tmp, shared):
    d = os.path.join(shared, "testdata", "param", "dlrm_8rank", "kineto")
    if not os.path.isdir(d):
        C.skip("directory", "no shared traces %s" % d)
        return
    files = sorted(te.trace_files(d))
    rc, _, way = run([d])
    C.eq(rc, 0, "directory: exit code")
    C.check(len(way) == len(files) and all(ln.endswith(STREAM) for ln in way),
            "directory: each of %d files read without a database" % len(files), way)
    same_as_db("directory", d, ingest(tmp, "dir", files))


def kernel_trace(tmp, n, late_b):
    """n kernels with their calls on an op; late_b: inside a 'B' slice
    closed after them (its row handed over before its end is known)"""
    ev = [{"ph": "B", "cat": "user_annotation", "name": "outer", "pid": 1, "tid": 1,
           "ts": 0}] if late_b else []
    for i in range(n):
        t = 10 + 20 * i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm" if i % 3 else "aten::add",
                   "pid": 1, "tid": 1, "ts": t, "dur": 8})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 1, "dur": 5, "args": {"correlation": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm_%d" % (i % 5), "pid": 0,
                   "tid": 7, "ts": t + 4 + (i % 4), "dur": 6 + i % 3,
                   "args": {"device": 0, "stream": 7 + i % 2, "correlation": i + 1}})
    if late_b:
        ev.append({"ph": "E", "pid": 1, "tid": 1, "ts": 20 * n + 100})
    p = os.path.join(tmp, "late_b.json.gz" if late_b else "plain.json.gz")
    with gzip.open(p, "wt") as f:
        json.dump({"traceEvents": ev}, f)
    return p


def check_fallbacks(tmp):
    plain = kernel_trace(tmp, 50, False)
    rc, _, way = run([plain])
    C.eq((rc, way), (0, [WAY + plain + STREAM]), "small trace: read without a database")
    same_as_db("small trace", plain, ingest(tmp, "plain", [plain]), OPTS[:3])
    late = kernel_trace(tmp, 600, True)
    rc, _, way = run([late])
    C.check(rc == 0 and len(way) == 1 and way[0].startswith(WAY + late + VIA_DB),
            "'B' closed late: read twice", way)
    same_as_db("'B' closed late", late, ingest(tmp, "late", [late]), OPTS[:3])
    with open(plain, "rb") as f:
        data = f.read()
    rc, out, way = run(["-"], stdin_bytes=data)
    C.eq(way, [WAY + "-" + STREAM], "standard input: from a spill copy, without a database")
    C.check(rc == 0 and out == run([plain])[1], "standard input: the same as the file")


def main():
    shared = te.shared_dir()
    tmp = tempfile.mkdtemp(prefix="tt_bd_stream_")
    try:
        C.section("file", check_file, tmp, shared)
        C.section("directory", check_dir, tmp, shared)
        C.section("fallbacks", check_fallbacks, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
