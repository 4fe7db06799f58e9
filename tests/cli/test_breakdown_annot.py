#!/usr/bin/env python3
"""`breakdown --by annotation [--kernels]` (docs/HTA_kseq.md).

- Against HTA v0.6.1's own output
  (tests/fixtures/hta/expected/gpu_user_annotation_breakdown/*.json, made by
  HTA, never by tracetool): on nccl_parser_config, the only shared trace with
  gpu_user_annotation events, the per-name count, sum, min, max, mean and
  std of the annotations' durations (get_gpu_user_annotation_breakdown) and
  the count and total of the activities under each innermost annotation
  (get_gpu_kernels_with_user_annotations), with HTA's window (the last
  ProfilerStep left out) given as --time-range :T, T that step's start read
  from the raw JSON; from the file and a database. The trace sets HTA gives
  null for have no gpu_user_annotation: exit 4, one line.
- Against an independent computation from the raw JSON (Python standard
  library, exact with Decimal) over the whole trace (no time range: the file
  is read without the links).
"""

import collections
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("breakdown_annot")
EXPECTED = os.path.join(HERE, "..", "fixtures", "hta", "expected", "gpu_user_annotation_breakdown")
TESTDATA = os.path.join(te.shared_dir(), "testdata")
NCCL = os.path.join(TESTDATA, "hta", "nccl_parser_config", "nccl_data.json.gz")
GPU = ("kernel", "gpu_memcpy", "gpu_memset")
NONE = "(no annotation)"


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value())


def load(path):
    with gzip.open(path, "rb") as f:
        return [e for e in json.loads(f.read(), parse_float=Decimal)["traceEvents"]
                if e.get("ph") == "X"]


def run_json(args):
    p = te.run_tool(["breakdown", "--by", "annotation", "--format", "json"] + args)
    C.check(p.returncode == 0, " ".join(args[:3]) + ": exit 0", p.stderr.decode()[-300:])
    return json.loads(p.stdout.decode())["annotations"] if p.returncode == 0 else []


def close(a, b, rel=1e-9, abs_=1e-3):
    return abs(float(a) - float(b)) <= max(abs_, rel * abs(float(b)))


def check_hta(inputs, window):
    with open(os.path.join(EXPECTED, "nccl_parser_config.json")) as f:
        exp = json.load(f)
    want = {r["name"]: r for r in exp["user_annotation_breakdown"]["gpu_user_annotation"]}
    kern = {(r["user_annotation"] or NONE): r
            for r in exp["kernels_with_user_annotations"]["0"]["by_user_annotation"]}
    for inp, label in inputs:
        got = {r["name"]: r for r in run_json(window + [inp])}
        C.eq(sorted(got), sorted(want), "%s: HTA's annotation names" % label)
        # HTA gives no count: sum / mean is one
        bad = [k for k, w in want.items() if k not in got or
               (got[k]["count"], got[k]["gpu_ns"], got[k]["min_ns"], got[k]["max_ns"]) !=
               (round(Decimal(str(w["sum (us)"])) / Decimal(str(w["mean (us)"]))),
                ns(w["sum (us)"]), ns(w["min (us)"]), ns(w["max (us)"])) or
               not close(got[k]["mean_ns"], Decimal(str(w["mean (us)"])) * 1000) or
               not close(got[k]["std_ns"], float(w["stddev"]) * 1000, rel=1e-6)]
        C.check(not bad, "%s: count, sum, min, max, mean, std per annotation = HTA's" % label,
                bad and (bad[0], got.get(bad[0]), want[bad[0]]))
        C.check(all(r["rank"] == 0 for r in got.values()), "%s: rank 0" % label)
        got = {r["name"]: r for r in run_json(window + ["--kernels", inp])}
        C.eq({k: (r["count"], r["gpu_ns"]) for k, r in got.items()},
             {k: (r["kernel_count"], ns(r["kernel_dur_sum"])) for k, r in kern.items()},
             "%s: --kernels: activities and their time per innermost annotation = HTA's" % label)
        C.eq(sum(r["count"] for r in got.values()), exp["kernels_with_user_annotations"]["0"]
             ["kernel_count"], "%s: --kernels: every activity of HTA's window once" % label)


def expected_whole(ev):
    """per name: the annotations' durations, and the activities' under each
    (the shortest annotation of their pid/tid that overlaps them, then the one
    that starts last)"""
    ann = [e for e in ev if e.get("cat") == "gpu_user_annotation"]
    own = collections.defaultdict(list)
    for a in ann:
        own[a["name"]].append(ns(a["dur"]))
    by_thread = collections.defaultdict(list)
    for a in ann:
        by_thread[(a["pid"], a["tid"])].append((ns(a["ts"]), ns(a["ts"]) + ns(a["dur"]), a["name"]))
    under = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") not in GPU:
            continue
        t, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        best = None
        for a, b, name in by_thread[(e["pid"], e["tid"])]:
            if a < end and t < b and (best is None or (b - a, -a) < (best[1] - best[0], -best[0])):
                best = (a, b, name)
        under[best[2] if best else NONE].append(end - t)
    return own, under


def check_whole(path):
    own, under = expected_whole(load(path))
    for args, want, what in (([], own, "own durations"), (["--kernels"], under, "activities")):
        got = {r["name"]: (r["count"], r["gpu_ns"], r["min_ns"], r["max_ns"])
               for r in run_json(args + [path])}
        C.eq(got, {k: (len(v), sum(v), min(v), max(v)) for k, v in want.items()},
             "whole trace, %s: count, sum, min, max per annotation (independent)" % what)


def ops_of(ev, op_re):
    """(pid, tid) -> the intervals of the slices (not a runtime call nor a GPU
    row) whose whole name matches op_re"""
    ops = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") not in GPU + ("gpu_user_annotation", "cuda_runtime", "cuda_driver",
                                      "cuda_sync") and re.fullmatch(op_re, e.get("name", "")):
            ops[(str(e["pid"]), str(e["tid"]))].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    return ops


def by_key(events, key):
    """key -> the one of events that started last at or before ts, else the first of
    its key (the link rule of docs/SCHEMA.md), as a function of (key, ts)"""
    m = collections.defaultdict(list)
    for e in events:
        m[key(e)].append(e)
    for v in m.values():
        v.sort(key=lambda e: ns(e["ts"]))

    def find(k, ts):
        c = m.get(k)
        if not c:
            return None
        before = [e for e in c if ns(e["ts"]) <= ts]
        return before[-1] if before else c[0]
    return find


def filtered(ev, name=None, under=None, kernels=False):
    """the raw events with what --name / --under leave out taken out: without
    --kernels the annotations (by name; by their user_annotation of the same
    External id, enclosed by an op on its thread), with it the activities
    (by name; by their runtime call's start inside an op on its thread)"""
    ops = ops_of(ev, under) if under else None
    ua = by_key([e for e in ev if e.get("cat") == "user_annotation"],
                lambda e: (e.get("args") or {}).get("External id"))
    rt = by_key([e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")],
                lambda e: (e.get("args") or {}).get("correlation"))

    def inside(e, whole):
        if e is None:
            return False
        a, b = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]) if whole else ns(e["ts"])
        return any(x <= a and b <= y for x, y in ops[(str(e["pid"]), str(e["tid"]))])

    out = []
    for e in ev:
        args = e.get("args") or {}
        counted = e.get("cat") in GPU if kernels else e.get("cat") == "gpu_user_annotation"
        if counted and name and not re.search(name, e["name"]):
            continue
        if counted and under and not (
                inside(rt(args.get("correlation"), ns(e["ts"])), False) if kernels
                else inside(ua(args.get("External id"), ns(e["ts"])), True)):
            continue
        out.append(e)
    return out


def check_filters(path):
    """--name and --under against the raw JSON with what they leave out taken out"""
    ev = load(path)
    cases = ((["--name", "nccl"], dict(name="nccl")),
             (["--under", "ProfilerStep#5"], dict(under="ProfilerStep#5")),
             (["--under", "## (forward|backward) ##"], dict(under="## (forward|backward) ##")),
             (["--kernels", "--name", "nccl|Memcpy"], dict(name="nccl|Memcpy", kernels=True)),
             (["--kernels", "--under", "ProfilerStep#5"], dict(under="ProfilerStep#5",
                                                              kernels=True)),
             (["--kernels", "--under", "aten::conv.*"], dict(under="aten::conv.*", kernels=True)))
    for args, kw in cases:
        own, under = expected_whole(filtered(ev, **kw))
        want = under if kw.get("kernels") else own
        C.check(want, "%s: something passes" % " ".join(args))
        got = {r["name"]: (r["count"], r["gpu_ns"], r["min_ns"], r["max_ns"])
               for r in run_json(args + [path])}
        C.eq(got, {k: (len(v), sum(v), min(v), max(v)) for k, v in want.items()},
             "%s: count, sum, min, max per annotation (independent)" % " ".join(args))
    p = te.run_tool(["breakdown", "--by", "annotation", "--name", "no such name", path])
    C.check(p.returncode == 4 and len(te.stderr_lines(p)) == 1 and b"--name" in p.stderr,
            "--name that matches nothing: exit 4, one line naming the filters", p.stderr)


def check_none():
    """HTA gives null: the traces have no gpu_user_annotation"""
    for name in sorted(os.listdir(EXPECTED)):
        with open(os.path.join(EXPECTED, name)) as f:
            exp = json.load(f)
        if exp["user_annotation_breakdown"]["gpu_user_annotation"] is not None:
            continue
        for rel in sorted(exp["_source"]["trace_files"].values())[:2]:
            p = te.run_tool(["breakdown", "--by", "annotation", os.path.join(TESTDATA, rel)])
            C.eq(p.returncode, 4, "%s: no gpu_user_annotation: exit 4" % rel)
            C.check(len(te.stderr_lines(p)) == 1 and b"gpu_user_annotation" in p.stderr,
                    "%s: ... one line saying so" % rel, p.stderr)


def main():
    if not os.path.exists(NCCL):
        C.skip(NCCL, "missing")
        return C.finish()
    ev = load(NCCL)
    steps = {e["name"]: e["ts"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")}
    C.check(len(steps) >= 2, "nccl_parser_config has 2 or more steps: HTA drops the last")
    window = ["--time-range", ":%s" % max(steps.values())]
    tmp = tempfile.mkdtemp(prefix="tt_annot_")
    try:
        db = os.path.join(tmp, "n.db")
        C.eq(te.run_tool(["ingest", "-q", db, NCCL]).returncode, 0, "ingest")
        C.section("hta", check_hta, [(NCCL, "file"), (db, "database")], window)
        C.section("whole", check_whole, NCCL)
        C.section("filters", check_filters, NCCL)
        C.section("none", check_none)
        d = os.path.join(tmp, "dir")
        os.mkdir(d)
        shutil.copy(NCCL, os.path.join(d, "a.json.gz"))
        shutil.copy(os.path.join(TESTDATA, "hta", "trace_filter", "sampled_rank-1.json.gz"),
                    os.path.join(d, "b.json.gz"))
        rows = run_json([d])
        C.check(rows and all(r["trace_id"] == 1 for r in rows),
                "a directory: the rows of the trace that has annotations", rows[:1])
        C.eq(len(run_json(["--rank", "0", d])), len(rows), "--rank 0 of the directory")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for bad in (["--kernels"], ["--by", "annotation", "--steps", "1"],
                ["--by", "annotation", "--html", "x.html"],
                ["--by", "annotation", "--time-range", "2:1"]):
        p = te.run_tool(["breakdown"] + bad + [NCCL])
        C.eq(p.returncode, 2, "breakdown %s: a usage error" % " ".join(bad))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
