#!/usr/bin/env python3
"""bench/scale_averages_threads.py - does `tracetool averages` stay linear on
hostile traces? (Python standard library only)

Generates a Kineto trace of one hostile shape at N and 4N, times
`tracetool averages` on both (best of --runs), prints sizes, seconds, MB/s,
the ratio t(4N)/t(N) and the peak RSS of the children, and exits 1 when a
ratio exceeds --max-ratio (default 5; linear is about 4).

Shapes (--shape, default all):
  threads  N distinct (pid, tid) threads with a parent op and two children
           each (the per-thread stack lookup)
  steps    N ProfilerStep#k spans, run with --steps 0-N (the step windows)
  names    N distinct op names written in reverse time order (the name
           classes of the database pass)
  stacks   N distinct "Call stack"s, run with --group-by-stack 2
  nesting  one thread, ops nested N deep (the stack and the end heap)
  same     N ops with identical ts, dur and name on one thread (ties)
  shapes   N distinct Input Dims of one op, run with --group-by-shape

--input db (default) ingests each trace into a database first and times
only `averages DB` (the ingest of many threads is itself quadratic until
the ingest's thread lookup is fixed: hence threads' small default N); --input file times `averages FILE` (which includes
reading the file: the ingest's rows).

  bench/scale_averages_threads.py [--tracetool build/tracetool] [--shape S]
                                  [--n N] [--runs R] [--input db|file]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_N = {
    "threads": 25000, "steps": 20000, "names": 100000, "stacks": 50000,
    "nesting": 200000, "same": 200000, "shapes": 100000,
}


def op(name, tid, ts, dur, pid=1, args=None, cat="cpu_op"):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def events(shape, n):
    """The hostile events of one shape (a generator, in file order)."""
    if shape == "threads":
        for t in range(n):
            base = 10 * t
            yield op("aten::linear", t + 1, base, 8)
            yield op("aten::addmm", t + 1, base + 1, 3)
            yield op("aten::relu", t + 1, base + 5, 2)
    elif shape == "steps":
        for k in range(n):
            base = 10 * k
            yield op("ProfilerStep#%d" % k, 1, base, 9, cat="user_annotation")
            yield op("aten::add", 1, base + 1, 3)
    elif shape == "names":
        for k in reversed(range(n)):
            yield op("op_%d" % k, 1, 10 * k, 5)
    elif shape == "stacks":
        for k in range(n):
            cs = "m%d.py(%d): f;main.py(1): <module>" % (k, k)
            yield op("aten::add", 1, 10 * k, 5, args={"Call stack": cs})
    elif shape == "nesting":
        for k in range(n):
            yield op("op_%d" % (k % 7), 1, k, 2 * (n - k) + 1)
    elif shape == "same":
        for _ in range(n):
            yield op("aten::add", 1, 100, 5)
    elif shape == "shapes":
        for k in range(n):
            yield op("aten::add", 1, 10 * k, 5, args={"Input Dims": [[k, 1], []]})
    else:
        raise SystemExit("unknown shape %r" % shape)


def write_trace(path, shape, n):
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        first = True
        for e in events(shape, n):
            if not first:
                f.write(",\n")
            f.write(json.dumps(e, separators=(",", ":")))
            first = False
        f.write("\n]}\n")
    return os.path.getsize(path)


def shape_args(shape, n):
    if shape == "steps":
        return ["--steps", "0-%d" % n]
    if shape == "stacks":
        return ["--group-by-stack", "2"]
    if shape == "shapes":
        return ["--group-by-shape"]
    return []


def run(cmd, timeout):
    t0 = time.perf_counter()
    cp = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                        timeout=timeout)
    dt = time.perf_counter() - t0
    if cp.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), cp.returncode,
                                                 cp.stderr.decode(errors="replace")))
    return dt


def measure(tool, shape, n, runs, mode, tmp, timeout):
    """(bytes, best seconds) of `averages` on the shape at n."""
    path = os.path.join(tmp, "%s_%d.json" % (shape, n))
    size = write_trace(path, shape, n)
    target = path
    if mode == "db":
        target = os.path.join(tmp, "%s_%d.db" % (shape, n))
        if os.path.exists(target):
            os.unlink(target)
        run([tool, "ingest", target, path], timeout)
    cmd = [tool, "averages", "--row-limit", "-1"] + shape_args(shape, n) + [target]
    best = min(run(cmd, timeout) for _ in range(runs))
    return size, best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    ap.add_argument("--shape", default="all", help="one of %s or all" % ", ".join(DEFAULT_N))
    ap.add_argument("--n", type=int, default=0, help="N (default per shape, ~1 s)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--input", choices=["db", "file"], default="db")
    ap.add_argument("--max-ratio", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    shapes = list(DEFAULT_N) if a.shape == "all" else [a.shape]
    tmp = tempfile.mkdtemp(prefix="tt_scale_avg_")
    bad = 0
    try:
        print("%-8s %-5s %9s %9s %9s %8s" % ("shape", "input", "N", "MB", "seconds", "MB/s"))
        for shape in shapes:
            n = a.n or DEFAULT_N[shape]
            res = []
            for k in (n, 4 * n):
                size, t = measure(a.tracetool, shape, k, a.runs, a.input, tmp, a.timeout)
                res.append(t)
                print("%-8s %-5s %9d %9.1f %9.3f %8.1f" % (shape, a.input, k, size / 1e6, t,
                                                           size / 1e6 / max(t, 1e-9)))
                sys.stdout.flush()
            ratio = res[1] / max(res[0], 1e-9)
            ok = ratio <= a.max_ratio
            bad += not ok
            print("%-8s ratio t(4N)/t(N) = %.2f %s" % (shape, ratio, "ok" if ok else "TOO HIGH"))
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print("peak RSS of the children: %.1f MB" % (rss / 1024.0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
