#!/usr/bin/env python3
"""memtimeline stays linear on a leak (memory that only grows).

The cheap version of bench/scale_memtimeline_leak.py: N and 4N CUDA
allocations that are never freed (a new Total Allocated peak at every
event), written to .html, .png and .json from an ingested database. The
4N run must cost at most 8 times the N run (CPU time, best of 2; no
absolute limit, the suite runs on busy machines). The old code rescanned every live block at each new peak (quadratic:
about 16 times, tens of seconds at 4N).
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import trace_expect  # noqa: E402
import scale_memtimeline_leak as leak  # noqa: E402

N = 20000


def cpu_of(args, timeout):
    """best of 2 child CPU seconds (user + system); None past the timeout"""
    best = None
    for _ in range(2):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            cp = trace_expect.run_tool(args, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, -1
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if cp.returncode != 0:
            return None, cp.returncode
        best = cpu if best is None or cpu < best else best
    return best, 0


def main():
    c = trace_expect.Checker("test_scaling_memtimeline")
    tmp = tempfile.mkdtemp(prefix="tt_scale_memtl_")
    try:
        dbs = {}
        for n in (N, 4 * N):
            trace = os.path.join(tmp, "leak_%d.json" % n)
            leak.write_leak_trace(trace, n)
            dbs[n] = os.path.join(tmp, "leak_%d.db" % n)
            cp = trace_expect.run_tool(["ingest", dbs[n], trace])
            c.eq(cp.returncode, 0, "ingest the %d-block leak" % n)
        for fmt in ("html", "png", "json"):
            out = os.path.join(tmp, "out." + fmt)
            # 300 s: a hang guard only (the quadratic code took tens of
            # seconds at 4N: the ratio catches it)
            t1, rc1 = cpu_of(["memtimeline", dbs[N], out], 300)
            t4, rc4 = cpu_of(["memtimeline", dbs[4 * N], out], 300)
            if not c.check(t1 is not None and t4 is not None, ".%s: both runs finish" % fmt,
                           "exit %s / %s (-1: over 300 s)" % (rc1, rc4)):
                continue
            ratio = t4 / max(t1, 0.05)
            print(".%s: N=%d %.3f s, 4N %.3f s, ratio %.2f" % (fmt, N, t1, t4, ratio))
            c.check(ratio <= 8, ".%s: t(4N)/t(N) <= 8" % fmt, "%.2f" % ratio)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
