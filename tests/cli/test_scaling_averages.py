#!/usr/bin/env python3
"""`tracetool averages` stays linear on hostile traces: a cheap version of
bench/scale_averages_threads.py (same generator).

For each hostile shape (many threads, many ProfilerStep windows with
--steps, many distinct names in reverse time order, many distinct call
stacks with --group-by-stack, many distinct Input Dims with
--group-by-shape, deep nesting, identical ops) the trace is made at N and
4N; `averages` is timed on both (best of 2) and must scale by at most 8
(t(N) floored at 150 ms: below it process start-up and a busy machine dominate). No wall-clock
limit: the suite runs on shared, busy machines. The quadratic lookups of the old code fail it (thread
lookup, step windows, stack ids, name classes: ratios 10 to 17).

"db" shapes are ingested first (not timed: the ingest has its own tests)
and `averages DB` is timed; "file" shapes time `averages FILE`.

Environment: TRACETOOL (binary).
"""

import importlib.util
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "scale_averages", os.path.join(HERE, "..", "..", "bench", "scale_averages_threads.py"))
scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale)

C = te.Checker("scaling_averages")

# shape, input, N, seconds allowed for the 4N run
CASES = [
    ("threads", "db", 8000, 1.0),
    ("steps", "file", 20000, 1.0),
    ("names", "db", 20000, 2.0),
    ("stacks", "db", 10000, 2.0),
    ("shapes", "db", 20000, 2.0),
    ("nesting", "file", 20000, 2.0),
    ("same", "file", 20000, 2.0),
]

MAX_RATIO = 8.0
FLOOR = 0.15


def timed(args):
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        cp = te.run_tool(args, timeout=120)
        dt = time.perf_counter() - t0
        if cp.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (args, cp.returncode,
                                                    cp.stderr.decode(errors="replace")))
        best = dt if best is None else min(best, dt)
    return best


def case(tmp, shape, mode, n, limit):
    times = []
    for k in (n, 4 * n):
        path = os.path.join(tmp, "%s_%d.json" % (shape, k))
        scale.write_trace(path, shape, k)
        target = path
        if mode == "db":
            target = os.path.join(tmp, "%s_%d.db" % (shape, k))
            cp = te.run_tool(["ingest", target, path], timeout=300)
            C.eq(cp.returncode, 0, "%s: ingest %d" % (shape, k))
        times.append(timed(["averages", "--row-limit", "-1"] + scale.shape_args(shape, k) +
                           [target]))
    ratio = times[1] / max(times[0], FLOOR)
    print("%-8s %-4s N=%-6d %.3f s  4N %.3f s  ratio %.2f" % (shape, mode, n, times[0],
                                                            times[1], ratio))
    C.check(ratio <= MAX_RATIO, "%s: t(4N)/t(N) <= %g" % (shape, MAX_RATIO), ratio)
    # no wall-clock limit: on a shared, busy machine only the ratio holds
    # (the 4N run took 3 s beside another suite); `limit` is what a quiet
    # machine takes, printed for whoever reads the log
    if times[1] > limit:
        print("note: %s: 4N run took %.2f s (about %g s on a quiet machine)"
              % (shape, times[1], limit))


def main():
    tmp = tempfile.mkdtemp(prefix="tt_scaling_avg_")
    try:
        for shape, mode, n, limit in CASES:
            C.section(shape, case, tmp, shape, mode, n, limit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
