#!/usr/bin/env python3
"""A file read twice (TT_ROWS_RELINK: its rows need the SQL passes) keeps
its memory bounded: the 'all' trace of tests/tools/rare_traces.py ('B'
slices closed late, GPU activities far from their call, ops out of order)
at N and 4N, and the peak RSS (ru_maxrss) of each command at 4N must stay
well under 4 times the one at N (generous bounds: 2.5 times, or 40 MB
more). The fix-ups go to spills (4 MiB of memory each, the rest on disk).
No wall-clock limit (ctest's TIMEOUT catches a hang).

    test_scaling_relink.py [--scale N]   (default 40: about 60 MB at 4N)
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

COMMANDS = [["averages", "T"], ["kernels", "--by", "op", "T"], ["breakdown", "T"],
            ["memtimeline", "T", "O"], ["export", "T", "O"], ["diff", "T", "T"]]


def peak_mb(args):
    """(exit code, peak RSS in MB) of tracetool ARGS"""
    p = subprocess.Popen([te.tracetool_path()] + args, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss / 1024.0


def main():
    c = te.Checker("scaling_relink")
    scale = 40
    if len(sys.argv) == 3 and sys.argv[1] == "--scale":
        scale = int(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="tt-scale-relink-")
    try:
        traces = {}
        for k in (scale, 4 * scale):
            traces[k] = os.path.join(tmp, "all_%d.json" % k)
            # in a process of its own: a child forked from a big process
            # would count that process's pages in its own peak
            subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "rare_traces.py"),
                            "all", str(k), traces[k]], check=True)
        out = os.path.join(tmp, "out.json")
        for args in COMMANDS:
            mb = {}
            for k, t in traces.items():
                rc, mb[k] = peak_mb([t if a == "T" else out if a == "O" else a for a in args])
                c.eq(rc, 0, "%s at scale %d: exit 0" % (args[0], k))
            small, big = mb[scale], mb[4 * scale]
            label = "%s: peak RSS %.1f MB at N, %.1f MB at 4N" % (" ".join(args[:-1]), small, big)
            print(label)
            c.check(big < 2.5 * small or big < small + 40, label + ": not 4 times")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
