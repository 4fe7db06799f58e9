#!/usr/bin/env python3
"""`tracetool info FILE` stays linear when every event is distinct: each on its
own thread, in its own category, or on its own GPU stream (the cheap version
of bench/scale_info_distinct.py). N and 4N events, best of 3: the ratio of the
times must stay <= 8 (linear ~4, the old linear-search code ~16), t(N) floored
at 150 ms. No wall-clock limit: the suite runs on shared, busy machines (the
4N run takes about 1 s on a quiet one; the time is printed). Standard library
only.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import scale_info_distinct  # noqa: E402
import trace_expect  # noqa: E402

N = 50000


def timed(tool, path):
    best = None
    for _ in range(3):
        t = time.perf_counter()
        try:
            p = subprocess.run([tool, "info", path], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=300)  # a hang guard
            rc = p.returncode
        except subprocess.TimeoutExpired:
            return None, 300.0
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return rc, best


def main():
    c = trace_expect.Checker("scaling_info_distinct")
    tool = trace_expect.tracetool_path()
    with tempfile.TemporaryDirectory() as d:
        for shape in ("threads", "cats", "streams"):
            times = []
            for n in (N, 4 * N):
                path = os.path.join(d, "%s_%d.json" % (shape, n))
                scale_info_distinct.write_trace(path, n, shape)
                rc, t = timed(tool, path)
                c.check(rc == 0, "%s N=%d: info exits 0 (%s)" % (shape, n, rc))
                times.append(t)
            ratio = times[1] / max(times[0], 0.15)
            print("%s: %.3f s, %.3f s, ratio %.2f" % (shape, times[0], times[1], ratio))
            c.check(ratio <= 8, "%s: t(4N)/t(N) = %.2f <= 8" % (shape, ratio))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
