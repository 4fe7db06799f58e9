#!/usr/bin/env python3
"""`kernels --by activity` sorts the activities by start, then by their
order in the trace, from a file and from a database alike, also when there
are more than fit in memory at once (sorted runs in a spool file, merged
as they are printed): many activities share a start and come out of
order, so a wrong merge or an unstable sort shows in the correlation ids.
--row-limit cuts the merged order, --only memory keeps the memcpys, and
--steps keeps what was launched in the chosen ProfilerStep#N (the launch
is the runtime call's start, which may come after the activity).
"""

import csv
import io
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("kernels_activity_order")
N = 80000  # more than one run in memory (kernels_trace.c RUN)


def write_trace(path):
    """N GPU activities, starts shuffled with many ties; the runtime calls
    after them, in two steps of [0, 2500) and [2500, 5000)"""
    acts = []
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        f.write('{"ph":"X","cat":"cpu_op","name":"ProfilerStep#1","pid":1,"tid":1,'
                '"ts":0,"dur":2500},\n')
        f.write('{"ph":"X","cat":"cpu_op","name":"ProfilerStep#2","pid":1,"tid":1,'
                '"ts":2500,"dur":2500},\n')
        for i in range(N):
            ts = (i * 7919) % 5000
            mem = i % 9 == 0
            cat, nm = ("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)") if mem else \
                ("kernel", "k%d" % (i % 5))
            f.write('{"ph":"X","cat":"%s","name":"%s","pid":0,"tid":7,"ts":%d,"dur":1,'
                    '"args":{"correlation":%d,"device":0,"stream":7}},\n'
                    % (cat, nm, 10000 + ts, i + 1))
            acts.append((10000 + ts, i, mem))
        for i in range(N):  # launched at its start - 10000 (its step)
            f.write('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,'
                    '"tid":1,"ts":%d,"dur":1,"args":{"correlation":%d}}%s\n'
                    % (acts[i][0] - 10000, i + 1, "," if i + 1 < N else ""))
        f.write("]}\n")
    return sorted(acts)


def corrs(out):
    return [int(r["correlation"]) for r in csv.DictReader(io.StringIO(out.decode()))]


def main():
    tmp = tempfile.mkdtemp(prefix="tt-korder-")
    try:
        path = os.path.join(tmp, "t.json")
        acts = write_trace(path)
        db = os.path.join(tmp, "t.db")
        C.eq(te.run_tool(["ingest", "--quiet", db, path]).returncode, 0, "ingest")
        want = [i + 1 for _, i, _ in acts]
        mem = [i + 1 for _, i, m in acts if m]
        step1 = [i + 1 for ts, i, _ in acts if ts - 10000 < 2500]
        for src, name in ((path, "file"), (db, "database")):
            base = ["kernels", "--by", "activity", "--format", "csv"]
            cp = te.run_tool(base + [src])
            C.eq(cp.returncode, 0, "%s: exit code" % name)
            C.check(corrs(cp.stdout) == want, "%s: by start, then trace order" % name)
            cp = te.run_tool(base + ["--row-limit", "50001", src])
            C.check(corrs(cp.stdout) == want[:50001], "%s: --row-limit of the merge" % name)
            cp = te.run_tool(base + ["--only", "memory", src])
            C.check(corrs(cp.stdout) == mem, "%s: --only memory" % name)
            cp = te.run_tool(base + ["--steps", "1", src])
            C.check(corrs(cp.stdout) == step1, "%s: --steps 1 by launch" % name)
            cp = te.run_tool(["kernels", "--by", "activity", "--format", "json",
                              "--row-limit", "3", src])
            rows = json.loads(cp.stdout)["traces"][0]["rows"]
            C.eq([r["correlation"] for r in rows], want[:3], "%s: json" % name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
