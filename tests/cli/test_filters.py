#!/usr/bin/env python3
"""The filters every analysis takes (docs/FILTERS.md): --time-range A:B,
--name REGEX and --under OP, in averages, kernels, breakdown and
memtimeline, alone and with --rank and --steps, from a file, standard input
and a database; bad expressions and ranges are usage errors (exit 2, one
line). MTIA's categories read like CUDA's (a hand-made trace).

Every expectation is computed here from the trace JSON alone (Python
standard library, times exact with Decimal): which events pass a filter
(an op, a runtime call, a memory event by its own start and thread; a GPU
activity by its runtime call's start and thread, its own start without
one; --under: enclosed by an op whose whole name matches, on the same
thread), then what the analysis counts of them.
"""

import collections
import csv
import gzip
import io
import json
import os
import re
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("filters")
DATA = os.path.join(te.shared_dir(), "testdata")
NCCL = os.path.join(DATA, "hta", "nccl_parser_config", "nccl_data.json.gz")
DLRM = os.path.join(DATA, "param", "dlrm_8rank", "kineto")

KERNEL = {"kernel", "Kernel", "mtia_ccp_events"}
MEMCPY = {"gpu_memcpy", "Memcpy"}
MEMSET = {"gpu_memset", "Memset"}
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime", "xpu_runtime", "xpu_driver",
           "mtia_runtime", "privateuse1_runtime", "privateuse1_driver", "hip_runtime"}
NOT_SLICE = KERNEL | MEMCPY | MEMSET | RUNTIME | {"gpu_user_annotation", "cuda_sync"}
# the names torch's key_averages leaves out
AVG_DROPPED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
               "profiler::_record_function_enter_new", "profiler::_record_function_exit",
               "aten::is_leaf", "aten::output_nr", "aten::_version"}


def ns(v):
    return int(Decimal(str(v)) * 1000)


def thread_part(v):
    """a pid or tid as tracetool keys a thread: a text that spells an
    integer is that integer"""
    if isinstance(v, str) and re.fullmatch(r"-?(0|[1-9][0-9]{0,17})", v) and v != "-0":
        return int(v)
    return v


class Trace(object):
    """The events of one trace, as the filters see them."""

    def __init__(self, path=None, doc=None):
        if doc is None:
            with gzip.open(path, "rb") as f:
                doc = json.loads(f.read(), parse_float=Decimal)
        self.ev = [e for e in doc["traceEvents"] if isinstance(e, dict)]
        self.slices, self.runtime, self.gpu, self.memory = [], [], [], []
        for e in self.ev:
            ph, cat = e.get("ph"), e.get("cat")
            if ph == "B":
                raise ValueError("the tests' traces have no 'B' slices")
            if ph == "i" and e.get("name") == "[memory]":
                self.memory.append(self.rec(e, 0))
            if ph != "X" or "ts" not in e:
                continue
            r = self.rec(e, ns(e.get("dur", 0)))
            if cat in RUNTIME:
                self.runtime.append(r)
            elif cat in KERNEL or cat in MEMCPY or cat in MEMSET:
                r["kind"] = "kernel" if cat in KERNEL else "memcpy" if cat in MEMCPY else "memset"
                self.gpu.append(r)
            elif cat not in NOT_SLICE:
                self.slices.append(r)
        by_corr = collections.defaultdict(list)
        for r in self.runtime:
            if r["corr"] is not None:
                by_corr[r["corr"]].append(r)
        for g in self.gpu:
            calls = sorted(by_corr.get(g["corr"], []), key=lambda c: c["ts"])
            # the call of its correlation that started last at or before it,
            # else the first (the ingest's merge join)
            before = [c for c in calls if c["ts"] <= g["ts"]]
            g["call"] = before[-1] if before else (calls[0] if calls else None)
            g["launch"] = g["call"]["ts"] if g["call"] else g["ts"]

    @staticmethod
    def rec(e, dur):
        args = e.get("args") or {}
        ts = ns(e["ts"])
        return {"name": e.get("name", ""), "cat": e.get("cat"), "ts": ts, "dur": dur,
                "end": ts + max(dur, 0), "args": args, "corr": args.get("correlation"),
                "thread": (thread_part(e.get("pid")), thread_part(e.get("tid")))}

    def ops(self, under):
        """--under's ops: (thread, ts, end) of the slices whose whole name matches"""
        rx = re.compile(under)
        return [(s["thread"], s["ts"], s["end"]) for s in self.slices if rx.fullmatch(s["name"])]

    @staticmethod
    def enclosed(ops, thread, ts, end):
        return any(t == thread and a <= ts and end <= b for t, a, b in ops)

    def passes(self, r, name=None, tr=None, under=None, gpu=False):
        """r passes --name, --time-range (ns pair) and --under (ops)"""
        if name is not None and not re.search(name, r["name"]):
            return False
        ts = r["launch"] if gpu else r["ts"]
        if tr is not None and not (tr[0] <= ts < tr[1]):
            return False
        if under is None:
            return True
        if gpu:
            c = r["call"]
            return c is not None and self.enclosed(under, c["thread"], c["ts"], c["ts"])
        return self.enclosed(under, r["thread"], r["ts"], r["end"])

    def step(self, n):
        s = [x for x in self.slices if x["name"] == "ProfilerStep#%d" % n]
        return s[0]


def us(v):
    """ns as the microseconds --time-range takes"""
    return str(Decimal(v) / 1000)


def run(args, code=0, stdin=None):
    p = te.run_tool(args, input_bytes=stdin)
    C.check(p.returncode == code, " ".join(args[:6]) + ": exit %d" % code,
            "got %d: %s" % (p.returncode, p.stderr.decode()[-300:]))
    return p


def csv_rows(args, stdin=None):
    return list(csv.DictReader(io.StringIO(run(args, stdin=stdin).stdout.decode())))


def kernel_groups(t, **f):
    g = collections.defaultdict(lambda: [0, 0])
    for k in t.gpu:
        if k["kind"] == "kernel" and t.passes(k, gpu=True, **f):
            g[k["name"]][0] += 1
            g[k["name"]][1] += k["dur"]
    return {n: tuple(v) for n, v in g.items()}


def got_kernels(args, stdin=None):
    rows = csv_rows(["kernels", "--only", "kernels", "--format", "csv"] + args, stdin)
    return {r["name"]: (int(r["count"]), int(r["total_ns"])) for r in rows}


# ---------------------------------------------------------------- kernels

def check_kernels(t, inp, label):
    s5 = t.step(5)
    cases = [
        ("--name nccl", ["--name", "nccl"], {"name": "nccl"}),
        ("--name ^void.*gemm", ["--name", "^void.*gemm"], {"name": "^void.*gemm"}),
        ("--time-range step 5", ["--time-range", us(s5["ts"]) + ":" + us(s5["end"])],
         {"tr": (s5["ts"], s5["end"])}),
        ("--time-range in ns, open end", ["--time-range", "%dns:" % s5["ts"]],
         {"tr": (s5["ts"], 1 << 62)}),
        ("--under ProfilerStep#5", ["--under", "ProfilerStep#5"], {"under": t.ops("ProfilerStep#5")}),
        ("--under aten::.*backward.*", ["--under", "aten::.*backward.*"],
         {"under": t.ops("aten::.*backward.*")}),
        ("--under autograd, --name elementwise",
         ["--under", "autograd::engine::evaluate_function:.*", "--name", "elementwise"],
         {"under": t.ops("autograd::engine::evaluate_function:.*"), "name": "elementwise"}),
    ]
    for what, args, f in cases:
        want = kernel_groups(t, **f)
        C.check(want, "%s: %s selects kernels" % (label, what))
        C.eq(got_kernels(args + [inp]), want, "%s: kernels %s, count and total per name" % (label, what))
    # runtime calls: by their own start and thread
    ops = t.ops("ProfilerStep#6")
    want = collections.Counter(r["name"] for r in t.runtime
                               if t.passes(r, name="Memcpy|Launch", under=ops))
    got = {r["name"]: int(r["count"]) for r in csv_rows(
        ["kernels", "--by", "runtime", "--name", "Memcpy|Launch", "--under", "ProfilerStep#6",
         "--format", "csv", inp])}
    C.eq(got, dict(want), "%s: --by runtime --name --under: calls per name" % label)
    # one row per activity that passes, memcpys and memsets too
    want = sum(1 for g in t.gpu if t.passes(g, gpu=True, tr=(s5["ts"], s5["end"]), name="Memcpy|Memset"))
    got = csv_rows(["kernels", "--by", "activity", "--time-range", us(s5["ts"]) + ":" + us(s5["end"]),
                    "--name", "Memcpy|Memset", "--format", "csv", inp])
    C.check(want > 0, "%s: step 5 has memcpys or memsets" % label)
    C.eq(len(got), want, "%s: --by activity --time-range --name: one row per activity" % label)
    C.check(all(re.search("Memcpy|Memset", r["name"]) for r in got), "%s: only theirs" % label)
    # --by op: the launching op's name groups what passes
    got = {r["name"]: int(r["count"]) for r in csv_rows(
        ["kernels", "--by", "op", "--only", "kernels", "--under", "ProfilerStep#4", "--format",
         "csv", inp])}
    C.eq(sum(got.values()), sum(v[0] for v in kernel_groups(t, under=t.ops("ProfilerStep#4")).values()),
         "%s: --by op --under: every kernel launched there" % label)
    # with --steps: both
    want = kernel_groups(t, name="nccl|elementwise", tr=(s5["ts"], s5["end"]))
    C.eq(got_kernels(["--steps", "5", "--name", "nccl|elementwise", inp]), want,
         "%s: --steps 5 with --name: what both keep" % label)
    p = run(["kernels", "--by", "activity", "--name", "no such kernel", inp], code=4)
    C.check(b"passes --name/--under/--time-range" in p.stderr, "%s: nothing passes: said" % label)


# ---------------------------------------------------------------- averages

def same_name_nesting(t, name):
    """whether an op of that name lies in another of the same name on its
    thread (torch's same-name collapse could then merge them)"""
    spans = sorted((s["thread"], s["ts"], -s["end"]) for s in t.slices if s["name"] == name)
    for (ta, a, ea), (tb, b, eb) in zip(spans, spans[1:]):
        if ta == tb and b < -ea:
            return True
    return False


def avg_rows(args):
    rows = csv_rows(["averages", "--row-limit", "-1", "--format", "csv"] + args)
    return {(r["name"], r["device"]): r for r in rows}


def check_averages(t, inp, label):
    cpu = [s for s in t.slices if s["cat"] in ("cpu_op", "user_annotation", None)]
    rx = r"^aten::(mul|add_|empty|copy_|view)$"
    names = {s["name"] for s in cpu if re.search(rx, s["name"])}
    C.check(len(names) >= 3, "%s: the trace has ops --name picks" % label)
    plain = [n for n in names if not same_name_nesting(t, n)]
    got = avg_rows(["--name", rx, inp])
    C.eq(sorted(n for n, d in got), sorted(names), "%s: averages --name: its rows, no other" % label)
    for n in plain:
        evs = [s for s in cpu if s["name"] == n]
        r = got.get((n, "CPU"), {})
        C.eq(int(r.get("count", -1)), len(evs), "%s: --name: %s count" % (label, n))
        C.check(abs(float(r.get("cpu_time_total_us", -1)) - sum(s["dur"] for s in evs) / 1e3) < 0.01,
                "%s: --name: %s CPU total" % (label, n))
    # --under a step: the ops inside it, on its thread, the runtime calls
    # there and the GPU activities they launched
    ops = t.ops("ProfilerStep#5")
    got = avg_rows(["--under", "ProfilerStep#5", inp])
    want = collections.Counter(s["name"] for s in cpu if t.passes(s, under=ops))
    for n, k in sorted(want.items()):
        if n in AVG_DROPPED or n.startswith("ProfilerStep#") or same_name_nesting(t, n):
            continue
        C.eq(int(got.get((n, "CPU"), {}).get("count", -1)), k, "%s: --under: %s count" % (label, n))
    rt = collections.Counter(r["name"] for r in t.runtime if t.passes(r, under=ops))
    for n, k in rt.items():
        C.eq(int(got.get((n, "CPU"), {}).get("count", -1)), k, "%s: --under: runtime %s" % (label, n))
    dev = collections.Counter(g["name"] for g in t.gpu if t.passes(g, gpu=True, under=ops))
    C.eq({n: int(r["count"]) for (n, d), r in got.items() if d != "CPU"}, dict(dev),
         "%s: --under: GPU rows are what the step launched" % label)
    C.check(("ProfilerStep*", "CPU") in got and int(got[("ProfilerStep*", "CPU")]["count"]) == 1,
            "%s: --under ProfilerStep#5: the step itself, once" % label)
    # --time-range: what starts in it
    s6 = t.step(6)
    tr = (s6["ts"] + 50000000, s6["end"])
    got = avg_rows(["--time-range", us(tr[0]) + ":" + us(tr[1]), inp])
    want = collections.Counter(s["name"] for s in cpu if t.passes(s, tr=tr))
    n_checked = 0
    for n, k in want.items():
        if n in AVG_DROPPED or n.startswith("ProfilerStep#") or same_name_nesting(t, n):
            continue
        n_checked += 1
        C.eq(int(got.get((n, "CPU"), {}).get("count", -1)), k, "%s: --time-range: %s count" % (label, n))
    C.check(n_checked > 5, "%s: --time-range: ops checked" % label)
    # --name leaves the totals of the scope: the footer is the same
    a = run(["averages", "--under", "ProfilerStep#5", inp]).stdout.decode().splitlines()[-2:]
    b = run(["averages", "--under", "ProfilerStep#5", "--name", "mul", inp]).stdout.decode().splitlines()[-2:]
    C.eq(b, a, "%s: --name: the totals are those of every event in scope" % label)
    # with --steps: what starts in step 6 and passes --name
    got = avg_rows(["--steps", "6", "--name", rx, inp])
    for n in plain:
        k = sum(1 for x in cpu if x["name"] == n and t.passes(x, tr=(s6["ts"], s6["end"] + 1)))
        C.eq(int(got.get((n, "CPU"), {}).get("count", 0)), k, "%s: --steps 6 --name: %s" % (label, n))
    p = run(["averages", "--name", "no such op", inp])
    C.check(b"no event passes" in p.stderr, "%s: averages: nothing passes: a warning" % label)


# ---------------------------------------------------------------- breakdown

def union(iv):
    total, cur = 0, None
    for a, b in sorted(iv):
        if cur is None or a > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0)


def check_breakdown(t, inp, label):
    for what, args, f in (("--name nccl", ["--name", "nccl"], {"name": "nccl"}),
                          ("--under ProfilerStep#5", ["--under", "ProfilerStep#5"],
                           {"under": t.ops("ProfilerStep#5")}),
                          ("--time-range", ["--time-range", us(t.step(6)["ts"]) + ":"],
                           {"tr": (t.step(6)["ts"], 1 << 62)})):
        sel = [g for g in t.gpu if t.passes(g, gpu=True, **f)]
        p = run(["breakdown", "--format", "json"] + args + [inp])
        r = json.loads(p.stdout)["ranks"][0]
        C.eq(r["kernels"], sum(1 for g in sel if g["kind"] == "kernel"), "%s: breakdown %s: kernels" % (label, what))
        C.eq(r["memory_ops"], sum(1 for g in sel if g["kind"] != "kernel"),
             "%s: breakdown %s: memcpys and memsets" % (label, what))
        C.eq(r["busy_ns"], union([(g["ts"], g["end"]) for g in sel]), "%s: breakdown %s: busy" % (label, what))
        C.eq((r["start_ns"], r["end_ns"]), (min(g["ts"] for g in sel), max(g["end"] for g in sel)),
             "%s: breakdown %s: the window is theirs" % (label, what))


# ---------------------------------------------------------------- --rank, stdin, errors

def check_ranks(tmp):
    files = sorted(os.listdir(DLRM))
    t3 = Trace(os.path.join(DLRM, files[3]))
    want = kernel_groups(t3, name="Kernel", under=t3.ops("ProfilerStep#.*"))
    C.check(want, "dlrm rank 3: kernels pass")
    C.eq(got_kernels(["--rank", "3", "--name", "Kernel", "--under", "ProfilerStep#.*", DLRM]), want,
         "a directory: --rank 3 with --name and --under: that rank's, filtered")
    p = run(["breakdown", "--format", "json", "--rank", "3", "--name", "Kernel", DLRM])
    r = json.loads(p.stdout)["ranks"]
    C.eq([(x["rank"], x["kernels"]) for x in r],
         [(3, sum(1 for g in t3.gpu if g["kind"] == "kernel" and re.search("Kernel", g["name"])))],
         "a directory: breakdown --rank 3 --name")


def check_stdin(t):
    with open(NCCL, "rb") as f:
        raw = f.read()
    want = kernel_groups(t, under=t.ops("ProfilerStep#6"))
    C.eq(got_kernels(["--under", "ProfilerStep#6", "-"], stdin=raw), want,
         "standard input: --under reads it twice (spooled)")


def check_errors():
    for cmd in (["averages"], ["kernels"], ["breakdown"], ["memtimeline"]):
        out = ["/tmp/never.json"] if cmd[0] == "memtimeline" else []
        for args, words in ((["--name", "(unclosed"], "--name '(unclosed'"),
                            (["--under", "a["], "--under 'a['"),
                            (["--time-range", "20:10"], "not before"),
                            (["--time-range", "10"], "want A:B"),
                            (["--time-range", "1:2x"], "unknown unit")):
            p = te.run_tool(cmd + args + [NCCL] + out)
            lines = te.stderr_lines(p)
            C.eq(p.returncode, 2, "%s %s: exit 2" % (cmd[0], " ".join(args)))
            C.check(len(lines) == 1 and words in lines[0], "%s %s: one line naming it" % (cmd[0], args[0]),
                    lines)


# ---------------------------------------------------------------- memtimeline

def mem_trace():
    """a step [0, 100] us on thread 1 with two allocations inside, one
    after it; frees inside and after; thread 2's op at the same time"""
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 10, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty_like", "pid": 1, "tid": 1, "ts": 20, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::zeros", "pid": 1, "tid": 1, "ts": 150, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::ones", "pid": 1, "tid": 2, "ts": 30, "dur": 5},
    ]
    blocks = [  # (thread, ts, addr, bytes)
        (1, 10.5, 16, 1000), (1, 20.5, 32, 500), (2, 31, 48, 64), (1, 60, 16, -1000),
        (1, 150.5, 64, 300), (2, 200, 32, -500), (1, 250, 64, -300), (2, 260, 48, -64),
    ]
    for tid, ts, addr, b in blocks:
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": tid, "ts": ts,
                   "args": {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": b}})
    return {"schemaVersion": 1, "traceEvents": ev}, blocks


def mem_expect(doc, blocks, keep_alloc, tr=None):
    """(peak, final) of the live bytes: the blocks whose allocation
    keep_alloc keeps, their events in tr; a block freed in tr whose
    allocation is not in it was live before (torch's PREEXISTING)"""
    t = Trace(doc=doc)
    chosen = {addr for tid, ts, addr, b in blocks
              if b > 0 and keep_alloc(t, (1, tid), ns(Decimal(str(ts))))}
    ev = [(ns(Decimal(str(ts))), addr, b) for tid, ts, addr, b in blocks if addr in chosen]
    if tr:
        ev = [e for e in ev if tr[0] <= e[0] < tr[1]]
    allocated = {a for ts, a, b in ev if b > 0}
    live = sum(-b for ts, a, b in ev if b < 0 and a not in allocated)
    peak = live
    for ts, a, b in sorted(ev):
        live += b
        peak = max(peak, live)
    return peak, live


def check_memtimeline(tmp):
    doc, blocks = mem_trace()
    path = os.path.join(tmp, "mem.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, "mem_out.json")

    def under_step(t, th, ts):
        return Trace.enclosed(t.ops("ProfilerStep#1"), th, ts, ts)

    def name_empty(t, th, ts):  # an op around it whose name has "empty"
        return any(s["thread"] == th and s["ts"] <= ts <= s["end"] and "empty" in s["name"]
                   for s in t.slices)

    cases = (("none", [], lambda t, th, ts: True, None),
             ("--under ProfilerStep#1", ["--under", "ProfilerStep#1"], under_step, None),
             ("--name empty", ["--name", "empty"], name_empty, None),
             ("--under aten::ones", ["--under", "aten::ones"],
              lambda t, th, ts: Trace.enclosed(t.ops("aten::ones"), th, ts, ts), None),
             ("--time-range 0:100", ["--time-range", "0:100"], lambda t, th, ts: True, (0, 100000)),
             ("--time-range 50:300", ["--time-range", "50:300"], lambda t, th, ts: True,
              (50000, 300000)))
    db = os.path.join(tmp, "mem.db")
    C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "ingest the memory trace")
    for what, args, keep, tr in cases:
        want = mem_expect(doc, blocks, keep, tr)
        for inp in (path, db):
            run(["memtimeline", inp, out] + args)
            with open(out) as f:
                times, sizes = json.load(f)
            got = (max(sum(r) for r in sizes), sum(sizes[-1]))
            C.eq(got, want, "memtimeline %s %s: peak and final bytes" % (what, inp[-7:]))
        if tr:
            C.check(all(tr[0] // 1000 <= x < tr[1] // 1000 for x in times[1:]),
                    "memtimeline %s: points in the range" % what, times)


# ---------------------------------------------------------------- MTIA

def check_mtia(tmp):
    """MTIA: mtia_runtime calls launch mtia_ccp_events as CUDA calls launch
    kernels (a hand-made trace, Kineto's shapes: runFunction, correlation,
    ac2g flows, device pid and stream)"""
    rf = "runFunction - job_prep_and_submit_for_execution"
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": 0, "dur": 55},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 10, "dur": 40},
        {"ph": "X", "cat": "mtia_runtime", "name": rf, "pid": 7, "tid": 7, "ts": 20, "dur": 5,
         "args": {"correlation": 1}},
        {"ph": "s", "id": 1, "pid": 7, "tid": 7, "ts": 20, "cat": "ac2g", "name": "ac2g"},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": 60, "dur": 30},
        {"ph": "X", "cat": "mtia_runtime", "name": rf, "pid": 7, "tid": 7, "ts": 70, "dur": 5,
         "args": {"correlation": 2}},
        {"ph": "X", "cat": "mtia_ccp_events", "name": "mm-dtype_Float", "pid": 9, "tid": 408, "ts": 100,
         "dur": 30, "args": {"correlation": 1, "stream": 102}},
        {"ph": "f", "id": 1, "pid": 9, "tid": 408, "ts": 100, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        {"ph": "X", "cat": "mtia_ccp_events", "name": "add-dtype_Float", "pid": 9, "tid": 408, "ts": 140,
         "dur": 10, "args": {"correlation": 2, "stream": 102}},
        {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 9, "tid": 801, "ts": 160,
         "dur": 2, "args": {"size": 16}},
    ]
    path = os.path.join(tmp, "mtia_rank_0.json")
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "mtia:hccl", "rank": 0},
                   "traceEvents": ev}, f)
    got = {r["name"]: int(r["total_ns"]) for r in csv_rows(
        ["kernels", "--by", "op", "--only", "kernels", "--format", "csv", path])}
    C.eq(got, {"aten::mm": 30000, "aten::add": 10000, "[no CPU op]": 2000},
         "MTIA: CCP events are kernels, grouped by the op of their mtia_runtime call")
    C.eq(got_kernels(["--under", "aten::mm", path]), {"mm-dtype_Float": (1, 30000)},
         "MTIA: --under through the runtime call")
    C.eq(got_kernels(["--time-range", ":60", path]), {"mm-dtype_Float": (1, 30000)},
         "MTIA: --time-range by the launch")
    r = json.loads(run(["breakdown", "--format", "json", path]).stdout)["ranks"][0]
    C.eq((r["device"], r["kernels"], r["busy_ns"]), (9, 3, 42000), "MTIA: breakdown of the device")
    got = csv_rows(["kernels", "--by", "runtime", "--format", "csv", path])
    C.eq([(x["name"], int(x["count"])) for x in got], [(rf, 2)], "MTIA: runtime calls")


# ---------------------------------------------------------------- a file read twice

def check_relinked(tmp):
    """every kernel written before the runtime calls and ops, more than the
    ingest's ring holds: the file is read twice (TT_ROWS_RELINK) and a
    kernel's launch (its call's start and thread) comes from the first
    reading's fix-ups; the calls' tid written as text"""
    n, ev = 6000, []
    for i in range(n):
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % (i % 3), "pid": 0, "tid": 7,
                   "ts": 100000 + 10 * i, "dur": 5, "args": {"correlation": i + 1}})
    for s in range(3):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 5,
                   "tid": 12, "ts": s * 20000, "dur": 19000})
    for i in range(n):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5,
                   "tid": "12" if i % 2 else 13, "ts": 10 * i, "dur": 2,
                   "args": {"correlation": i + 1}})
    doc = {"schemaVersion": 1, "traceEvents": ev}
    path = os.path.join(tmp, "late.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    t = Trace(doc=doc)
    for what, args, f in (("--under ProfilerStep#1", ["--under", "ProfilerStep#1"],
                           {"under": t.ops("ProfilerStep#1")}),
                          ("--time-range 25000:41000", ["--time-range", "25000:41000"],
                           {"tr": (25000000, 41000000)})):
        want = kernel_groups(t, **f)
        p = te.run_tool(["kernels", "--only", "kernels", "--format", "csv"] + args + [path],
                        env={"TT_DEBUG_KERNELS": "1"})
        got = {r["name"]: (int(r["count"]), int(r["total_ns"]))
               for r in csv.DictReader(io.StringIO(p.stdout.decode()))}
        C.check(b"read twice" in p.stderr, "late links: %s reads the file twice" % what,
                p.stderr.decode()[-300:])
        C.check(want and sum(v[0] for v in want.values()) < n / 2, "late links: %s selects some" % what)
        C.eq(got, want, "late links: kernels %s, by the fix-ups' launches" % what)
        r = json.loads(run(["breakdown", "--format", "json"] + args + [path]).stdout)["ranks"][0]
        C.eq(r["kernels"], sum(v[0] for v in want.values()), "late links: breakdown %s" % what)


def main():
    if not os.path.exists(NCCL) or not os.path.isdir(DLRM):
        C.skip("shared test data", "missing")
        return C.finish()
    t = Trace(NCCL)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "n.db")
        C.eq(te.run_tool(["ingest", "-q", db, NCCL]).returncode, 0, "ingest")
        for inp, label in ((NCCL, "file"), (db, "database")):
            C.section(label + ": kernels", check_kernels, t, inp, label)
            C.section(label + ": breakdown", check_breakdown, t, inp, label)
        C.section("file: averages", check_averages, t, NCCL, "file")
        C.section("database: averages --under", lambda: C.eq(
            avg_rows(["--under", "ProfilerStep#4", db]), avg_rows(["--under", "ProfilerStep#4", NCCL]),
            "averages --under: a database as the file"))
        C.section("ranks", check_ranks, tmp)
        C.section("stdin", check_stdin, t)
        C.section("errors", check_errors)
        C.section("memtimeline", check_memtimeline, tmp)
        C.section("mtia", check_mtia, tmp)
        C.section("late links", check_relinked, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
