#!/usr/bin/env python3
"""`kernels --sequences` and `breakdown --by annotation` stay linear, and their
memory does not follow the trace.

HTA's nccl_parser_config trace (kernels, ops, gpu_user_annotation events)
repeated N and 4N times by shared/tools/scale_trace.py; each command run on
both files: the 4N run must cost at most 8 times the N run (CPU time, best of
2), and at least 1.5 times (it did the work: a fixed cost per process, about
0.06 s of buffers and the strings the first copy interns, keeps these inputs
near 2.5x, not 4x), and its peak RSS stay under 64 MB (outside sanitizer builds):
what grows with the trace is spilled to temporary files; the strings, the
distinct sequences and the names' sums do not grow with copies. Python
standard library only.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, HERE)
import trace_expect as te  # noqa: E402
from test_scaling_breakdown import measure  # noqa: E402  best of 2: (CPU s, peak RSS MB)

COPIES = 3
TRACE = os.path.join(te.shared_dir(), "testdata", "hta", "nccl_parser_config", "nccl_data.json.gz")
SCALE = os.path.join(te.shared_dir(), "tools", "scale_trace.py")
RUNS = (["kernels", "--sequences", "3"],
        ["kernels", "--sequences", "2", "--under-op", "aten::"],
        ["breakdown", "--by", "annotation"],
        ["breakdown", "--by", "annotation", "--kernels"],
        ["breakdown", "--by", "annotation", "--kernels", "--time-range", "0:"])


def main(runs=RUNS, name="test_scaling_kseq"):
    c = te.Checker(name)
    if not os.path.exists(TRACE) or not os.path.exists(SCALE):
        c.skip(TRACE, "shared trace or scale_trace.py missing")
        return c.finish()
    tmp = tempfile.mkdtemp(prefix="tt_scale_kseq_")
    try:
        files = {}
        for n in (COPIES, 4 * COPIES):
            files[n] = os.path.join(tmp, "t_%d.json" % n)
            cp = subprocess.run([sys.executable, SCALE, TRACE, files[n], "--copies", str(n)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            c.eq(cp.returncode, 0, "scale_trace --copies %d" % n)
        for args in runs:
            name = " ".join(args)
            m1 = measure(args + [files[COPIES]])
            m4 = measure(args + [files[4 * COPIES]])
            if not c.check(m1 and m4, "%s: both runs exit 0" % name):
                continue
            ratio = m4[0] / max(m1[0], 0.01)
            print("%s: N %.3f s %.1f MB, 4N %.3f s %.1f MB, ratio %.2f"
                  % (name, m1[0], m1[1], m4[0], m4[1], ratio))
            c.check(1.5 <= ratio <= 8, "%s: 1.5 <= t(4N)/t(N) <= 8" % name, "%.2f" % ratio)
            if not os.environ.get("TT_SANITIZED"):  # ASan's quarantine grows with the work
                c.check(m4[1] <= 64, "%s: RSS(4N) <= 64 MB" % name, "%.1f MB" % m4[1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
