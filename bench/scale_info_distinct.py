#!/usr/bin/env python3
"""Scaling of `tracetool info FILE` on traces whose events are all distinct.

    scale_info_distinct.py [--tracetool PATH] [--n N] [--shape threads|cats|streams|all]
                           [--max-ratio R] [--runs K]

Writes a Kineto trace of N X events, every one on its own thread (cpu_op on a
new tid), in its own category, or on its own GPU stream (kernels), and the
same at 4N; times `tracetool info` on both (best of --runs), prints sizes,
seconds, MB/s, t(4N)/t(N) and the peak RSS of the children. Exits 1 if a
ratio exceeds --max-ratio (default 5; linear is ~4, quadratic ~16).
Python standard library only.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def write_trace(path, n, shape):
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        for i in range(n):
            if shape == "threads":
                ev = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": i + 1,
                      "ts": i, "dur": 1}
            elif shape == "cats":
                ev = {"ph": "X", "cat": "cat_%d" % i, "name": "op", "pid": 1, "tid": 1,
                      "ts": i, "dur": 1}
            else:
                ev = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": i + 1,
                      "ts": i, "dur": 1, "args": {"device": 0, "stream": i + 1}}
            f.write(("," if i else "") + json.dumps(ev) + "\n")
        f.write("]}\n")
    return os.path.getsize(path)


def best_time(cmd, runs):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr.decode(errors="replace")))
        best = dt if best is None else min(best, dt)
    return best


def measure(tool, n, shape, runs, d):
    rows = []
    for k in (n, 4 * n):
        path = os.path.join(d, "%s_%d.json" % (shape, k))
        size = write_trace(path, k, shape)
        rows.append((k, size, best_time([tool, "info", path], runs)))
        os.remove(path)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    ap.add_argument("--n", type=int, default=400000)
    ap.add_argument("--shape", default="all", choices=["threads", "cats", "streams", "all"])
    ap.add_argument("--max-ratio", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    shapes = ["threads", "cats", "streams"] if a.shape == "all" else [a.shape]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for shape in shapes:
            rows = measure(a.tracetool, a.n, shape, a.runs, d)
            for k, size, t in rows:
                print("%-8s N=%-9d %8.1f MB %7.3f s %7.1f MB/s" % (shape, k, size / 1e6, t,
                                                                  size / 1e6 / t))
            ratio = rows[1][2] / max(rows[0][2], 1e-9)
            print("%-8s ratio t(4N)/t(N) = %.2f" % (shape, ratio))
            bad += ratio > a.max_ratio
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print("peak RSS of tracetool: %.1f MB" % (rss / 1024.0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
