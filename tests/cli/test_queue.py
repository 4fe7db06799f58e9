#!/usr/bin/env python3
"""`tracetool queue` (issue 25: HTA's queue length) against HTA v0.6.1 itself.

Expected values: tests/fixtures/hta/expected/queue_length/*.json (HTA's
get_queue_length_summary on the six traces its README lists) and, where HTA
is wrong, the independent values of expected/defects/: the mean of stream 7
of dlrm_8rank (defect e: HTA sorts tied launches and kernel starts in no set
order; independent_stable_sort_summary puts launches first, as tracetool
does) and the time blocked on a full queue of every stream (defect d: HTA
keeps one stream per rank; independent_pandas_every_stream). HTA's window
(it drops the last ProfilerStep and what follows when a trace has two or
more) is given to tracetool as --time-range :T, T the last step's start
read here from the raw JSON. A hand-made trace checks what the HTA traces
cannot: launches before kernel starts at equal times, blocked_ns, the
launches and kernels that do not count, --time-range, a trace without a
rank. --name and --under (docs/FILTERS.md) against the queues computed here
from the raw JSON of nccl_parser_config, the launches and kernels kept by
test_filters.py's reading of the filters (a kernel by its name and by its
runtime call's thread and start). Python standard library only.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counters_common as cc  # noqa: E402
from counters_common import te, ns, window_args, close  # noqa: E402

C = te.Checker("queue")


def run_json(args):
    return cc.run_json(C, args)


def by_stream(rows, label):
    out = {}
    for r in rows:
        C.check(r["stream"] not in out, "%s: stream %s once" % (label, r["stream"]))
        out[r["stream"]] = r
    return out


def check_trace(name):
    exp = cc.fixture("queue_length", name + ".json")
    defects = cc.fixture("defects", "e_unstable_sort_ties.json")
    stable = {(r["rank"], r["stream"]): r
              for r in defects.get(name, {}).get("independent_stable_sort_summary", [])}
    for rank, rel in sorted(exp["_source"]["trace_files"].items()):
        path = cc.shared_trace(rel)
        label = "%s rank %s" % (name, rank)
        got = run_json(["queue", "--format", "json"] + window_args(path) + [path])
        if got is None:
            continue
        rows = by_stream(got["streams"], label)
        want = [r for r in exp["summary"] if str(r["rank"]) == rank]
        C.eq(sorted(rows), sorted(r["stream"] for r in want), label + ": the streams")
        for w in want:
            g = rows.get(w["stream"])
            if g is None:
                continue
            lab = "%s stream %d" % (label, w["stream"])
            C.check(g["rank"] == int(rank), lab + ": rank")
            C.eq((g["count"], g["min"], g["max"]), (int(w["count"]), int(w["min"]), int(w["max"])),
                 lab + ": count, min, max (HTA)")
            s = stable.get((int(rank), w["stream"]))
            if s and s["mean"] != w["mean"]:  # defect e: a tied launch and kernel start
                C.check(close(g["mean"], s["mean"], 1e-6, 1e-6),
                        lab + ": mean, launches first at ties (independent, defect e)",
                        "%r vs %r (HTA %r)" % (g["mean"], s["mean"], w["mean"]))
            else:
                C.check(close(g["mean"], w["mean"], 0.01, 0.01), lab + ": mean (HTA)",
                        "%r vs %r" % (g["mean"], w["mean"]))
            C.eq(g["blocked_ns"], 0, lab + ": never 1024 queued")


def check_blocked(name):
    """every stream's time at >= 2 and >= 4 queued (defect d's independent values)"""
    d = cc.fixture("defects", "d_blocked_last_stream_only.json")
    files = d["_source"]["trace_files"] if name == "dlrm_8rank" else \
        cc.fixture("queue_length", name + ".json")["_source"]["trace_files"]
    for th in ("2", "4"):
        want = {(r["rank"], r["stream"]): r["duration_at_max_queue_length"]
                for r in d[name][th]["independent_pandas_every_stream"]}
        for rank, rel in sorted(files.items()):
            path = cc.shared_trace(rel)
            got = run_json(["queue", "--max-queue", th, "--format", "json"] +
                           window_args(path) + [path])
            if got is None:
                continue
            for g in got["streams"]:
                w = want.get((int(rank), g["stream"]), 0)
                C.check(close(g["blocked_ns"], ns(w), 0.01, 2000),
                        "%s rank %s stream %d: blocked at >= %s (independent, defect d)"
                        % (name, rank, g["stream"], th), "%r vs %r ns" % (g["blocked_ns"], ns(w)))
            C.eq(sorted(s for r, s in want if r == int(rank)),
                 sorted(g["stream"] for g in got["streams"] if g["blocked_ns"] > 0),
                 "%s rank %s: the streams blocked at >= %s" % (name, rank, th))


def check_series(name):
    """the series of each stream: its values in order, its times relative to
    its first change (HTA shifts ts), where HTA has every row and no tie"""
    exp = cc.fixture("queue_length", name + ".json")
    for rank, rel in sorted(exp["_source"]["trace_files"].items()):
        ts = exp["time_series"][rank]
        if "rows" not in ts or len(ts["rows"]) != ts["row_count"]:
            continue
        path = cc.shared_trace(rel)
        got = run_json(["queue", "--series", "--format", "json"] + window_args(path) + [path])
        if got is None:
            continue
        col = {c: i for i, c in enumerate(ts["columns"])}
        want, mine = {}, {}
        for r in ts["rows"]:
            want.setdefault(r[col["stream"]], []).append((r[col["ts"]], r[col["queue_length"]]))
        for g in got["series"]:
            mine.setdefault(g["stream"], []).append((g["ts_ns"], g["queue_length"]))
        for s in sorted(want):
            w, m = want[s], mine.get(s, [])
            C.eq(len(m), len(w), "%s rank %s stream %d: series rows" % (name, rank, s))
            if len(m) != len(w):
                continue
            w0, m0 = ns(w[0][0]), m[0][0]
            C.eq([(t - m0, q) for t, q in m], [(ns(t) - w0, q) for t, q in w],
                 "%s rank %s stream %d: series (relative ts, queue length)" % (name, rank, s))


def hand_trace(path):
    """launches (+1) and kernels (-1) whose answers are worked out by hand below"""
    ev = []

    def launch(ts, corr, name="cudaLaunchKernel"):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1,
                   "ts": ts, "dur": 1, "args": {"correlation": corr}})

    def kernel(ts, corr, stream):
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % corr, "pid": 0, "tid": stream,
                   "ts": ts, "dur": 2, "args": {"device": 0, "stream": stream,
                                                 "correlation": corr}})
    # stream 7: queued 1, 2, 3 at 0, 10, 20 us; started at 30, 40, 50
    for i, t in enumerate((0, 10, 20)):
        launch(t, i + 1)
        kernel(t + 30, i + 1, 7)
    # stream 8: one launch; plus what does not count: a cudaLaunchCooperativeKernel
    # (not a launch name), a launch without a kernel, a kernel without its launch
    launch(5, 4)
    kernel(15, 4, 8)
    launch(6, 5, "cudaLaunchCooperativeKernel")
    kernel(16, 5, 8)
    launch(7, 6)
    kernel(17, 99, 8)
    # stream 9: the second launch at the very time the first kernel starts
    launch(100, 10)
    kernel(110, 10, 9)
    launch(110, 11)
    kernel(120, 11, 9)
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def check_hand(tmp):
    path = os.path.join(tmp, "hand.json")
    hand_trace(path)
    got = run_json(["queue", "--format", "json", path])
    if got is None:
        return
    rows = by_stream(got["streams"], "hand")
    C.eq(sorted(rows), [7, 8, 9], "hand: the streams")
    key = lambda r: (r["rank"], r["device"], r["count"], r["min"], r["max"], r["mean"],
                     r["blocked_ns"])
    # 7: 1 2 3 2 1 0; 8: 1 0; 9: 1 2 1 0 (launch first at 110: never 0 in between)
    C.eq(key(rows[7]), (None, 0, 6, 0, 3, 1.5, 0), "hand stream 7")
    C.eq(key(rows[8]), (None, 0, 2, 0, 1, 0.5, 0), "hand stream 8: only the cudaLaunchKernel pair")
    C.eq(key(rows[9]), (None, 0, 4, 0, 2, 1.0, 0), "hand stream 9: launch before kernel start")
    for th, want in ((2, {7: 30000, 8: 0, 9: 0}), (3, {7: 10000, 8: 0, 9: 0})):
        got = run_json(["queue", "--max-queue", str(th), "--format", "json", path])
        if got is not None:
            C.eq({r["stream"]: r["blocked_ns"] for r in got["streams"]}, want,
                 "hand: blocked_ns at >= %d" % th)
    got = run_json(["queue", "--time-range", "0:15", "--format", "json", path])
    if got is not None:
        rows = by_stream(got["streams"], "hand 0:15")
        C.eq(sorted(rows), [7, 8], "hand --time-range 0:15: by the launch's start")
        if 7 in rows:
            C.eq(key(rows[7]), (None, 0, 4, 0, 2, 1.0, 0), "hand --time-range 0:15 stream 7")
    p = te.run_tool(["queue", "--series", "--format", "csv", path])
    lines = p.stdout.decode().splitlines()
    C.eq(lines[0], "trace_id,rank,device,stream,ts_ns,queue_length", "hand --series: csv header")
    C.eq([l for l in lines if ",9," in l],
         ["1,,0,9,100000,1", "1,,0,9,110000,2", "1,,0,9,110000,1", "1,,0,9,120000,0"],
         "hand --series: stream 9, launch first at 110 us")
    db = os.path.join(tmp, "hand.db")
    C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "hand: ingest")
    for fmt in ("json", "csv", "table", "markdown"):
        a = te.run_tool(["queue", "--format", fmt, path]).stdout
        b = te.run_tool(["queue", "--format", fmt, db]).stdout
        C.check(a == b and a, "hand: the database gives the file's answer (%s)" % fmt)


def queue_expect(t, max_queue, **f):
    """(device, stream) -> (count, mean, min, max, blocked_ns) of the GPU rows
    that pass the filters f and were launched by a call of a launch name"""
    ch = {}
    for g in t.gpu:
        c, st = g["call"], g["args"].get("stream")
        if c is None or c["name"] not in cc.LAUNCHES or st is None or st == -1 or \
                not t.passes(g, gpu=True, **f):
            continue
        ch.setdefault((g["args"].get("device"), st), []).extend([(c["ts"], 1), (g["ts"], -1)])
    out = {}
    for k, v in ch.items():
        v.sort(key=lambda x: (x[0], -x[1]))
        n, lens, blocked = 0, [], 0
        for i, (ts, d) in enumerate(v):
            if i and n >= max_queue:
                blocked += ts - v[i - 1][0]
            n += d
            lens.append(n)
        out[k] = (len(lens), sum(lens) / len(lens), min(lens), max(lens), blocked)
    return out


def check_filters(tmp):
    path, t = cc.nccl_trace()
    s5 = t.step(5)["ts"]
    cases = [(["--name", "nccl"], {"name": "nccl"}),
             (["--name", "^void.*(gemm|elementwise)"], {"name": "^void.*(gemm|elementwise)"}),
             (["--under", "ProfilerStep#5"], {"under": t.ops("ProfilerStep#5")}),
             (["--under", "## forward ##", "--name", "Memcpy|Memset|bn_fw"],
              {"under": t.ops("## forward ##"), "name": "Memcpy|Memset|bn_fw"}),
             (["--under", "aten::.*", "--time-range", "%dns:" % s5],
              {"under": t.ops("aten::.*"), "tr": (s5, 1 << 62)})]
    db = os.path.join(tmp, "nccl.db")
    C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "nccl: ingest")
    cc.check_filter_cases(
        C, "queue", path, db, [(["--max-queue", "2"] + a, f) for a, f in cases],
        lambda **f: queue_expect(t, 2, **f),
        lambda doc: {(r["device"], r["stream"]): r for r in doc["streams"]},
        lambda g, w: (g["count"], g["min"], g["max"], g["blocked_ns"]) == (w[0], w[2], w[3], w[4])
        and close(g["mean"], w[1], 0, 1e-6))


def main():
    if not cc.have_shared():
        print("SKIP: no shared test data")
        return te.SKIP_EXIT
    with tempfile.TemporaryDirectory(prefix="tt_queue_") as tmp:
        C.section("hand-made trace", check_hand, tmp)
        C.section("--name, --under", check_filters, tmp)
    for name in cc.TRACES:
        C.section(name, check_trace, name)
    for name in ("trace_filter", "dlrm_8rank"):
        C.section(name + " blocked", check_blocked, name)
    for name in ("critical_path_event_sync_multi_stream", "trace_filter"):
        C.section(name + " series", check_series, name)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
