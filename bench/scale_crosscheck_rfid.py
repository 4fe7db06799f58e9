#!/usr/bin/env python3
"""bench/scale_crosscheck_rfid.py - crosscheck on hostile inputs whose ids repeat.

Generates an Execution Trace (JSON) and a Kineto trace (JSON) of N ops each in
which every op carries the same id, at N and 4N, ingests each pair into a
database once (timed apart: ingest is not crosscheck's code) and times
`tracetool crosscheck --no-store DB` on both (best of 3) and prints
sizes, seconds, MB/s, the ratio t(4N)/t(N) and the peak RSS of the children.
Exits 1 when the ratio exceeds 5 (quadratic behaviour). Python stdlib only.

Shapes (--shape):
  rf        every op has rf_id 7 in the ET and "Record function id" 7 in
            Kineto (join on Record function id: one group of N ops);
  external  no "Record function id"; every Kineto op has External id 7 and
            every ET op rf_id 7 (constant-offset search and join);
  threads   N ops spread over N/2 ET threads / Kineto threads, ids repeated
            (thread bookkeeping);
  order     N ops over N/2 threads, no "Record function id", and External ids
            from per-thread counters (PyTorch 2.0/2.1: blocks of 1024 per
            thread): the join in per-thread order, one window search per
            thread.

usage: scale_crosscheck_rfid.py [--tracetool PATH] [--n N] [--shape rf|external|threads]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

NAMES = ["aten::add", "aten::mul", "aten::empty", "aten::copy_", "aten::relu", "aten::mm"]


def make(n, shape, d):
    """Write et.json and kineto.json for n ops; return their paths."""
    pid = 4242
    nodes = [{"name": "[pytorch|profiler|execution_trace|thread]", "id": 1, "rf_id": 0,
              "parent": 0, "seq_id": -1, "tid": 1, "op_schema": "", "inputs": [],
              "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [],
              "output_types": []}]
    evs = []
    for i in range(n):
        name = NAMES[i % len(NAMES)]
        tid = 1 + (i % max(1, n // 2)) if shape in ("threads", "order") else 1
        nodes.append({"name": name, "id": i + 2, "rf_id": 7 if shape != "order" else i + 1,
                      "parent": 1, "seq_id": -1,
                      "tid": tid, "op_schema": "", "inputs": [], "input_shapes": [],
                      "input_types": [], "outputs": [], "output_shapes": [],
                      "output_types": []})
        args = {"External id": 7 if shape not in ("threads", "order") else 7 + i}
        if shape == "order":
            args["External id"] = 1024 * tid + i // max(1, n // 2)
        if shape in ("rf", "threads"):
            args["Record function id"] = 7
        evs.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": pid,
                    "tid": 1000 + tid, "ts": 1000 + 2 * i, "dur": 1, "args": args})
    et = {"schema": "1.0.1", "pid": pid, "time": "2024-01-01 00:00:00", "start_ts": 0,
          "nodes": nodes}
    k = {"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": evs}
    pe, pk = os.path.join(d, "et_%d.json" % n), os.path.join(d, "kineto_%d.json" % n)
    with open(pe, "w") as f:
        json.dump(et, f)
    with open(pk, "w") as f:
        json.dump(k, f)
    return pe, pk


def best_time(tool, db, reps=3):
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run([tool, "crosscheck", "--no-store", db],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t = time.perf_counter() - t0
        if p.returncode not in (0, 1):
            sys.exit("tracetool failed (%d): %s" % (p.returncode, p.stderr.decode()[-300:]))
        best = t if best is None else min(best, t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    ap.add_argument("--n", type=int, default=0, help="default: 200000 (threads: 20000)")
    ap.add_argument("--shape", default="rf", choices=["rf", "external", "threads", "order"])
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        res = []
        n0 = a.n or {"threads": 20000, "order": 500}.get(a.shape, 200000)
        for n in (n0, 4 * n0):
            pe, pk = make(n, a.shape, d)
            size = os.path.getsize(pe) + os.path.getsize(pk)
            db = os.path.join(d, "t_%d.db" % n)
            t0 = time.perf_counter()
            subprocess.run([a.tracetool, "ingest", db, pe, pk], check=True,
                           stdout=subprocess.DEVNULL)
            ti = time.perf_counter() - t0
            t = best_time(a.tracetool, db, a.reps)
            res.append(t)
            print("shape %s N=%d: %.1f MB JSON (ingest %.2f s), crosscheck %.3f s, %.1f MB/s"
                  % (a.shape, n, size / 1e6, ti, t, size / 1e6 / t))
        ratio = res[1] / res[0]
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        print("ratio t(4N)/t(N) = %.2f; peak RSS %.0f MB" % (ratio, rss))
        return 1 if ratio > 5 else 0


if __name__ == "__main__":
    sys.exit(main())
