#!/usr/bin/env python3
"""tracetool breakdown's CPU-op table against an independent computation.

From the trace JSON alone (timestamps parsed as Decimal, exact to the ns):
each kernel / memcpy / memset gets its runtime call (same correlation: the
call that started last at or before the activity, else the first one), the
call its CPU op (the innermost `cpu_op` / `Operator` on the call's pid and
tid whose [ts, ts + dur] holds [call ts, call ts + dur]: the latest start,
then the shortest, then the last in the file), and the op's name gets the
activity's duration, per rank; activities without a call or an op count
under "(no op)". Per op name: count, total, and min / median / max over the
ranks (0 for a rank without it) with the first rank of the maximum. That
rule is also checked activity by activity against gpu_ops.op_id in the
database, then the selection (--steps, --by step / stream, --rank) against
the kernel families of the same run, and the formats.
"""

import bisect
import csv
import io
import json
import os
import re
import statistics
import sys
import tempfile
from collections import Counter
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("breakdown_ops")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.environ.get("TT_SHARED", os.path.join(ROOT, "..", "shared"))
KINDS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
OP_CATS = ("cpu_op", "Operator")
NO_OP = "(no op)"


def tool(*args):
    p = te.run_tool(list(args))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def ns(v):
    return int((Decimal(v) * 1000).to_integral_value())


def innermost(ops, keys, ts, end):
    """ops: (ts, -dur, index, end, name) sorted; the innermost op holding
    [ts, end], or None. Scanning back from the last op starting at or
    before ts, the first that holds it starts latest (then is shortest,
    then last in the file)."""
    i = bisect.bisect_right(keys, (ts, float("inf")))
    while i > 0:
        i -= 1
        o = ops[i]
        if o[3] >= end:
            return o
    return None


def load(path):
    """per GPU activity: (kind, ts, dur, correlation, step start, op) with
    op = (name, ts, end) or None"""
    raw = te.read_bytes(path).decode("utf-8", "replace")
    doc = json.loads(raw, strict=False, parse_float=Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    ops, calls, acts, steps = {}, {}, [], []
    for idx, e in enumerate(evs):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        a = e.get("args") or {}
        cat = e.get("cat")
        if cat in OP_CATS:
            ts, dur = ns(e["ts"]), ns(e.get("dur", 0))
            ops.setdefault((e.get("pid"), e.get("tid")), []).append(
                (ts, -dur, idx, ts + dur, e.get("name", "")))
        elif cat in RUNTIME_CATS and "correlation" in a:
            calls.setdefault(a["correlation"], []).append(
                (ns(e["ts"]), max(ns(e.get("dur", 0)), 0), e.get("pid"), e.get("tid")))
        elif cat in KINDS and "dur" in e:
            acts.append((KINDS[cat], ns(e["ts"]), max(ns(e["dur"]), 0), a.get("correlation")))
        elif re.match(r"ProfilerStep#\d+$", e.get("name", "")) and "dur" in e:
            steps.append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"][13:])))
    keys = {}
    for th, v in ops.items():
        v.sort()
        keys[th] = [(o[0], o[1]) for o in v]
    steps.sort()
    disjoint = []
    for s in steps:
        if not disjoint or s[0] >= disjoint[-1][1]:
            disjoint.append(s)
    out = []
    for kind, ts, dur, corr in acts:
        c = sorted(calls.get(corr, []), key=lambda t: t[0])
        op, launch = None, ts
        if c:
            before = [t for t in c if t[0] <= ts]
            call = before[-1] if before else c[0]
            launch = call[0]
            th = (call[2], call[3])
            if th in ops:
                o = innermost(ops[th], keys[th], call[0], call[0] + call[1])
                if o:
                    op = (o[4], o[0], o[3])
        step = None
        for s in disjoint:
            if s[0] <= launch < s[1]:
                step = s[2]
        out.append((kind, ts, dur, corr, step, op))
    return out


def expect_ops(per_rank, ranks):
    """{op: [count, total, min, median, max, first rank of the max]}"""
    names = set()
    for acts in per_rank.values():
        names.update(x[5][0] if x[5] else NO_OP for x in acts)
    want = {}
    for name in names:
        count, per = 0, []
        for r in ranks:
            tot = 0
            for x in per_rank[r]:
                if (x[5][0] if x[5] else NO_OP) == name:
                    count += 1
                    tot += x[2]
            per.append(tot)
        mx = max(per)
        want[name] = [count, sum(per), min(per), float(statistics.median(per)), mx,
                      ranks[per.index(mx)]]
    return want


def got_ops(doc):
    return {o["op"]: [o["count"], o["total_ns"], o["min_ns"], o["median_ns"], o["max_ns"],
                      o["max_rank"]] for o in doc["ops"]}


def check_order(doc, label):
    keys = [(-o["total_ns"], o["op"]) for o in doc["ops"]]
    C.check(keys == sorted(keys), "%s: ops by total, then name" % label)


def check_store_rule(db, per_rank):
    """the Python rule picks the op the store linked (gpu_ops.op_id)"""
    import sqlite3
    con = sqlite3.connect(db)
    got = Counter()
    for row in con.execute(
            "SELECT t.rank, g.kind, g.ts, g.dur, g.correlation, n.s, o.ts, o.ts + o.dur"
            " FROM gpu_ops AS g JOIN traces AS t ON t.id = g.trace_id"
            " LEFT JOIN slices AS o ON o.id = g.op_id LEFT JOIN strings AS n ON n.id = o.name"
            " WHERE g.kind IN ('kernel', 'memcpy', 'memset') AND g.dur IS NOT NULL"):
        got[(row[0], row[1], row[2], row[3], row[4],
             (row[5], row[6], row[7]) if row[5] is not None else None)] += 1
    con.close()
    want = Counter()
    for r, acts in per_rank.items():
        for kind, ts, dur, corr, _, op in acts:
            want[(r, kind, ts, dur, corr, op)] += 1
    diff = (want - got) + (got - want)
    C.check(not diff and sum(want.values()) > 0,
            "dlrm: the Python rule gives the store's op_id for all %d activities"
            % sum(want.values()), sorted(diff.items(), key=str)[:5])
    linked = sum(n for k, n in want.items() if k[5] is not None)
    C.check(linked > sum(want.values()) // 2, "dlrm: most activities have an op", linked)


def check_dlrm():
    d = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
    if not os.path.isdir(d):
        C.skip("dlrm_8rank", "shared traces missing")
        return
    per_rank = {}
    for f in te.trace_files(d):
        per_rank[int(re.search(r"worker(\d+)", os.path.basename(f)).group(1))] = load(f)
    ranks = sorted(per_rank)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "d.db")
        rc, _, err = tool("ingest", "-q", db, d)
        if not C.eq(rc, 0, "dlrm: ingest (%s)" % err.strip()):
            return
        check_store_rule(db, per_rank)
        want = expect_ops(per_rank, ranks)
        docs = []
        for src in (d, db):
            rc, out, err = tool("breakdown", "--format", "json", src)
            if not C.eq(rc, 0, "dlrm %s: exit 0 (%s)" % (os.path.basename(src), err.strip())):
                return
            docs.append(json.loads(out))
        doc = docs[1]
        C.eq(docs[0]["ops"], doc["ops"], "dlrm: directory == database")
        C.eq([r["rank"] for r in doc["ranks"]], ranks, "dlrm: one rank row per rank")
        got = got_ops(doc)
        C.eq(sorted(got), sorted(want), "dlrm: op names")
        for name in sorted(want):
            C.eq(got.get(name), want[name], "dlrm op %s: count total min median max rank"
                 % name[:60])
        check_order(doc, "dlrm")
        for o in doc["ops"]:
            r = next(x for x in doc["ranks"] if x["rank"] == o["max_rank"])
            C.check(o["max_trace_id"] == r["trace_id"] and o["max_at"] == "rank %d" % r["rank"],
                    "dlrm op %s: max_at names the rank" % o["op"][:60], o)
        C.check(len(want) > 10 and NO_OP in want, "dlrm: many ops and a (no op) row", len(want))
        check_selection(db, per_rank, ranks)
        check_formats(db, doc)


def fam_total(doc):
    return sum(f["total_ns"] for f in doc["families"])


def check_selection(db, per_rank, ranks):
    # --rank 3: one unit, min = median = max
    rc, out, _ = tool("breakdown", "--format", "json", "--rank", "3", db)
    doc = json.loads(out)
    want = expect_ops({3: per_rank[3]}, [3])
    C.eq(got_ops(doc), want, "dlrm --rank 3: ops")
    # --steps: the activities launched in the first step of each rank
    steps = sorted({x[4] for v in per_rank.values() for x in v if x[4] is not None})
    if steps:
        s = steps[0]
        rc, out, err = tool("breakdown", "--format", "json", "--steps", str(s), db)
        if C.eq(rc, 0, "dlrm --steps %d: exit 0 (%s)" % (s, err.strip())):
            doc = json.loads(out)
            sel = {r: [x for x in per_rank[r] if x[4] == s] for r in ranks}
            have = [r for r in ranks if sel[r]]
            C.eq(got_ops(doc), expect_ops({r: sel[r] for r in have}, have),
                 "dlrm --steps %d: ops" % s)
    # --by step / stream: the same activities; spread over those rows
    for by, key in (("step", "steps"), ("stream", "streams")):
        rc, out, _ = tool("breakdown", "--format", "json", "--by", by, db)
        doc = json.loads(out)
        units = len(doc[key])
        C.eq(sum(o["total_ns"] for o in doc["ops"]), fam_total(doc),
             "--by %s: ops and families cover the same activities" % by)
        C.check(doc["ops"] and all(o["min_ns"] <= o["median_ns"] <= o["max_ns"] <= o["total_ns"]
                                   for o in doc["ops"]), "--by %s: min <= median <= max <= total" % by)
        bad = [o for o in doc["ops"] if o["max_ns"] and
               not o["max_at"].startswith("rank %d %s " % (o["max_rank"], by))]
        C.check(units > 0 and not bad, "--by %s: max_at names a %s row" % (by, by), bad[:2])
        # each op's values over the step / stream rows, recomputed (the
        # stream of an activity from the database, its step from the trace)
        stream_of = stream_map(db)

        def unit(rk, x):
            return x[4] if by == "step" else stream_of.get((rk, x[1], x[3], x[0]))
        rows = [(r["rank"], r[by]) for r in doc[key]]
        want = {}
        for name in (o["op"] for o in doc["ops"]):
            per = [sum(x[2] for x in per_rank[rk]
                       if (x[5][0] if x[5] else NO_OP) == name and unit(rk, x) == u)
                   for rk, u in rows]
            want[name] = [min(per), float(statistics.median(per)), max(per)]
        C.eq({o["op"]: [o["min_ns"], o["median_ns"], o["max_ns"]] for o in doc["ops"]},
             want, "--by %s: min median max over the %s rows" % (by, by))


def stream_map(db):
    """(rank, ts, correlation, kind) -> stream, from the database"""
    import sqlite3
    con = sqlite3.connect(db)
    m = {}
    for rk, ts, corr, kind, st in con.execute(
            "SELECT t.rank, g.ts, g.correlation, g.kind, g.stream FROM gpu_ops AS g"
            " JOIN traces AS t ON t.id = g.trace_id"):
        m[(rk, ts, corr, kind)] = st
    con.close()
    return m


def check_formats(db, doc):
    rc, out, _ = tool("breakdown", db)
    head = "CPU ops: GPU time they launched per rank (min / median / max over %d ranks)" \
        % len(doc["ranks"])
    C.check(rc == 0 and head in out, "table: the ops heading", out[-300:])
    if rc == 0:
        C.check(out.index("Kernel families") < out.index(head) < out.index("Launches per family"),
                "table: ops after the kernel families, before the launches")
        sec = out[out.index(head):].split("\n\n")[1].splitlines()
        C.check("CPU op" in sec[0] and "Total (ms)" in sec[0] and "Max at" in sec[0],
                "table: op columns", sec[0])
        C.eq(len(sec) - 2, len(doc["ops"]), "table: one line per op")
    rc, out, _ = tool("breakdown", "--format", "markdown", db)
    C.check(rc == 0 and "### " + head in out and "| CPU op |" in out.replace("  ", " "),
            "markdown: the ops table", out[:200])
    C.eq(list(doc)[list(doc).index("families") + 1], "ops", "json: ops after families")
    C.eq(list(doc["ops"][0]), ["op", "count", "total_ns", "min_ns", "median_ns", "max_ns",
                               "max_at", "max_trace_id", "max_rank"], "json: op keys")
    rc, out, _ = tool("breakdown", "--format", "json", "--row-limit", "3", db)
    C.check(rc == 0 and json.loads(out)["ops"] == doc["ops"][:3], "--row-limit 3 cuts ops")
    rc, out, _ = tool("breakdown", "--format", "csv", db)
    rows = list(csv.DictReader(io.StringIO(out)))
    C.check(rc == 0 and len(rows) == len(doc["ranks"]) and "op" not in rows[0],
            "csv: still the rank table only")


def check_readme():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    sec = text.split("### `tracetool breakdown INPUT|DB`", 1)[1].split("\n### ", 1)[0]
    C.check("**CPU ops**" in sec and "`ops`" in sec and "(no op)" in sec,
            "README: the ops table is described")


def main():
    if not os.path.exists(te.tracetool_path()):
        C.skip("tracetool", "not built")
        return C.finish()
    C.section("dlrm_8rank", check_dlrm)
    C.section("readme", check_readme)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
