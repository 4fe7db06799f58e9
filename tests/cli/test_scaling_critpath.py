#!/usr/bin/env python3
"""critical-path stays linear in the step's events, and holds only them.

1. A synthetic trace whose ProfilerStep#1 holds N and then 4N iterations
   (an op with a nested op, a launch, its kernel on one of two streams; a
   cudaStreamSynchronize every 50): `critical-path --step 1` at 4N costs
   between 2 and 8 times its cost at N (CPU time, best of 2).
2. A small ProfilerStep#1 at the start of a trace whose other steps hold N
   and then 4N iterations: the events outside the window go to the
   spills, not to memory, so the peak RSS of the 4N run stays within 16 MB
   of the N run's (outside sanitizer builds).

Python standard library only; run with --n N to print the figures of one
size (no checks).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

N = 12000


def write_trace(path, n, small_first=0):
    """n iterations in ProfilerStep#1 (small_first = 0), or small_first
    iterations in ProfilerStep#1 and n more in ProfilerStep#2..."""
    corr = [0]
    with open(path, "w") as f:
        f.write('{"distributedInfo": {"rank": 0}, "traceEvents": [\n')

        def ev(s):
            f.write(s + ",\n")

        def iterations(t, k, first):
            for i in range(k):
                corr[0] += 1
                stream = 7 if i % 3 else 8
                ev('{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,'
                   '"ts":%d,"dur":20}' % t)
                ev('{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,'
                   '"ts":%d,"dur":15}' % (t + 2))
                ev('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                   '"ts":%d,"dur":5,"args":{"correlation":%d}}' % (t + 5, corr[0]))
                ev('{"ph":"X","cat":"kernel","name":"gemm_%d","pid":0,"tid":%d,"ts":%d,'
                   '"dur":%d,"args":{"device":0,"stream":%d,"correlation":%d}}'
                   % (i % 5, stream, t + 12 + (i % 7), 10 + (i % 11), stream, corr[0]))
                t += 25
                if (first + i) % 50 == 49:
                    corr[0] += 1
                    ev('{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,'
                       '"tid":1,"ts":%d,"dur":40,"args":{"correlation":%d}}' % (t, corr[0]))
                    ev('{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,'
                       '"ts":%d,"dur":38,"args":{"stream":7,"device":0,"correlation":%d,'
                       '"cuda_sync_kind":"Stream Sync"}}' % (t + 1, corr[0]))
                    t += 45
            return t

        t = 1000
        first = small_first or n
        end = iterations(t, first, 0)
        ev('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,'
           '"ts":%d,"dur":%d}' % (t - 10, end - t + 100))
        if small_first:
            step = 2
            for k in range(0, n, 1000):
                t = end + 200
                end = iterations(t, min(1000, n - k), k)
                ev('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,'
                   '"tid":1,"ts":%d,"dur":%d}' % (step, t - 10, end - t + 100))
                step += 1
        f.write('{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]}\n')


def one_run(args):
    """(CPU seconds, peak RSS in MB) of one run, None when it fails"""
    child = subprocess.Popen([te.tracetool_path()] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    status, usage = os.wait4(child.pid, 0)[1:]
    if os.waitstatus_to_exitcode(status):
        return None
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def measure(args):
    """the smaller CPU time and RSS of two runs (None: one failed)"""
    runs = [one_run(args), one_run(args)]
    if None in runs:
        return None
    return tuple(min(x) for x in zip(*runs))


def main():
    c = te.Checker("test_scaling_critpath")
    only = int(sys.argv[2]) if len(sys.argv) == 3 and sys.argv[1] == "--n" else None
    tmp = tempfile.mkdtemp(prefix="tt_scale_cp_")
    try:
        m = {}
        for n in ((only,) if only else (N, 4 * N)):
            trace = os.path.join(tmp, "step_%d.json" % n)
            write_trace(trace, n)
            m[n] = measure(["critical-path", "--step", "1", "--format", "json", trace])
            os.unlink(trace)
            print("step of %d iterations: %s" % (n, m[n] and "%.2f s CPU, %.1f MB" % m[n]))
        if not only and c.check(m[N] and m[4 * N], "the step at N and 4N: exit 0"):
            ratio = m[4 * N][0] / max(m[N][0], 0.05)
            print("ratio %.2f" % ratio)
            c.check(2 <= ratio <= 8, "step: 2 <= t(4N)/t(N) <= 8", "%.2f" % ratio)
        for n in ((only,) if only else (N, 4 * N)):
            trace = os.path.join(tmp, "out_%d.json" % n)
            write_trace(trace, n, small_first=100)
            m[n] = measure(["critical-path", "--step", "1", "--format", "json", trace])
            os.unlink(trace)
            print("small step, %d iterations outside: %s"
                  % (n, m[n] and "%.2f s CPU, %.1f MB" % m[n]))
        if not only and c.check(m[N] and m[4 * N], "a small step at N and 4N: exit 0"):
            if not os.environ.get("TT_SANITIZED"):
                c.check(m[4 * N][1] <= m[N][1] + 16, "RSS(4N) <= RSS(N) + 16 MB",
                        "%.1f MB, %.1f MB" % (m[N][1], m[4 * N][1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
