#!/usr/bin/env python3
"""`tracetool bandwidth` (issue 25: HTA's memory bandwidth) against HTA v0.6.1.

Expected values: tests/fixtures/hta/expected/memory_bw/*.json, HTA's
get_memory_bw_summary and get_memory_bw_time_series on the six traces its
README lists (counts exact, GB/s within 1%). HTA's window (it drops the last
ProfilerStep and what follows when a trace has two or more) is given as
--time-range :T, T the last step's start read here from the raw JSON. A
hand-made trace checks what those cannot: ends before starts at equal times,
a 0 duration as 1 us, copies without a bandwidth, a copy kept by its
launch's start under --time-range, the series, a database. --name and
--under (docs/FILTERS.md) against the sums computed here from the raw JSON of
nccl_parser_config, the copies kept by test_filters.py's reading of the
filters (a copy by its name and by its runtime call's thread and start).
Python standard library only.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counters_common as cc  # noqa: E402
from counters_common import te, window_args  # noqa: E402

C = te.Checker("bandwidth")
# HTA's kind (get_memory_kernel_type) -> tracetool's
KIND = {"Memset": "memset", "Memcpy Unknown": "memcpy unknown"}


def kind_of(hta):
    return KIND.get(hta, "memcpy " + hta[7:] if hta.startswith("Memcpy ") else hta)


def run_json(args):
    return cc.run_json(C, args)


def close(got, want):
    return cc.close(got, want, 0.01)


def check_trace(name):
    exp = cc.fixture("memory_bw", name + ".json")
    for rank, rel in sorted(exp["_source"]["trace_files"].items()):
        path = cc.shared_trace(rel)
        label = "%s rank %s" % (name, rank)
        win = window_args(path)
        got = run_json(["bandwidth", "--format", "json"] + win + [path])
        if got is None:
            continue
        rows = {r["kind"]: r for r in got["rows"]}
        want = {kind_of(r["name"]): r for r in exp["summary"] if str(r["rank"]) == rank}
        C.eq(sorted(rows), sorted(want), label + ": the kinds")
        for k, w in sorted(want.items()):
            g = rows.get(k)
            if g is None:
                continue
            C.check(g["rank"] == int(rank), "%s %s: rank" % (label, k))
            C.eq(g["count"], int(w["count"]), "%s %s: count (HTA)" % (label, k))
            for a, b in (("mean_gbps", "mean"), ("min_gbps", "min"), ("max_gbps", "max")):
                C.check(close(g[a], w[b]), "%s %s: %s within 1%% (HTA)" % (label, k, a),
                        "%r vs %r" % (g[a], w[b]))
        check_series(exp["time_series"].get(rank), path, win, label)


def check_series(ts, path, win, label):
    """each kind's series, its times relative to its first change (HTA shifts
    ts; within 2 ns: the trace's float us), where HTA has every row"""
    if not ts or "rows" not in ts or len(ts["rows"]) != ts["row_count"]:
        return
    got = run_json(["bandwidth", "--series", "--format", "json"] + win + [path])
    if got is None:
        return
    col = {c: i for i, c in enumerate(ts["columns"])}
    want, mine = {}, {}
    for r in ts["rows"]:  # float us (nccl_parser_config's ts have sub-ns fractions)
        want.setdefault(kind_of(r[col["name"]]), []).append(
            (r[col["ts"]] * 1000.0, r[col["memory_bw_gbps"]]))
    for g in got["series"]:
        mine.setdefault(g["kind"], []).append((g["ts_ns"], g["gbps"]))
    C.eq(sorted(mine), sorted(want), label + ": the series' kinds")
    for k in sorted(want):
        w, m = want[k], mine.get(k, [])
        if not C.eq(len(m), len(w), "%s %s: series rows (HTA)" % (label, k)):
            continue
        ok = all(abs((t - m[0][0]) - (u - w[0][0])) <= 2 and abs(v - x) <= 1e-9 + 0.01 * abs(x)
                 for (t, v), (u, x) in zip(m, w))
        C.check(ok, "%s %s: series, relative ts and GB/s (HTA)" % (label, k))


def hand_trace(path):
    """copies whose answers are worked out by hand below (ts, dur in us)"""
    ev = []

    def copy(ts, dur, name, bw, corr=None, stream=7, cat="gpu_memcpy"):
        args = {"device": 0, "stream": stream}
        if bw is not None:
            args["memory bandwidth (GB/s)"] = bw
        if corr is not None:
            args["correlation"] = corr
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts,
                   "dur": dur, "args": args})
    htod = "Memcpy HtoD (Pageable -> Device)"
    copy(0, 10, htod, 2.0)
    copy(5, 10, htod, 3.0, stream=8)  # another stream: summed all the same
    copy(10, 10, htod, 4.0)           # starts as the first ends: ends first
    copy(30, 0, "Memset (Device)", 1.0, cat="gpu_memset")  # 0 us: 1 us
    copy(40, 5, "Memcpy DtoH (Device -> Pinned)", None)     # no bandwidth: left out
    copy(60, 5, "Memcpy DtoD (Device -> Device)", 8.0, corr=1)
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
               "ts": 44, "dur": 1, "args": {"correlation": 1}})
    copy(70, 5, "void gemm(float*)", 9.0, cat="kernel")     # not a copy
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def check_hand(tmp):
    path = os.path.join(tmp, "hand.json")
    hand_trace(path)
    got = run_json(["bandwidth", "--format", "json", path])
    if got is None:
        return
    rows = {r["kind"]: (r["rank"], r["count"], r["mean_gbps"], r["min_gbps"], r["max_gbps"])
            for r in got["rows"]}
    # HtoD: 2 (0), 5 (5), 3 (10, the end first), 7 (10), 4 (15), 0 (20)
    C.eq(rows, {"memcpy HtoD": (None, 5, 4.2, 2.0, 7.0), "memset": (None, 1, 1.0, 1.0, 1.0),
                "memcpy DtoD": (None, 1, 8.0, 8.0, 8.0)}, "hand: the summary")
    p = te.run_tool(["bandwidth", "--series", "--format", "csv", path])
    lines = p.stdout.decode().splitlines()
    C.eq(lines[0], "trace_id,rank,kind,ts_ns,gbps", "hand --series: csv header")
    C.eq([(l.split(",")[3], float(l.split(",")[4])) for l in lines if "HtoD" in l],
         [("0", 2.0), ("5000", 5.0), ("10000", 3.0), ("10000", 7.0), ("15000", 4.0),
          ("20000", 0.0)], "hand --series: HtoD, ends first at 10 us")
    C.eq([l.split(",")[3] for l in lines if "memset" in l], ["30000", "31000"],
         "hand --series: a 0 us memset lasts 1 us")
    got = run_json(["bandwidth", "--time-range", ":45", "--format", "json", path])
    if got is not None:
        C.eq(sorted(r["kind"] for r in got["rows"]), ["memcpy DtoD", "memcpy HtoD", "memset"],
             "hand --time-range :45: the DtoD at 60 us goes with its launch at 44 us")
    got = run_json(["bandwidth", "--time-range", "45:", "--format", "json", path])
    if got is not None:
        C.eq([r["kind"] for r in got["rows"]], [], "hand --time-range 45: nothing launched after")
    db = os.path.join(tmp, "hand.db")
    C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "hand: ingest")
    for args in (["--format", "json"], ["--series", "--format", "csv"], ["--format", "markdown"]):
        a = te.run_tool(["bandwidth"] + args + [path]).stdout
        b = te.run_tool(["bandwidth"] + args + [db]).stdout
        C.check(a == b and a, "hand: the database gives the file's answer (%s)" % " ".join(args))


def bandwidth_expect(t, **f):
    """kind -> (count, mean, min, max) of the sums > 0 over the copies that
    pass the filters f: +bw at a start, -bw at an end (a 0 duration: 1 us),
    ends first at equal times, then the copies' order"""
    ch = {}
    for seq, g in enumerate(t.gpu):
        k, bw = cc.copy_kind(g["name"]), g["args"].get("memory bandwidth (GB/s)")
        if k is None or bw is None or g["args"].get("stream", -1) == -1 or \
                not t.passes(g, gpu=True, **f):
            continue
        bw = float(bw)
        ch.setdefault(k, []).extend([(g["ts"], 1, seq, bw), (g["ts"] + (g["dur"] or 1000), 0, seq, -bw)])
    out = {}
    for k, v in ch.items():
        v.sort(key=lambda x: x[:3])
        s, n, sums = 0.0, 0, []
        for ts, start, seq, bw in v:
            s += bw
            n += 1 if start else -1
            if n == 0:
                s = 0.0
            if s > 0:
                sums.append(s)
        if sums:
            out[k] = (len(sums), sum(sums) / len(sums), min(sums), max(sums))
    return out


def check_filters(tmp):
    path, t = cc.nccl_trace()
    cases = [(["--name", "Memset"], {"name": "Memset"}),
             (["--name", "DtoD"], {"name": "DtoD"}),
             (["--under", "ProfilerStep#5"], {"under": t.ops("ProfilerStep#5")}),
             (["--under", "## forward ##", "--name", "Memcpy"],
              {"under": t.ops("## forward ##"), "name": "Memcpy"})]
    db = os.path.join(tmp, "nccl.db")
    C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "nccl: ingest")
    cc.check_filter_cases(
        C, "bandwidth", path, db, cases, lambda **f: bandwidth_expect(t, **f),
        lambda doc: {r["kind"]: r for r in doc["rows"]},
        lambda g, w: g["count"] == w[0] and all(
            cc.close(g[a], b, 1e-6, 1e-6)
            for a, b in zip(("mean_gbps", "min_gbps", "max_gbps"), w[1:])))


def main():
    if not cc.have_shared():
        print("SKIP: no shared test data")
        return te.SKIP_EXIT
    with tempfile.TemporaryDirectory(prefix="tt_bw_") as tmp:
        C.section("hand-made trace", check_hand, tmp)
        C.section("--name, --under", check_filters, tmp)
    for name in cc.TRACES:
        C.section(name, check_trace, name)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
