#!/usr/bin/env python3
"""`kernels --sequences N [--under-op NAME]` and the launch delays of
`kernels --by op` (docs/HTA_kseq.md).

- `--sequences 2 --under-op OP` against HTA v0.6.1's own output
  (tests/fixtures/hta/expected/frequent_cuda_kernel_sequences/*.json, made by
  HTA, never by tracetool): every pattern with its count, GPU and CPU time, in
  HTA's order, on rank 0 of each trace set, with HTA's window (the last
  ProfilerStep left out when there are two or more) given as --time-range :T,
  T that step's start read from the raw JSON; from the file and a database.
- `--sequences N` on streams and `--by op`'s launch delays against an
  independent computation from the raw JSON (Python standard library, times
  exact with Decimal): windows of N consecutive activities per (device,
  stream), the runtime call of each by correlation, the op by the innermost
  cpu_op around the call on its thread.
"""

import collections
import gzip
import json
import os
import re
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("kernels_seq")
EXPECTED = os.path.join(HERE, "..", "fixtures", "hta", "expected", "frequent_cuda_kernel_sequences")
TESTDATA = os.path.join(te.shared_dir(), "testdata")
GPU = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME = ("cuda_runtime", "cuda_driver")
NO_OP = "[no CPU op]"


def ns(v):
    return int(Decimal(str(v)) * 1000)


def load(path):
    with gzip.open(path, "rb") as f:
        return [e for e in json.loads(f.read(), parse_float=Decimal)["traceEvents"]
                if e.get("ph") == "X"]


def hta_window(ev):
    """HTA's window: up to the start of the last ProfilerStep when there are
    two or more (trace.py:801-895), as a --time-range argument (us)"""
    steps = {e["name"]: e["ts"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")}
    return [] if len(steps) < 2 else ["--time-range", ":%s" % max(steps.values())]


def run_json(args):
    p = te.run_tool(args + ["--format", "json"])
    C.check(p.returncode == 0, " ".join(args[:5]) + ": exit 0", p.stderr.decode()[-300:])
    return json.loads(p.stdout.decode()) if p.returncode == 0 else {"summaries": []}


def check_hta(name, inputs):
    with open(os.path.join(EXPECTED, name + ".json")) as f:
        exp = json.load(f)
    args = exp["_source"]["args"]
    path = os.path.join(TESTDATA, exp["_source"]["trace_files"][str(args["rank"])])
    want = [(p["pattern"], p["count"], ns(p["GPU kernel duration (us)"]),
             ns(p["CPU op duration (us)"])) for p in exp["patterns"]]
    window = hta_window(load(path))
    for inp, label in inputs(path):
        doc = run_json(["kernels", "--sequences", str(args["min_pattern_len"]), "--under-op",
                        args["operator_name"]] + window + inp)
        sums = doc["summaries"]
        if not C.eq(len(sums), 1, "%s %s: one summary" % (name, label)):
            continue
        got = [(r["pattern"], r["count"], r["gpu_ns"], r["cpu_ns"]) for r in sums[0]["rows"]]
        C.eq(got, want, "%s %s: HTA's patterns, counts, GPU and CPU time, in HTA's order"
             % (name, label))
        C.check(all(r["ops"] == args["operator_name"] or args["operator_name"] in r["ops"]
                    for r in sums[0]["rows"]), "%s %s: ops name the root" % (name, label))
        C.eq(sums[0]["under_op"], args["operator_name"], "%s %s: under_op" % (name, label))


def innermost_ops(ev):
    """correlation -> (runtime call, name of the innermost cpu_op holding it: the
    one that starts last, then ends first, then comes last in the file)"""
    ops = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "cpu_op":
            ops[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    out = {}
    for e in ev:
        if e.get("cat") not in RUNTIME:
            continue
        c = (e.get("args") or {}).get("correlation")
        t, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        best = None
        for a, b, n in ops[(e["pid"], e["tid"])]:
            if a <= t and end <= b and (best is None or (a, -b) >= (best[0], -best[1])):
                best = (a, b, n)
        out[c] = (e, best[2] if best else None)
    return out


def expected_windows(ev, n):
    calls = innermost_ops(ev)
    streams = collections.defaultdict(list)
    for i, e in enumerate(ev):
        if e.get("cat") not in GPU:
            continue
        a = e.get("args") or {}
        rt, op = calls.get(a.get("correlation"), (None, None))
        streams[(a.get("device", e["pid"]), a.get("stream", e["tid"]))].append(
            (ns(e["ts"]), i, e["name"], ns(e["dur"]), ns(rt["dur"]) if rt else 0, op or NO_OP))
    seqs = {}
    for acts in streams.values():
        acts.sort()
        for k in range(len(acts) - n + 1):
            w = acts[k:k + n]
            key = "|".join(x[2] for x in w)
            first = (w[0][0], w[0][1])
            s = seqs.setdefault(key, [0, 0, 0, first, "|".join(x[5] for x in w)])
            s[0] += 1
            s[1] += sum(x[3] for x in w)
            s[2] += sum(x[4] for x in w)
            if first < s[3]:
                s[3], s[4] = first, "|".join(x[5] for x in w)
    return {k: (v[0], v[1], v[2], v[4]) for k, v in seqs.items()}


def check_windows(path, label, n, ev=None, extra=()):
    want = expected_windows(load(path) if ev is None else ev, n)
    doc = run_json(["kernels", "--sequences", str(n), path] + list(extra))
    rows = doc["summaries"][0]["rows"] if doc["summaries"] else []
    got = {r["pattern"]: (r["count"], r["gpu_ns"], r["cpu_ns"], r["ops"]) for r in rows}
    C.eq(len(got), len(want), "%s: --sequences %d: as many sequences" % (label, n))
    bad = [k for k in want if got.get(k) != want[k]]
    C.check(not bad, "%s: --sequences %d: count, GPU, CPU time and ops of every sequence"
            % (label, n), bad and (bad[0][:80], got.get(bad[0]), want[bad[0]]))
    counts = [r["count"] for r in rows]
    C.check(counts == sorted(counts, reverse=True), "%s: most frequent first" % label)
    C.eq(doc["summaries"][0]["sequences"] if doc["summaries"] else -1, len(want),
         "%s: the number of distinct sequences" % label)


def under_calls(ev, op_re):
    """the correlations of the runtime calls that start inside an op (any
    slice: not a runtime call nor a GPU row) whose whole name matches op_re,
    on the call's thread"""
    ops = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") not in GPU + RUNTIME + ("gpu_user_annotation", "cuda_sync") and \
                re.fullmatch(op_re, e.get("name", "")):
            ops[(str(e["pid"]), str(e["tid"]))].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    out = set()
    for c, (rt, _) in innermost_ops(ev).items():
        t = ns(rt["ts"])
        if any(a <= t <= b for a, b in ops[(str(rt["pid"]), str(rt["tid"]))]):
            out.add(c)
    return out


def check_filters(path, label):
    """--name and --under on streams: the windows over the activities that
    pass alone (the others taken out of the raw events)"""
    ev = load(path)
    names = collections.Counter(e["name"] for e in ev if e.get("cat") in GPU)
    pat = re.escape(names.most_common(1)[0][0][:30]) + "|[Mm]em"
    kept = [e for e in ev if e.get("cat") not in GPU or re.search(pat, e["name"])]
    C.check(0 < len(kept) < len(ev), "%s: --name keeps some activities" % label)
    for n in (1, 2):
        C.section(label + " --name", check_windows, path, label + " --name", n, kept,
                  ["--name", pat])
    steps = sorted({e["name"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")})
    for op in (steps[0], "aten::.*"):
        calls = under_calls(ev, op)
        kept = [e for e in ev if e.get("cat") not in GPU or
                (e.get("args") or {}).get("correlation") in calls]
        C.check(0 < len(kept) < len(ev), "%s: --under %s keeps some activities" % (label, op))
        C.section(label + " --under", check_windows, path, "%s --under %s" % (label, op), 2,
                  kept, ["--under", op])


def expected_delays(ev):
    calls = innermost_ops(ev)
    d = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") != "kernel":
            continue
        rt, op = calls.get((e.get("args") or {}).get("correlation"), (None, None))
        if rt:
            d[op or NO_OP].append(ns(e["ts"]) - ns(rt["ts"]))
    return {k: (len(v), min(v), max(v), Decimal(sum(v)) / len(v)) for k, v in d.items()}


def check_delays(path, label):
    want = expected_delays(load(path))
    doc = run_json(["kernels", "--by", "op", "--only", "kernels", path])
    rows = doc["summaries"][0]["rows"] if doc["summaries"] else []
    got = {r["name"]: r for r in rows if r["launches"]}
    C.eq(sorted(got), sorted(want), "%s: --by op: the ops with launches" % label)
    bad = [k for k, w in want.items() if k not in got or
           (got[k]["launches"], got[k]["delay_min_ns"], got[k]["delay_max_ns"]) != w[:3] or
           abs(Decimal(str(got[k]["delay_avg_ns"])) - w[3]) > Decimal("0.001")]
    C.check(not bad, "%s: --by op: launches and min/max/mean launch delay per op" % label,
            bad and (bad[0], got.get(bad[0]), want[bad[0]]))


def main():
    files = [os.path.join(TESTDATA, "hta", "trace_filter", "sampled_rank-0.json.gz"),
             os.path.join(TESTDATA, "param", "dlrm_8rank", "kineto",
                          "worker0_step_12.1694128201545.pt.trace.json.gz")]
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        C.skip(missing[0], "missing")
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        def inputs(path):
            db = os.path.join(tmp, "t.db")
            if os.path.exists(db):
                os.unlink(db)
            C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "ingest")
            return [([path], "file"), ([db], "database")]
        C.section("trace_filter", check_hta, "trace_filter", inputs)
        C.section("dlrm_8rank", check_hta, "dlrm_8rank", inputs)
    for path, label in zip(files, ("trace_filter rank 0", "dlrm rank 0")):
        for n in (1, 3):
            C.section(label, check_windows, path, label, n)
        C.section(label, check_delays, path, label)
        C.section(label, check_filters, path, label)
    p = te.run_tool(["kernels", "--sequences", "2", "--under-op", "no such op", files[1]])
    C.eq(p.returncode, 4, "--under-op that matches nothing: exit 4")
    C.check(b"--under-op" in p.stderr and len(te.stderr_lines(p)) == 1,
            "... with one line naming --under-op", p.stderr)
    for bad in (["--sequences", "0"], ["--under-op", "x"], ["--sequences", "2", "--by", "op"],
                ["--sequences", "2000"], ["--sequences", "2", "--steps", "1"],
                ["--sequences", "2", "--time-range", "5:1"]):
        p = te.run_tool(["kernels"] + bad + [files[1]])
        C.eq(p.returncode, 2, "kernels %s: a usage error" % " ".join(bad))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
