#!/usr/bin/env python3
"""`tracetool kernels` and `breakdown` against HTA v0.6.1's
get_gpu_kernel_breakdown (tests/fixtures/hta/expected/gpu_kernel_breakdown/,
the six traces of tests/fixtures/hta/README.md) and, where HTA is wrong,
against the independent values of expected/defects/ (a), (b) and (c);
(d) and (e) are test_queue.py's. Python standard library only.

HTA's window (README "What every analysis sees", step 5: with two or more
ProfilerStep#N it keeps only what was launched before the last step starts)
is given to tracetool as --time-range :T, T that rank's last step start read
from the raw JSON (counters_common.window_args); every run names its --rank.

What is compared, and what is not:

1. HTA's per-kernel table, per rank and kernel type (HTA's name patterns,
   hta/common/types.py, copied below). Where a (rank, type) has no "others"
   row, each HTA row is one kernel name with the statistics of its
   durations: tracetool's row of that name must have count = HTA's sum/mean
   exactly, and sum, min, max, mean, stddev within 1% or 2 us; the names
   must be the same. Where it has an "others" row, HTA's _aggr_gpu_kernel_time
   (breakdown_analysis.py:580-639) has aggregated again over the per-name
   SUMS: a named row's min/max/mean are its sum (checked on the fixture, so
   only its sum is compared), and "others" holds the names past the 0.8
   quantile of the cumulative sum or past the 10th: its sum, max, min, mean,
   std are over those names' sums, and sum/mean is their number. It is
   reproduced from tracetool's rows: the names of that type HTA did not name.
   MEMORY rows are per copy name in HTA ("Memcpy HtoD (Pinned -> Device)")
   and per kind in tracetool ("memcpy HtoD"): HTA's rows are summed by kind
   (count, sum, min of mins, max of maxes; stddev only for a kind of one name).
2. HTA's kernel-type table (summed over ranks) gives exclusive regions (C
   only, C overlapping COMM, ...). tracetool's breakdown gives unions per
   rank, so what is compared is what both define: the union of COMPUTATION
   kernels (compute_ns), of COMMUNICATION (comm_ns), of MEMORY (memory_ns),
   COMPUTATION n COMMUNICATION (overlap_ns) and the union of all (busy_ns),
   each the sum of the HTA regions it covers, summed over the ranks; the
   individual regions that involve MEMORY are not (tracetool has no column
   for them). HTA casts each segment of its step function to int us
   (breakdown_analysis.py:570): on traces with integer us this is exact and
   the tolerance is 1% or 2 us; on nccl_parser_config (fractional ts) it
   loses up to 1 us per segment, so there the regions are recomputed here
   from the raw JSON (HTA's window, merge, step function): truncated they
   must equal HTA's table exactly (so the recomputation is HTA's), and
   untruncated, to the ns, they are what tracetool must give.
3. Defects: (a) dlrm_8rank ranks 1 and 3, stream 7: host wait and kernel
   wait of breakdown --by stream are independent_pandas_corrected_no_launch_time
   (a kernel without a runtime call has no launch time), not HTA's; (b)
   triton_example: one kernel of 1.76 us (a Triton launcher cpu_op with
   args.stream is no GPU work), in kernels and in breakdown's compute time;
   (c) nccl_parser_config: the GPU time in HTA's window is its unrounded
   sum to the ns (HTA_DISABLE_NS_ROUNDING=1's), and the whole file's is
   the raw JSON's, with the same counts.
"""

import math
import os
import re
import statistics
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counters_common as cc  # noqa: E402
from counters_common import te, ns, window_args, close  # noqa: E402

C = te.Checker("hta_fixtures")

# hta/common/types.py (v0.6.1), applied with re.match as GroupingPattern.match
COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NOT_COMPUTE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)"
    r"|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)"
    r"|(^collective_subgraph_execution)")
TYPES = ("COMPUTATION", "COMMUNICATION", "MEMORY")


def kernel_type(name):
    """hta/utils/utils.py get_kernel_type"""
    if COMM.match(name):
        return "COMMUNICATION"
    if MEMORY.match(name):
        return "MEMORY"
    return "OTHER" if NOT_COMPUTE.match(name) else "COMPUTATION"


def mem_kind(name):
    """an HTA copy name as tracetool's kind: "Memcpy HtoD (Pinned -> Device)"
    -> "memcpy HtoD", "Memset (Device)" -> "memset Device" """
    if name.startswith("Memset (") and name.endswith(")"):
        return "memset " + name[8:-1]
    return "memcpy " + name.split()[1] if name.startswith("Memcpy ") else None


def near(got, want):
    return close(got, want, 0.01, 2.0)


def us(v):
    return 0.0 if v is None else v / 1000.0


def trace_set(name):
    """(rank -> path, the input to give tracetool: the file, or the directory
    of per-rank files)"""
    fx = cc.fixture("gpu_kernel_breakdown", name + ".json")
    files = {int(r): cc.shared_trace(rel) for r, rel in fx["_source"]["trace_files"].items()}
    inp = next(iter(files.values())) if len(files) == 1 else \
        os.path.dirname(next(iter(files.values())))
    return fx, files, inp


def run_json(args):
    return cc.run_json(C, args)


def kernels_rows(got, label):
    """tracetool kernels JSON of one rank -> (kernel rows by name, memory rows by kind)"""
    summ = got["summaries"]
    C.eq(len(set(s["trace_id"] for s in summ)), 1, label + ": one trace")
    out = {"kernels": {}, "memory": {}}
    for s in summ:
        out[s["what"]].update((r["name"], r) for r in s["rows"])
    C.eq(sum(len(v) for v in out.values()), sum(len(s["rows"]) for s in summ),
         label + ": each name once")
    return out["kernels"], out["memory"]


def check_stats(lab, g, w, count):
    """one tracetool row g against one HTA row w that has a name's statistics"""
    C.eq(g["count"], count, lab + ": count (HTA sum/mean)")
    for key, hk in (("total_ns", "sum (us)"), ("min_ns", "min (us)"), ("max_ns", "max (us)"),
                    ("avg_ns", "mean (us)"), ("stddev_ns", "stddev")):
        if hk in w:
            C.check(near(us(g[key]), w[hk]), "%s: %s (HTA)" % (lab, hk),
                    "%r us vs %r" % (us(g[key]), w[hk]))


def check_type(label, hta_rows, tt_rows):
    """HTA's rows of one (rank, type) against tracetool's rows of that type by name"""
    named = dict((r["name"], r) for r in hta_rows if r["name"] != "others")
    others = [r for r in hta_rows if r["name"] == "others"]
    C.check(len(others) <= 1 and len(named) + len(others) == len(hta_rows),
            label + ": fixture: names once")
    for n, w in sorted(named.items()):
        lab = "%s %s" % (label, n[:60])
        g = tt_rows.get(n)
        if not C.check(g is not None, lab + ": in tracetool kernels"):
            continue
        if others:  # re-aggregated over per-name sums: only the sum is the kernels'
            C.check(w["min (us)"] == w["max (us)"] == w["mean (us)"] == w["sum (us)"],
                    lab + ": fixture: min = max = mean = sum (HTA aggregated again)")
            C.check(near(us(g["total_ns"]), w["sum (us)"]), lab + ": sum (HTA)",
                    "%r us vs %r" % (us(g["total_ns"]), w["sum (us)"]))
        else:
            check_stats(lab, g, w, int(round(w["sum (us)"] / w["mean (us)"])))
    rest = sorted(us(g["total_ns"]) for n, g in tt_rows.items() if n not in named)
    if not others:
        C.eq(sorted(n for n in tt_rows if n not in named), [], label + ": no name HTA lacks")
        return
    o = others[0]
    lab = label + " others"
    C.eq(len(rest), int(round(o["sum (us)"] / o["mean (us)"])), lab + ": names (HTA sum/mean)")
    if not rest:
        return
    got = {"sum (us)": sum(rest), "max (us)": max(rest), "min (us)": min(rest),
           "mean (us)": sum(rest) / len(rest),
           "stddev": statistics.stdev(rest) if len(rest) > 1 else 0.0}
    for k, v in sorted(got.items()):
        C.check(near(v, o[k]), "%s: %s over the names' sums (HTA)" % (lab, k), "%r vs %r" % (v, o[k]))


def check_memory(label, hta_rows, tt_mem):
    """HTA's MEMORY rows (per copy name) summed by kind against tracetool's kinds"""
    if any(r["name"] == "others" for r in hta_rows):
        C.skip(label + " MEMORY", "HTA lumped copy names into others")
        return
    kinds = {}
    for r in hta_rows:
        k = mem_kind(r["name"])
        C.check(k is not None, "%s %s: a copy name" % (label, r["name"]))
        kinds.setdefault(k, []).append(r)
    C.eq(sorted(tt_mem), sorted(kinds), label + ": the copy kinds")
    for k, rows in sorted(kinds.items()):
        g = tt_mem.get(k)
        if g is None:
            continue
        count = sum(int(round(r["sum (us)"] / r["mean (us)"])) for r in rows)
        w = {"sum (us)": sum(r["sum (us)"] for r in rows), "min (us)": min(r["min (us)"] for r in rows),
             "max (us)": max(r["max (us)"] for r in rows)}
        w["mean (us)"] = w["sum (us)"] / count
        if len(rows) == 1:
            w["stddev"] = rows[0]["stddev"]
        check_stats("%s %s" % (label, k), g, w, count)


def per_rank_runs(name):
    """kernels and breakdown --by stream of each rank in HTA's window:
    {rank: (kernels JSON, breakdown JSON)}"""
    fx, files, inp = trace_set(name)
    out = {}
    for rank, path in sorted(files.items()):
        sel = ["--rank", str(rank)] + window_args(path) + [inp]
        out[rank] = (run_json(["kernels", "--format", "json"] + sel),
                     run_json(["breakdown", "--by", "stream", "--format", "json"] + sel))
    return fx, out


def check_kernel_table(name, fx, runs):
    for rank, (got, _) in sorted(runs.items()):
        label = "%s rank %d" % (name, rank)
        if got is None:
            continue
        kern, mem = kernels_rows(got, label)
        mine = dict((t, {}) for t in TYPES)
        for n, r in kern.items():
            mine.setdefault(kernel_type(n), {})[n] = r
        C.eq(sorted(mine), sorted(TYPES), label + ": tracetool's kernels are HTA's three types")
        for t in ("COMPUTATION", "COMMUNICATION"):
            check_type("%s %s" % (label, t),
                       [r for r in fx["kernel"] if r["rank"] == rank and r["kernel_type"] == t],
                       mine[t])
        check_memory(label, [r for r in fx["kernel"] if r["rank"] == rank and
                             r["kernel_type"] == "MEMORY"], mem)


def unions_of_regions(regions):
    """HTA's exclusive regions {"A overlapping B": us} -> the unions tracetool reports"""
    out = {"compute_ns": 0, "comm_ns": 0, "memory_ns": 0, "overlap_ns": 0, "busy_ns": 0}
    for kt, v in regions.items():
        parts = kt.split(" overlapping ")
        out["busy_ns"] += v
        out["compute_ns"] += v if "COMPUTATION" in parts else 0
        out["comm_ns"] += v if "COMMUNICATION" in parts else 0
        out["memory_ns"] += v if "MEMORY" in parts else 0
        out["overlap_ns"] += v if "COMPUTATION" in parts and "COMMUNICATION" in parts else 0
    return out


def hta_window_gpu(path):
    """the GPU rows of HTA's kept frame (README steps 3 and 5), from the raw
    JSON: [(name, ts ns, dur ns)]"""
    ev = cc.load_events(path)
    steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    last = max(e["ts"] for e in steps) if len(set(e["name"] for e in steps)) >= 2 else None

    def arg(e, k):
        a = e.get("args") if isinstance(e.get("args"), dict) else {}
        v = a.get(k, -1)
        return v if isinstance(v, (int, Decimal)) and not isinstance(v, bool) else -1

    def gpu(e):
        return (arg(e, "stream") >= 0 and arg(e, "correlation") >= 0) or \
            e.get("name") in ("Event Sync", "Context Sync")
    kept = set(arg(e, "correlation") for e in ev if not gpu(e) and "ts" in e and
               (last is None or e["ts"] < last))
    return [(e["name"], ns(e["ts"]), ns(e.get("dur", 0))) for e in ev
            if gpu(e) and arg(e, "stream") != -1 and (last is None or arg(e, "correlation") in kept)]


def hta_regions(rows, truncate):
    """_get_gpu_kernel_type_time (breakdown_analysis.py:510-578) on rows in
    ns: each type's intervals merged, a step function of the three, each
    segment's length (cast to int us when truncate: HTA's astype(int))"""
    points = []
    for bit, t in enumerate(TYPES):
        iv = sorted((ts, ts + d) for n, ts, d in rows if kernel_type(n) == t)
        cur = None
        for s, e in iv:
            if cur and s <= cur[1]:
                cur[1] = max(cur[1], e)
                continue
            if cur:
                points += [(cur[0], 1 << bit), (cur[1], -(1 << bit))]
            cur = [s, e]
        if cur:
            points += [(cur[0], 1 << bit), (cur[1], -(1 << bit))]
    points.sort(key=lambda p: p[0])
    out, running = {}, 0
    for i, (t, delta) in enumerate(points[:-1]):
        running += delta
        if running <= 0:
            continue
        key = " overlapping ".join(TYPES[b] for b in range(3) if running & (1 << b))
        seg = points[i + 1][0] - t
        out[key] = out.get(key, 0) + (math.trunc(seg / 1000) if truncate else seg)
    return out


def check_type_table(name, fx, runs):
    want = unions_of_regions(dict((r["kernel_type"], r["sum"]) for r in fx["kernel_type"]))
    got = dict((k, 0) for k in want)
    for rank, (_, bd) in sorted(runs.items()):
        if bd is None:
            return
        rows = [r for r in bd["ranks"] if r["rank"] == rank]
        C.eq(len(rows), 1, "%s rank %d: one breakdown rank row" % (name, rank))
        for r in rows:
            for k in got:
                got[k] += r[k]
    if name == "nccl_parser_config":  # fractional us: see the docstring, 2.
        _, files, _ = trace_set(name)
        rows = hta_window_gpu(files[0])
        trunc = hta_regions(rows, True)
        C.eq(trunc, dict((r["kernel_type"], r["sum"]) for r in fx["kernel_type"]),
             name + ": kernel-type regions recomputed from the raw JSON, truncated as HTA (HTA)")
        exact = unions_of_regions(hta_regions(rows, False))
        for k in sorted(got):
            C.eq(got[k], exact[k], "%s: %s, all ranks (raw JSON, HTA's regions untruncated)"
                 % (name, k))
            # under 1 us per segment, at most one segment per interval end
            C.check(want[k] <= exact[k] / 1000.0 < want[k] + 2 * len(rows), "%s: %s: HTA's "
                    "truncation only loses time" % (name, k), (want[k], exact[k]))
        return
    for k in sorted(got):
        C.check(near(got[k] / 1000.0, want[k]), "%s: %s, all ranks (HTA kernel-type table)"
                % (name, k), "%r us vs %r" % (got[k] / 1000.0, want[k]))


def check_trace(name):
    fx, runs = per_rank_runs(name)
    check_kernel_table(name, fx, runs)
    check_type_table(name, fx, runs)
    return runs


def check_defect_a(runs):
    """dlrm_8rank, ranks 1 and 3, stream 7 (defect a)"""
    d = cc.fixture("defects", "a_index0_launch_time.json")
    for rank in ("1", "3"):
        want = dict((r["idle_category"], r["idle_time"])
                    for r in d["ranks"][rank]["independent_pandas_corrected_no_launch_time"]
                    if r["stream"] == 7)
        hta = dict((r["idle_category"], r["idle_time"])
                   for r in d["ranks"][rank]["hta_get_idle_time_breakdown"] if r["stream"] == 7)
        C.check(want["host_wait"] != hta["host_wait"], "dlrm rank %s: fixture: HTA differs" % rank)
        bd = runs[int(rank)][1]
        if bd is None:
            continue
        s = [r for r in bd["streams"] if r["rank"] == int(rank) and r["stream"] == 7]
        if not C.eq(len(s), 1, "dlrm rank %s: stream 7 row" % rank):
            continue
        for key, cat in (("host_wait_ns", "host_wait"), ("kernel_wait_ns", "kernel_wait"),
                         ("other_idle_ns", "other")):
            C.eq(s[0][key], ns(want[cat]), "dlrm rank %s stream 7: %s (independent, not HTA's %r us)"
                 % (rank, key, hta[cat]))


def check_defect_b():
    d = cc.fixture("defects", "b_triton_cpu_op_as_gpu.json")
    path = cc.shared_trace(d["_source"]["trace_files"]["0"])
    n, t = d["independent_gpu_kernel_count_corrected"], d["independent_gpu_kernel_time_corrected"]
    C.check((n, t) != (2, d["hta_kernel_breakdown"][0]["sum (us)"]), "triton: fixture: HTA differs")
    got = run_json(["kernels", "--format", "json", path])
    if got is not None:
        kern = [r for s in got["summaries"] if s["what"] == "kernels" for r in s["rows"]]
        C.eq((sum(r["count"] for r in kern), sum(r["total_ns"] for r in kern)), (n, ns(t)),
             "triton: kernels: count, total (independent, not HTA's 2 / 97.572 us)")
    got = run_json(["breakdown", "--format", "json", path])
    if got is not None:
        C.eq([(r["compute_ns"], r["busy_ns"]) for r in got["ranks"]], [(ns(t), ns(t))],
             "triton: breakdown compute and busy (independent, not HTA's 95.812 us)")


def gpu_time(got):
    rows = [r for s in got["summaries"] for r in s["rows"]]
    return sum(r["count"] for r in rows), sum(r["total_ns"] for r in rows)


def check_defect_c(nccl_runs):
    d = cc.fixture("defects", "c_ns_rounding.json")
    path = cc.shared_trace(d["_source"]["trace_files"]["0"])
    h = d["hta"]["rounding_disabled (HTA_DISABLE_NS_ROUNDING=1)"]
    want = (h["gpu_event_count"], ns(h["gpu_event_dur_sum_us"]))
    rows = hta_window_gpu(path)
    C.eq((len(rows), sum(r[2] for r in rows)), want,
         "nccl: HTA's window recomputed from the raw JSON: GPU rows, their time (HTA unrounded)")
    got = nccl_runs[0][0]
    if got is not None:
        C.eq(gpu_time(got), want, "nccl: kernels in HTA's window: count, time to the ns "
             "(unrounded, not HTA's default %r us)" % d["hta"]["rounding_enabled (HTA default)"]
             ["gpu_event_dur_sum_us"])
    got = run_json(["kernels", "--format", "json", path])
    if got is not None:
        # the fixture's sum is a float sum (165185.83799999996): to the nearest ns
        raw_ns = int(round(Decimal(str(d["independent_raw_gpu_dur_sum_us"])) * 1000))
        C.eq(gpu_time(got), (d["independent_raw_gpu_events"], raw_ns),
             "nccl: kernels, whole file: count, time to the ns (independent raw JSON, not "
             "%r us after ceil/floor)" % d["independent_gpu_dur_sum_after_ceil_floor_us"])


def main():
    if not cc.have_shared() or not os.path.isdir(cc.shared_trace(os.path.join("param", "dlrm_8rank"))):
        print("SKIP: no shared test data")
        return te.SKIP_EXIT
    runs = {}
    for name in cc.TRACES:
        C.section(name, lambda n=name: runs.__setitem__(n, check_trace(n)))
    if "dlrm_8rank" in runs:
        C.section("defect a", check_defect_a, runs["dlrm_8rank"])
    C.section("defect b", check_defect_b)
    if "nccl_parser_config" in runs:
        C.section("defect c", check_defect_c, runs["nccl_parser_config"])
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
