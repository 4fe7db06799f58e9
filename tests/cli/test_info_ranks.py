#!/usr/bin/env python3
"""`tracetool info` on a database of several traces starts with a rank
overview: one row per trace, by rank, with the world size, the GPU the rank
ran on (the device most of its GPU activities name, looked up in the
trace's deviceProperties), its ProfilerStep#N annotations, span and events.
Expected values are computed here from the 8 traces of the PARAM DLRM job
(Python standard library only); a database of one trace, --trace and CSV
have no overview.
"""

import collections
import glob
import gzip
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("info_ranks")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")


def expected(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    evs = doc["traceEvents"]
    dev = collections.Counter(e["args"]["device"] for e in evs
                              if e.get("cat") in GPU_CATS and "device" in e.get("args", {}))
    device = sorted(dev.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if dev else None
    props = doc.get("deviceProperties", [])
    gpu = next((p["name"] for p in props if p.get("id") == device),
               props[0]["name"] if props else None)
    steps = set(e["name"] for e in evs if e.get("ph") == "X" and
                e.get("cat") in ("cpu_op", "user_annotation") and
                str(e.get("name", "")).lower().startswith("profilerstep#"))
    span = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in evs
            if e.get("ph") in ("X", "i", "I", "B", "E") and isinstance(e.get("ts"), (int, float))]
    di = doc["distributedInfo"]
    return {"rank": di["rank"], "world_size": di["world_size"], "gpu": gpu, "device": device,
            "steps": len(steps), "events": len(evs), "path": os.path.abspath(path),
            "span_ms": (max(b for _, b in span) - min(a for a, _ in span)) / 1e3}


def check(tmp, files):
    db = os.path.join(tmp, "dlrm.db")
    cp = te.run_tool(["ingest", "-q", db] + files)
    C.eq(cp.returncode, 0, "ingest the 8 ranks")
    want = sorted((expected(f) for f in files), key=lambda r: r["rank"])
    cp = te.run_tool(["info", "--format", "json", db])
    C.eq(cp.returncode, 0, "info --format json exit code")
    doc = json.loads(cp.stdout.decode())
    C.eq(list(doc.keys()), ["ranks", "traces"], "json: the overview, then the traces")
    got = doc.get("ranks", [])
    C.eq(len(got), 8, "one row per rank")
    for g, w in zip(got, want):
        label = "rank %s" % w["rank"]
        for k in ("rank", "world_size", "gpu", "device", "steps", "events"):
            C.eq(g.get(k), w[k], "%s: %s" % (label, k))
        C.eq(os.path.abspath(g.get("path", "")), w["path"], label + ": path")
        C.check(abs(g.get("duration_ns", 0) / 1e6 - w["span_ms"]) < 0.01, label + ": span",
                (g.get("duration_ns"), w["span_ms"]))
    C.eq(len(doc["traces"]), 8, "json: every trace's summary after it")
    # text: the overview first, ranks in order
    cp = te.run_tool(["info", db])
    lines = cp.stdout.decode().splitlines()
    C.eq(lines[0] if lines else None, "ranks:", "text: starts with the rank overview")
    rows = [line.split() for line in lines[3:11]]
    C.eq([r[0] for r in rows], [str(r["rank"]) for r in want], "text: rows by rank")
    C.check(all("Tesla V100-SXM2-32GB" in line for line in lines[3:11]), "text: the GPU model")
    # no overview: one trace picked, CSV, a database of one trace
    cp = te.run_tool(["info", "--trace", "1", db])
    C.check(not cp.stdout.decode().startswith("ranks:"), "--trace: no overview")
    cp = te.run_tool(["info", "--format", "csv", db])
    C.eq(len(cp.stdout.decode().splitlines()), 9, "csv: a header and one row per trace")
    one = os.path.join(tmp, "one.db")
    te.run_tool(["ingest", "-q", one, files[0]])
    cp = te.run_tool(["info", "--format", "json", one])
    C.eq(list(json.loads(cp.stdout.decode()).keys()), ["traces"], "one trace: no overview")


def k(dev, ts):
    return {"ph": "X", "cat": "kernel", "name": "k", "pid": dev, "tid": 7, "ts": ts, "dur": 5,
            "args": {"device": dev, "stream": 7, "correlation": ts}}


def step(n, ts):
    return {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 1,
            "tid": 1, "ts": ts, "dur": 50}


# rank 0 ran on device 3 (two kernels there, one on device 0); rank 1 has no
# GPU activity (its GPU is deviceProperties' first entry); rank 1 comes
# first in the database, the overview sorts by rank
SMALL = {
    "r1.json": {"distributedInfo": {"rank": 1, "world_size": 2},
                "deviceProperties": [{"id": 0, "name": "GPU-C"}],
                "traceEvents": [step(1, 0)]},
    "r0.json": {"distributedInfo": {"rank": 0, "world_size": 2},
                "deviceProperties": [{"id": 0, "name": "GPU-A"}, {"id": 3, "name": "GPU-B"}],
                "traceEvents": [step(1, 0), step(2, 60), step(2, 120), k(3, 10), k(0, 20),
                                k(3, 70)]},
}


def check_small(tmp):
    paths = []
    for name in ("r1.json", "r0.json"):
        paths.append(os.path.join(tmp, name))
        with open(paths[-1], "w") as f:
            json.dump(SMALL[name], f)
    db = os.path.join(tmp, "small.db")
    C.eq(te.run_tool(["ingest", "-q", db] + paths).returncode, 0, "small: ingest")
    cp = te.run_tool(["info", "--format", "json", db])
    got = json.loads(cp.stdout.decode()).get("ranks", [])
    C.eq([(r.get("rank"), r.get("device"), r.get("gpu"), r.get("steps")) for r in got],
         [(0, 3, "GPU-B", 2), (1, None, "GPU-C", 1)],
         "small: rank, the most used device, its name, distinct steps")


def main():
    files = sorted(glob.glob(os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank",
                                          "kineto", "*.json.gz")))
    with tempfile.TemporaryDirectory(prefix="tt_info_ranks_") as tmp:
        C.section("small", check_small, tmp)
    if len(files) != 8:
        C.skip("dlrm_8rank", "the 8 traces of testdata/param/dlrm_8rank are missing")
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_info_ranks_") as tmp:
        C.section("dlrm 8 ranks", check, tmp, files)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
