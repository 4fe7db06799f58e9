#!/usr/bin/env python3
"""Scaling of `tracetool memtimeline` on a leak: memory that only grows.

    scale_memtimeline_leak.py [--tracetool PATH] [--n N] [--formats html,png,json]

Writes a Kineto trace with N CUDA [memory] allocations that are never freed
(Total Allocated rising to a new peak at every event), one op around every 8
of them inside ProfilerStep#k ranges, ingests it and its 4N twin into
databases, then times `tracetool memtimeline DB out.FORMAT` on both (best of
3) for each format. Prints sizes, seconds (wall and CPU), MB/s (of the
trace file), the ratio t(4N)/t(N) of the CPU times (steadier than the wall
clock on a shared machine) and the children's peak RSS; exits 1 if a ratio exceeds 5
(linear time gives about 4; the old code rescanned every live block at each
new peak and did not finish 200k blocks in 120 s). Python standard library
only.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

BASE_US = 1700000000000000  # µs since the epoch, as Kineto writes them


def write_leak_trace(path, n):
    """N allocations never freed, 8 per op, 512 ops per ProfilerStep."""
    pid, tid = 100, 101
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        ev = []
        nops = (n + 7) // 8
        steps = (nops + 511) // 512
        for s in range(steps):
            ts = BASE_US + s * 512 * 20
            ev.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d",'
                      ' "pid": %d, "tid": %d, "ts": %d, "dur": %d}'
                      % (s, pid, tid, ts, 512 * 20 - 1))
        total = 0
        for i in range(n):
            op = i // 8
            if i % 8 == 0:
                ev.append('{"ph": "X", "cat": "cpu_op", "name": "aten::empty_%d",'
                          ' "pid": %d, "tid": %d, "ts": %d, "dur": 18}'
                          % (op % 50, pid, tid, BASE_US + op * 20 + 1))
            b = 512 * (1 + i % 64)
            total += b
            ev.append('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",'
                      ' "pid": %d, "tid": %d, "ts": %d, "args": {"Device Type": 1,'
                      ' "Device Id": 0, "Addr": %d, "Bytes": %d, "Total Allocated": %d,'
                      ' "Total Reserved": %d}}'
                      % (pid, tid, BASE_US + op * 20 + 2 + (i % 8) * 2,
                         0x7f0000000000 + i * 32768, b, total, total + (1 << 30)))
            if len(ev) >= 10000:
                f.write(",\n".join(ev) + ",\n")
                ev = []
        ev.append('{"ph": "M", "name": "process_name", "pid": %d, "args": {"name": "leak"}}'
                  % pid)
        f.write(",\n".join(ev) + "\n]}\n")


def ingest(tracetool, trace, db):
    subprocess.run([tracetool, "ingest", db, trace], check=True, stdout=subprocess.DEVNULL)


def best_of(cmd, runs=3, timeout=None):
    """(wall, cpu) seconds of the fastest run; cpu = the child's user + system
    time, steadier than the wall clock on a shared machine"""
    best = None
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=timeout)
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if best is None or cpu < best[1]:
            best = (wall, cpu)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--formats", default="html,png,json")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tt_memtl_leak_")
    worst = 0.0
    try:
        dbs = {}
        for n in (a.n, 4 * a.n):
            trace = os.path.join(tmp, "leak_%d.json" % n)
            write_leak_trace(trace, n)
            dbs[n] = (os.path.join(tmp, "leak_%d.db" % n), os.path.getsize(trace))
            ingest(a.tracetool, trace, dbs[n][0])
            os.unlink(trace)
        for fmt in a.formats.split(","):
            t = {}
            for n in (a.n, 4 * a.n):
                out = os.path.join(tmp, "out." + fmt)
                wall, t[n] = best_of([a.tracetool, "memtimeline", dbs[n][0], out], a.runs)
                mb = dbs[n][1] / 1e6
                print("memtimeline .%-4s N=%8d  trace %7.1f MB  %6.2f s (cpu %5.2f s)  %6.1f MB/s"
                      % (fmt, n, mb, wall, t[n], mb / wall if wall else 0.0))
            ratio = t[4 * a.n] / t[a.n] if t[a.n] else 0.0
            worst = max(worst, ratio)
            print("memtimeline .%-4s t(4N)/t(N) = %.2f" % (fmt, ratio))
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        print("peak RSS of the children: %.0f MB" % rss)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if worst > 5:
        print("FAIL: t(4N)/t(N) = %.2f > 5" % worst)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
