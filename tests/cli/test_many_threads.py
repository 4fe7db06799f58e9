#!/usr/bin/env python3
"""Memory per thread id (issue 29, low: 1.6M thread ids took 1.9 GB).

A trace of 200,000 one-op threads against one of the same 200,000 ops on
one thread: what ingest and averages hold per thread of the trace (their
nesting stack and op window start at a few records, not 16) stays under
0.8 KiB (it was 1.1 KiB; 0.55 KiB after). Memory, not time: peak RSS of
the child processes. Skipped under a sanitizer, whose allocator adds its
own redzones.

Environment: TRACETOOL, TT_SANITIZED (set by ctest in sanitizer builds).
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("many_threads")
TT = os.path.abspath(os.environ.get("TRACETOOL", "build/tracetool"))
N = 200000


def make(path, threads):
    with open(path, "w") as f:
        f.write('{"traceEvents":[')
        f.write(",".join('{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":%d,"ts":%d,"dur":1}'
                         % (i % threads + 1, 2 * i) for i in range(N)))
        f.write("]}")


def peak_kib(args):
    p = subprocess.run(["/usr/bin/time", "-f", "%M", TT] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    last = p.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
    C.check(p.returncode == 0, " ".join(args[:1]) + " exits 0", last)
    return int(last)


def main():
    if not os.path.exists(TT):
        C.skip("all", "no tracetool binary")
        return C.finish()
    if os.environ.get("TT_SANITIZED") or not os.path.exists("/usr/bin/time"):
        C.skip("all", "sanitizer build or no /usr/bin/time: RSS is not the program's")
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        one, many = os.path.join(tmp, "one.json"), os.path.join(tmp, "many.json")
        make(one, 1)
        make(many, N)
        for cmd in ("ingest", "averages"):
            rss = []
            for path in (one, many):
                args = [cmd, path]
                if cmd == "ingest":
                    db = path + ".db"
                    args = ["ingest", "-q", db, path]
                rss.append(peak_kib(args))
            per = (rss[1] - rss[0]) * 1024.0 / N
            C.check(per < 800, "%s: %.0f bytes per thread id (at most 800)" % (cmd, per),
                    "%d KiB for one thread, %d KiB for %d" % (rss[0], rss[1], N))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
