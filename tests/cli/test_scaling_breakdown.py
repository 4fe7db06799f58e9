#!/usr/bin/env python3
"""breakdown stays linear, and its memory does not follow the trace.

A synthetic GPU trace of N and 4N kernels (a runtime call each, a launch
delay that differs for every kernel, two streams, an NCCL kernel in ten,
a memcpy in twenty, a ProfilerStep every 500 kernels), ingested, then
`breakdown` (default, --by step, --by stream) on the database: the 4N run
must cost at most 8 times the N run (CPU time, best of 2), and its peak RSS
stay under 96 MB (outside sanitizer builds): SQLite's page cache (16 MiB)
and its two sorter buffers (16 MiB each) fill up as the trace grows, then
stay (2.56M kernels: 72 MB); what breakdown holds itself is per device,
step, stream and family. Python standard library only.

Run it with --n N to print the figures for a larger N (no checks).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

N = 40000
NAMES = ["void gemm_kernel_%d<float>(float*, int)" % i for i in range(40)]


def write_trace(path, n, seed=1):
    rnd = random.Random(seed)
    t = 1000.0  # us
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        step_start = t
        for i in range(n):
            if i % 500 == 0:
                if i:
                    f.write('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d",'
                            ' "pid": 1, "tid": 1, "ts": %.3f, "dur": %.3f},\n'
                            % (i // 500, step_start, t - step_start))
                step_start = t
            call = t
            dur = 2.0 + rnd.randrange(1000) / 1000.0
            delay = 5.0 + rnd.randrange(200000) / 1000.0
            if i % 20 == 19:
                cat, name, stream = "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 7
            elif i % 10 == 9:
                cat, name, stream = "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(x)", 20
            else:
                cat, name, stream = "kernel", NAMES[i % len(NAMES)], 7
            f.write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,'
                    ' "tid": 1, "ts": %.3f, "dur": %.3f, "args": {"correlation": %d}},\n'
                    % (call, dur, i + 1))
            f.write('{"ph": "X", "cat": "%s", "name": "%s", "pid": 0, "tid": %d, "ts": %.3f,'
                    ' "dur": %.3f, "args": {"device": 0, "stream": %d, "correlation": %d}},\n'
                    % (cat, name, stream, call + delay, 1.0 + rnd.randrange(50000) / 1000.0,
                       stream, i + 1))
            t += dur + rnd.randrange(3000) / 1000.0
        f.write('{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}\n')


def measure(args):
    """best of 2: (CPU seconds, peak RSS in MB), or None when it fails (no
    wall-clock limit: ctest's TIMEOUT catches a hang)"""
    best = None
    for _ in range(2):
        p = subprocess.Popen([te.tracetool_path()] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stderr.close()
        if p.returncode != 0:
            return None
        m = (ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0)
        best = m if best is None else (min(best[0], m[0]), min(best[1], m[1]))
    return best


def main():
    c = te.Checker("test_scaling_breakdown")
    only = None
    if len(sys.argv) == 3 and sys.argv[1] == "--n":
        only = int(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="tt_scale_bd_")
    try:
        dbs = {}
        for n in ((only,) if only else (N, 4 * N)):
            trace = os.path.join(tmp, "t_%d.json" % n)
            write_trace(trace, n)
            dbs[n] = os.path.join(tmp, "t_%d.db" % n)
            cp = te.run_tool(["ingest", "-q", dbs[n], trace])
            c.eq(cp.returncode, 0, "ingest %d kernels" % n)
            os.unlink(trace)
        for by in ("rank", "step", "stream"):
            args = ["breakdown", "--by", by, "--format", "json"]
            if only:
                m = measure(args + [dbs[only]])
                print("--by %s: N=%d %s" % (by, only, m and "%.2f s CPU, %.1f MB" % m))
                continue
            m1 = measure(args + [dbs[N]])
            m4 = measure(args + [dbs[4 * N]])
            if not c.check(m1 and m4, "--by %s: both runs exit 0" % by):
                continue
            ratio = m4[0] / max(m1[0], 0.05)
            print("--by %s: N=%d %.3f s %.1f MB, 4N %.3f s %.1f MB, ratio %.2f"
                  % (by, N, m1[0], m1[1], m4[0], m4[1], ratio))
            c.check(ratio <= 8, "--by %s: t(4N)/t(N) <= 8" % by, "%.2f" % ratio)
            if not os.environ.get("TT_SANITIZED"):  # ASan's quarantine grows with the work
                c.check(m4[1] <= 96, "--by %s: RSS(4N) <= 96 MB" % by, "%.1f MB" % m4[1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
