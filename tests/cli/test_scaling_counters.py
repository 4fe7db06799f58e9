#!/usr/bin/env python3
"""queue and bandwidth stay linear, and their memory does not follow the trace.

N and 4N copies of a real trace (hta/trace_filter/sampled_rank-0, 4811
events a copy, made with shared/tools/scale_trace.py), then `queue`,
`bandwidth` and both with --series on each: the 4N run must cost between
2 and 8 times the N run (CPU time, best of 2), and its peak RSS stay within
16 MB of the N run's (outside sanitizer builds): the joins and sorts wait in
spills of at most 4 MiB of records each, the rest on disk. Python standard
library only.

Run it with --n N to print the figures for N copies (no checks).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counters_common as cc  # noqa: E402
from counters_common import te  # noqa: E402

N = 32
TRACE = "hta/trace_filter/sampled_rank-0.json.gz"
RUNS = (["queue"], ["queue", "--series"], ["bandwidth"], ["bandwidth", "--series"])


def measure(args):
    """best of 2: (CPU seconds, peak RSS in MB), or None when it fails"""
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


def make(tmp, copies):
    """{n: the file of n copies} (made side by side), None when one failed"""
    out, procs = {}, {}
    for n in copies:
        out[n] = os.path.join(tmp, "t_%d.json" % n)
        procs[n] = subprocess.Popen(
            [sys.executable, os.path.join(te.shared_dir(), "tools", "scale_trace.py"),
             cc.shared_trace(TRACE), out[n], "--copies", str(n)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out if all(p.wait() == 0 for p in procs.values()) else None


def main():
    c = te.Checker("test_scaling_counters")
    if not os.path.exists(cc.shared_trace(TRACE)):
        print("SKIP: no shared test data")
        return te.SKIP_EXIT
    only = int(sys.argv[2]) if len(sys.argv) == 3 and sys.argv[1] == "--n" else None
    tmp = tempfile.mkdtemp(prefix="tt_scale_ctr_")
    try:
        files = make(tmp, (only,) if only else (N, 4 * N))
        if not c.check(files, "scale_trace.py made the copies"):
            return c.finish()
        for args in RUNS:
            what = " ".join(args)
            if only:
                m = measure(args + [files[only]])
                print("%s: N=%d %s" % (what, only, m and "%.2f s CPU, %.1f MB" % m))
                continue
            m1, m4 = measure(args + [files[N]]), measure(args + [files[4 * N]])
            if not c.check(m1 and m4, "%s: both runs exit 0" % what):
                continue
            ratio = m4[0] / max(m1[0], 0.01)
            print("%s: N=%d %.3f s %.1f MB, 4N %.3f s %.1f MB, ratio %.2f"
                  % (what, N, m1[0], m1[1], m4[0], m4[1], ratio))
            c.check(2 <= ratio <= 8, "%s: 2 <= t(4N)/t(N) <= 8" % what, "%.2f" % ratio)
            if not os.environ.get("TT_SANITIZED"):  # ASan's quarantine grows with the work
                c.check(m4[1] <= m1[1] + 16, "%s: RSS(4N) <= RSS(N) + 16 MB" % what,
                        "%.1f vs %.1f MB" % (m4[1], m1[1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
