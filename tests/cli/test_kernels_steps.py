#!/usr/bin/env python3
"""`kernels --steps` (issue 24 item 5: --steps means the same everywhere):
only what was launched in the chosen ProfilerStep#N, a GPU activity by its
runtime call's start (its own start without one), a runtime call by its start,
as breakdown --steps. Expected here from the trace JSON alone (Python
standard library, times exact with Decimal): per kernel name the count and
total duration, the activity rows, the runtime calls; from the file and from
a database alike.
"""

import collections
import csv
import gzip
import io
import json
import os
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("kernels_steps")
TRACE = os.path.join(te.shared_dir(), "testdata", "hta", "trace_diff", "control", "control.json.gz")
RUNTIME = ("cuda_runtime", "cuda_driver", "runtime")
GPU = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def ns(v):
    return int(Decimal(str(v)) * 1000)


def expected(path, lo, hi):
    with gzip.open(path, "rb") as f:
        ev = json.loads(f.read(), parse_float=Decimal)["traceEvents"]
    steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
             and lo <= int(e["name"][13:]) <= hi]
    inside = lambda t: any(a <= t < b for a, b in steps)
    launch = {}
    for e in ev:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in RUNTIME:
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                launch.setdefault(c, ns(e["ts"]))
    kern = collections.defaultdict(lambda: [0, 0])
    acts = 0
    rt = collections.Counter()
    for e in ev:
        if e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat in GPU:
            t = launch.get((e.get("args") or {}).get("correlation"), ns(e["ts"]))
            if inside(t):
                acts += 1
                if GPU[cat] == "kernel":
                    kern[e["name"]][0] += 1
                    kern[e["name"]][1] += ns(e["dur"])
        elif cat in RUNTIME and inside(ns(e["ts"])):
            rt[e["name"]] += 1
    return {k: tuple(v) for k, v in kern.items()}, acts, dict(rt), len(steps)


def rows(args):
    p = te.run_tool(args)
    C.check(p.returncode == 0, " ".join(args[:4]) + ": exit 0", p.stderr.decode()[-300:])
    return list(csv.DictReader(io.StringIO(p.stdout.decode())))


def check(inp, label, lo, hi):
    kern, acts, rt, nsteps = expected(TRACE, lo, hi)
    C.check(nsteps == hi - lo + 1 and kern and rt, "the trace has the steps and launches in them")
    sel = "%d-%d" % (lo, hi)
    got = {r["name"]: (int(r["count"]), int(r["total_ns"]))
           for r in rows(["kernels", "--steps", sel, "--only", "kernels", "--format", "csv", inp])}
    C.eq(got, kern, "%s: kernels --steps %s, count and total per name" % (label, sel))
    n = len(rows(["kernels", "--by", "activity", "--steps", sel, "--format", "csv", inp]))
    C.eq(n, acts, "%s: --by activity --steps %s, one row per activity launched there" % (label, sel))
    got = {r["name"]: int(r["count"])
           for r in rows(["kernels", "--by", "runtime", "--steps", sel, "--format", "csv", inp])}
    C.eq(got, rt, "%s: --by runtime --steps %s, calls per name" % (label, sel))
    full = rows(["kernels", "--only", "kernels", "--format", "csv", inp])
    C.check(sum(int(r["count"]) for r in full) > sum(v[0] for v in kern.values()),
            "%s: without --steps there are more kernels" % label)


def main():
    if not os.path.exists(TRACE):
        C.skip(TRACE, "missing")
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "c.db")
        C.eq(te.run_tool(["ingest", "-q", db, TRACE]).returncode, 0, "ingest")
        for inp, label in ((TRACE, "file"), (db, "database")):
            C.section(label + " 1010-1011", check, inp, label, 1010, 1011)
            C.section(label + " 1013", check, inp, label, 1013, 1013)
        p = te.run_tool(["kernels", "--steps", "7-", TRACE])
        C.eq(p.returncode, 2, "a bad --steps is a usage error")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
