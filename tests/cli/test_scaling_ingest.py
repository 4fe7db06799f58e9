#!/usr/bin/env python3
"""Ingest and the file analyses stay linear on hostile shapes (the cheap
version of bench/scale_ingest.py): for each shape, the trace at N and 4N,
best of 3 runs each; 4N may take at most 8x as long as N (linear is 4x;
the bound is generous for a shared 2-core machine), unless the 4N run is
under 0.5 s in all. The quadratic link pass this guards against took 6.6 s
at N = 5,000 and 83 s at 4N on the shared-correlation shape.

Shapes (bench/scale_ingest.py): one correlation for all calls and kernels,
many threads, CUDA graphs, calls written newest first under one long op,
and deep nesting.

Also checks the links themselves against what the generator wrote: every
kernel of the shared-correlation shape is linked to the runtime call that
launched it last before it, every CUDA-graph kernel to its cudaGraphLaunch.
Python standard library only.
"""

import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import trace_expect as te  # noqa: E402
import scale_ingest as si  # noqa: E402

C = te.Checker("scaling_ingest")


def best_of(argv, runs=3):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        if p.returncode:
            return None, p
        best = dt if best is None else min(best, dt)
    return best, None


def scaling(d, shape, n, cmd):
    small, big = si.make(shape, n, d), si.make(shape, 4 * n, d)
    t1, err = best_of(si.command(cmd, small, d))
    if t1 is None:
        C.check(False, "%s %s N=%d runs" % (shape, cmd, n), err.stderr[-300:])
        return
    t4, err = best_of(si.command(cmd, big, d))
    if t4 is None:
        C.check(False, "%s %s 4N runs" % (shape, cmd), err.stderr[-300:])
        return
    ratio = t4 / max(t1, 0.15)  # t(N) floored: start-up and load dominate below it
    C.check(t4 < 0.5 or ratio <= 8.0, "%s %s: t(4N)/t(N) = %.3f/%.3f = %.1f" % (
        shape, cmd, t4, t1, ratio), "super-linear")


def links(d):
    tool = te.tracetool_path()
    # shared correlation: kernel i starts 2 us after runtime call i, and
    # before call i + 1: it belongs to call i
    n = 300
    path = si.make("corr", n, d)
    db = os.path.join(d, "corr.db")
    p = subprocess.run([tool, "ingest", "-q", db, path], stderr=subprocess.PIPE)
    C.eq(p.returncode, 0, "corr: ingest exit code")
    con = sqlite3.connect(db)
    rt = {ts: rid for rid, ts in con.execute("SELECT id, ts FROM runtime")}
    want = {}
    for (ts,) in con.execute("SELECT ts FROM gpu_ops"):
        launch = max(t for t in rt if t <= ts)
        want[ts] = rt[launch]
    got = dict(con.execute("SELECT ts, runtime_id FROM gpu_ops"))
    C.eq(len(got), n, "corr: kernels stored")
    C.eq(got, want, "corr: each kernel linked to the last launch before it")
    ops = con.execute("SELECT count(*) FROM gpu_ops WHERE op_id IS NOT NULL").fetchone()[0]
    C.eq(ops, n, "corr: each kernel linked through its launch to the op")
    con.close()
    # CUDA graphs: 100 kernels per cudaGraphLaunch, written after all launches
    path = si.make("graph", 1000, d)
    db = os.path.join(d, "graph.db")
    p = subprocess.run([tool, "ingest", "-q", db, path], stderr=subprocess.PIPE)
    C.eq(p.returncode, 0, "graph: ingest exit code")
    con = sqlite3.connect(db)
    bad = con.execute("SELECT count(*) FROM gpu_ops g LEFT JOIN runtime r ON r.id = g.runtime_id"
                      " WHERE r.correlation IS NOT g.correlation").fetchone()[0]
    C.eq(bad, 0, "graph: every kernel linked to the launch of its correlation")
    ops = con.execute("SELECT count(*) FROM gpu_ops g JOIN slices s ON s.id = g.op_id"
                      " JOIN strings n ON n.id = s.name"
                      " WHERE n.s = 'CompiledFunction'").fetchone()[0]
    C.eq(ops, 1000, "graph: every kernel linked to the CompiledFunction op")
    con.close()


def innermost_ops(d):
    """calls written newest first, and deep nesting: every runtime call is
    linked to the innermost cpu_op of its thread that encloses it (computed
    here from the rows: latest start, then shortest)"""
    tool = te.tracetool_path()
    for shape, n in (("backwards", 2000), ("deep", 2000)):
        path = si.make(shape, n, d)
        db = os.path.join(d, shape + ".db")
        p = subprocess.run([tool, "ingest", "-q", db, path], stderr=subprocess.PIPE)
        C.eq(p.returncode, 0, "%s: ingest exit code" % shape)
        con = sqlite3.connect(db)
        ops = sorted(con.execute("SELECT s.ts, s.ts + s.dur, s.id FROM slices s JOIN strings c"
                                 " ON c.id = s.cat WHERE c.s = 'cpu_op'"))
        want, got = {}, {}
        for rid, ts, end, op in con.execute("SELECT id, ts, ts + dur, op_id FROM runtime"):
            inner = [o for o in ops if o[0] <= ts and o[1] >= end]
            want[rid] = max(inner, key=lambda o: (o[0], -o[1]))[2] if inner else None
            got[rid] = op
        C.eq(len(got), n, "%s: runtime calls stored" % shape)
        C.eq(got, want, "%s: each call linked to its innermost enclosing op" % shape)
        con.close()


def main():
    with tempfile.TemporaryDirectory(prefix="tt-scaling-") as d:
        C.section("links", links, d)
        C.section("innermost ops", innermost_ops, d)
        for shape, n in (("corr", 3000), ("threads", 4000), ("graph", 20000)):
            for cmd in ("ingest", "kernels"):
                C.section("%s %s" % (shape, cmd), scaling, d, shape, n, cmd)
        for shape in ("backwards", "deep"):
            C.section("%s ingest" % shape, scaling, d, shape, 6000, "ingest")
        compile_src = os.path.join(te.shared_dir(), "testdata", "hta", "trace_diff", "test")
        if os.path.isdir(compile_src):
            C.section("compile ingest", scaling, d, "compile", 1, "ingest")
        else:
            C.skip("compile ingest", "no %s" % compile_src)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
