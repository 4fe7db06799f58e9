#!/usr/bin/env python3
"""Does ingest (and the analyses read from a file) stay linear on odd and
hostile traces?  For each shape, make the trace at N and 4N, time the
commands on both (best of --runs), and print MB/s, peak RSS and the ratio
t(4N) / t(N). Exits 1 when a ratio exceeds --max-ratio (default 5).

    bench/scale_ingest.py [--shapes compile,corr,threads,graph] [--n N] [--runs R]
                          [--commands ingest,averages,kernels] [--max-ratio X]

Shapes:
  compile  ../shared/testdata/hta/trace_diff/test (torch.compile + CUDA graphs)
           scaled with ../shared/tools/scale_trace.py --copies 1 and 4
  corr     N runtime calls and N kernels that all share one correlation id
  threads  N distinct threads, each with two nested cpu_ops and a runtime call
  graph    N/100 cudaGraphLaunch calls with 100 kernels each (one correlation
           per launch), the kernels written far from their launch
  deep     N nested ops (depth N), N runtime calls enclosed by half of them
  backwards  one op spanning the trace, N ops in it, N runtime calls written
           newest first (each call goes back in time)

Python standard library only; TRACETOOL (default build/tracetool) and
TT_SHARED (default ../shared) from the environment.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.environ.get("TRACETOOL", os.path.join(ROOT, "build", "tracetool"))
SHARED = os.environ.get("TT_SHARED", os.path.join(ROOT, "..", "shared"))


def ev(name, cat, ts, dur, pid=1, tid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def write_trace(path, events):
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        for i, e in enumerate(events):
            if i:
                f.write(",\n")
            f.write(json.dumps(e))
        f.write("\n]}\n")


def gen_corr(n):
    """n runtime calls and n kernels sharing correlation 7"""
    out = [ev("aten::op", "cpu_op", 0, 10 * n + 10, **{"External id": 1})]
    for i in range(n):
        out.append(ev("cudaLaunchKernel", "cuda_runtime", 1 + 10 * i, 5, correlation=7,
                      **{"External id": 1}))
    for i in range(n):
        out.append(ev("k", "kernel", 3 + 10 * i, 4, pid=0, tid=7, device=0, stream=7,
                      correlation=7, **{"External id": 1}))
    return out


def gen_threads(n):
    out = []
    for t in range(n):
        out.append(ev("aten::outer", "cpu_op", 100 * t, 50, tid=t + 1))
        out.append(ev("aten::inner", "cpu_op", 100 * t + 10, 20, tid=t + 1))
        out.append(ev("cudaLaunchKernel", "cuda_runtime", 100 * t + 15, 5, tid=t + 1,
                      correlation=t + 1))
        out.append(ev("k", "kernel", 100 * t + 40, 5, pid=0, tid=7, device=0, stream=7,
                      correlation=t + 1))
    return out


def gen_graph(n):
    launches = max(1, n // 100)
    cpu, gpu = [], []
    for i in range(launches):
        t0 = 1000 * i
        cpu.append(ev("CompiledFunction", "cpu_op", t0, 900, **{"External id": i + 1}))
        cpu.append(ev("cudaGraphLaunch", "cuda_runtime", t0 + 10, 20, correlation=i + 1,
                      **{"External id": i + 1}))
        for k in range(100):
            gpu.append(ev("triton_k%d" % k, "kernel", t0 + 50 + 8 * k, 5, pid=0, tid=7,
                          device=0, stream=7, correlation=i + 1))
    return cpu + gpu


def gen_backwards(n):
    """one op spanning the trace, n ops inside it, and n runtime calls (one
    in each op) written newest first: every call goes back in time"""
    out = [ev("aten::long", "cpu_op", 0, 10 * n + 10)]
    for i in range(n):
        out.append(ev("aten::op", "cpu_op", 1 + 10 * i, 8))
    for i in reversed(range(n)):
        out.append(ev("cudaLaunchKernel", "cuda_runtime", 2 + 10 * i, 2, correlation=i + 1))
    return out


def gen_deep(n):
    """n nested ops (depth n) and n runtime calls enclosed only by the outer
    half of them"""
    out = [ev("aten::op%d" % (i % 7), "cpu_op", 10 * i, 20 * (n - i) + 10) for i in range(n)]
    mid = 10 * n + 5 * n
    for i in range(n):
        out.append(ev("cudaLaunchKernel", "cuda_runtime", mid + (i % 3), 1, correlation=i + 1))
    return out


def make(shape, n, d):
    path = os.path.join(d, "%s-%d.json" % (shape, n))
    if shape == "compile":
        src = os.path.join(SHARED, "testdata", "hta", "trace_diff", "test", "test.json.gz")
        subprocess.run([sys.executable, os.path.join(SHARED, "tools", "scale_trace.py"),
                        "--copies", str(n), src, path], check=True, stdout=subprocess.DEVNULL)
    else:
        write_trace(path, {"corr": gen_corr, "threads": gen_threads, "graph": gen_graph,
                           "backwards": gen_backwards, "deep": gen_deep}[shape](n))
    return path


def timed(argv, runs):
    """(best wall seconds, peak RSS in KiB of the child) over runs"""
    best, rss = None, 0
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode:
            raise SystemExit("%s failed (%d)" % (" ".join(argv), p.returncode))
        rss = max(rss, ru.ru_maxrss)
        best = dt if best is None else min(best, dt)
    return best, rss


def command(cmd, trace, d):
    if cmd == "ingest":
        db = os.path.join(d, "x.db")
        if os.path.exists(db):
            os.unlink(db)
        return [TOOL, "ingest", "-q", "--replace", db, trace]
    return [TOOL, cmd, "--row-limit", "5", trace] if cmd != "memtimeline" else \
        [TOOL, cmd, trace, os.path.join(d, "m.json")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="compile,corr,threads,graph,backwards,deep")
    ap.add_argument("--commands", default="ingest,averages,kernels")
    ap.add_argument("--n", type=int, default=0, help="N (default per shape)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=5.0)
    a = ap.parse_args()
    default_n = {"compile": 1, "corr": 20000, "threads": 25000, "graph": 50000,
                 "backwards": 20000, "deep": 20000}
    bad = 0
    print("| shape | command | N | MB | t(N) s | MB/s | t(4N) s | MB/s | ratio | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="tt-scale-") as d:
        for shape in a.shapes.split(","):
            n = a.n or default_n[shape]
            small, big = make(shape, n, d), make(shape, 4 * n, d)
            mb = [os.path.getsize(p) / 1e6 for p in (small, big)]
            for cmd in a.commands.split(","):
                t1, _ = timed(command(cmd, small, d), a.runs)
                t4, rss = timed(command(cmd, big, d), a.runs)
                ratio = t4 / t1 if t1 > 0 else float("inf")
                flag = "" if ratio <= a.max_ratio else "  <-- super-linear"
                bad += ratio > a.max_ratio
                print("| %s | %s | %d | %.1f | %.3f | %.0f | %.3f | %.0f | %.2f | %.0f |%s" % (
                    shape, cmd, n, mb[0], t1, mb[0] / t1, t4, mb[1] / t4, ratio, rss / 1024, flag))
                sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
