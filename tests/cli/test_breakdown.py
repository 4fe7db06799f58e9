#!/usr/bin/env python3
"""tracetool breakdown against an independent standard-library computation.

From the trace JSON alone (timestamps parsed as Decimal, so exact to the ns):
per rank and device, the union of kernel / memcpy / memset intervals (busy),
of non-communication kernels (compute), of NCCL kernels (communication), of
memcpy / memset (memory), the window, idle and its split into host wait,
kernel wait and other (HTA's rule), the overlap of communication with
compute by a two-pointer intersection of the merged lists; per step
(activities attributed by their runtime call's start to ProfilerStep#N);
launch delay (start - runtime call start) and runtime-call duration
percentiles per kernel family with Python's statistics (median and
quantiles(method='inclusive'), the linear interpolation tracetool
documents). Then the formats, bad input and a trace without GPU activity.
"""

import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("breakdown")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.environ.get("TT_SHARED", os.path.join(ROOT, "..", "shared"))
KERNEL_WAIT = 30000
COMM = re.compile(r"^(nccl|rccl|hccl)|ncclKernel|ncclDevKernel")
KINDS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")


def shared(rel):
    return os.path.join(SHARED, "testdata", rel)


def tool(*args):
    p = te.run_tool(list(args))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def ns(v):
    return int((Decimal(v) * 1000).to_integral_value())


# ---------------------------------------------------------------- the trace

class Act(object):
    __slots__ = ("kind", "name", "device", "stream", "ts", "end", "rt_ts", "rt_dur")


def load(path):
    """GPU activities (with their runtime call) and ProfilerStep spans"""
    raw = te.read_bytes(path).decode("utf-8", "replace")
    doc = json.loads(raw, strict=False, parse_float=Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    calls, acts, steps = {}, [], []
    for e in evs:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        a = e.get("args") or {}
        cat = e.get("cat")
        if cat in RUNTIME_CATS and "correlation" in a:
            calls.setdefault(a["correlation"], []).append((ns(e["ts"]), ns(e.get("dur", 0))))
        elif cat in KINDS and "dur" in e:
            x = Act()
            x.kind, x.name = KINDS[cat], e.get("name", "")
            x.device = a.get("device", e.get("pid"))
            x.stream = a.get("stream", e.get("tid"))
            x.ts = ns(e["ts"])
            x.end = x.ts + max(ns(e["dur"]), 0)
            x.rt_ts = x.rt_dur = None
            acts.append((x, a.get("correlation")))
        elif re.match(r"ProfilerStep#\d+$", e.get("name", "")) and "dur" in e:
            steps.append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"][13:])))
    out = []
    for x, corr in acts:
        # the call of that id that started last at or before the activity, else the first
        c = calls.get(corr)
        if c:
            before = [t for t in c if t[0] <= x.ts]
            t = max(before) if before else min(c)
            x.rt_ts, x.rt_dur = t
        out.append(x)
    steps.sort()
    disjoint = []
    for s in steps:
        if not disjoint or s[0] >= disjoint[-1][1]:
            disjoint.append(s)
    return out, disjoint


def step_of(x, steps):
    t = x.rt_ts if x.rt_ts is not None else x.ts
    for s in steps:
        if s[0] <= t < s[1]:
            return s[2]
    return None


def merged(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(m):
    return sum(b - a for a, b in m)


def intersect(p, q):
    i = j = tot = 0
    while i < len(p) and j < len(q):
        lo, hi = max(p[i][0], q[j][0]), min(p[i][1], q[j][1])
        if hi > lo:
            tot += hi - lo
        if p[i][1] < q[j][1]:
            i += 1
        else:
            j += 1
    return tot


def cls(x):
    if x.kind != "kernel":
        return "memory"
    return "comm" if COMM.search(x.name) else "compute"


def expect(acts, kernel_wait=KERNEL_WAIT):
    """what tracetool should say of one group of activities"""
    allm = merged([(x.ts, x.end) for x in acts])
    comp = merged([(x.ts, x.end) for x in acts if cls(x) == "compute"])
    comm = merged([(x.ts, x.end) for x in acts if cls(x) == "comm"])
    mem = merged([(x.ts, x.end) for x in acts if cls(x) == "memory"])
    start, end = min(x.ts for x in acts), max(x.end for x in acts)
    host = kwait = other = 0
    for k in range(1, len(allm)):
        lo, hi = allm[k - 1][1], allm[k][0]
        queued = any(x.rt_ts is None or x.rt_ts <= lo for x in acts if x.ts == hi)
        if not queued:
            host += hi - lo
        elif hi - lo < kernel_wait:
            kwait += hi - lo
        else:
            other += hi - lo
    ov = intersect(comm, comp)
    return {"start_ns": start, "end_ns": end, "window_ns": end - start, "busy_ns": length(allm),
            "idle_ns": end - start - length(allm), "compute_ns": length(comp),
            "comm_ns": length(comm), "memory_ns": length(mem), "overlap_ns": ov,
            "exposed_comm_ns": length(comm) - ov, "host_wait_ns": host, "kernel_wait_ns": kwait,
            "other_idle_ns": other, "kernels": sum(x.kind == "kernel" for x in acts),
            "comm_kernels": sum(cls(x) == "comm" for x in acts),
            "memory_ops": sum(x.kind != "kernel" for x in acts)}


def check_row(got, want, label):
    for k, v in want.items():
        C.eq(got.get(k), v, "%s: %s" % (label, k))
    if want["comm_ns"]:
        pct = got.get("overlap_pct")
        C.check(pct is not None and
                abs(pct - round(100.0 * want["overlap_ns"] / want["comm_ns"], 2)) < 0.006,
                "%s: overlap_pct" % label, (pct, want))
    else:
        C.eq(got["overlap_pct"], None, "%s: overlap_pct without communication" % label)


def by_device(acts):
    out = {}
    for x in acts:
        out.setdefault(x.device, []).append(x)
    return out


# ------------------------------------------------- kernel families (diff's keys)

DTYPES = {"float": "f32", "f32": "f32", "half": "f16", "f16": "f16", "double": "f64",
          "f64": "f64", "bfloat16": "bf16", "bf16": "bf16", "__nv_bfloat16": "bf16",
          "int8_t": "i8", "i8": "i8", "uint8_t": "u8", "u8": "u8", "int32_t": "i32",
          "i32": "i32", "uint32_t": "u32", "u32": "u32", "int64_t": "i64", "i64": "i64",
          "uint64_t": "u64", "u64": "u64", "fp8_e4m3": "f8e4m3", "fp8_e5m2": "f8e5m2"}
ARCH = ("ampere", "volta", "turing", "hopper", "maxwell", "pascal", "kepler", "blackwell")
DIGITS = set("0123456789")


def fields(s, mx):
    """(start, text) of the '_'-separated fields before '(' (diff_keys.c)"""
    out, i = [], 0
    while i < len(s) and s[i] != "(" and len(out) < mx:
        e = i
        while e < len(s) and s[e] not in "_(":
            e += 1
        out.append((i, s[i:e]))
        i = e + 1 if e < len(s) and s[e] == "_" else e
    return out


def nccl_family(name):
    for p in ("ncclKernel_", "ncclDevKernel_"):
        if name.startswith(p):
            rest = name[len(p):]
            break
    else:
        return None
    f = fields(rest, 12)
    ty = None
    for k in range(1, len(f)):
        ln = len(f[k][1]) + 2 if k + 1 < len(f) and f[k + 1][1][:1] == "t" and \
            len(f[k + 1][1]) == 1 else len(f[k][1])
        t = rest[f[k][0]:f[k][0] + ln]
        if t in DTYPES:
            ty = DTYPES[t]
    out = "nccl:" + (f[0][1].lower() if f and f[0][1] else "generic")
    return out + (":" + ty if ty else "")


def strip_signature(name):
    out, depth, sig, i = [], 0, False, 0
    while i < len(name):
        c = name[i]
        if name.startswith("(anonymous namespace)::", i):
            i += 23
            continue
        i += 1
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth:
            pass
        elif c == "(":
            sig = True
            break
        else:
            out.append(c)
    s = "".join(out).rstrip(" ")
    if sig and " " in s:
        s = s[s.rindex(" ") + 1:]
    return s


def is_tile(t):
    if len(t) == 2 and t[0] in "nt" and t[1] in "nt":
        return True
    if len(t) > 5 and t.startswith("align") and set(t[5:]) <= DIGITS:
        return True
    return re.fullmatch(r"(?:sliced)?\d+(?:x\d+)+x?", t) is not None and \
        not (t.startswith("sliced") and len(t) <= 6)


def family(x):
    if x.kind != "kernel":
        w = x.name.split(" ", 1)
        ck = w[1].lstrip("(").split(" ")[0].split(")")[0] if len(w) == 2 and \
            x.name[:6] in ("Memcpy", "Memset") else ""
        return "%s %s" % (x.kind, ck or "?")
    n = nccl_family(x.name)
    if n:
        return n
    s = strip_signature(x.name)
    p = s.rfind(":")
    prefix, base = (s[:p + 1], s[p + 1:]) if p >= 0 else ("", s)
    f = [t for _, t in fields(base, 64)]
    last = len(f)
    if len(f) > 2 and base.startswith("triton_") and f[-1] and set(f[-1]) <= DIGITS:
        last -= 1
    out, prev = prefix, False
    for k in range(last):
        tok, tile = f[k], False
        if k == 0 and (tok in ARCH or (len(tok) > 2 and tok[:2] == "sm" and set(tok[2:]) <= DIGITS)):
            tok = "ARCH"
        elif is_tile(tok):
            tok, tile = "TILE", True
        if tile and prev:
            continue
        out += ("_" if k else "") + tok
        prev = tile
    return out or x.name or "?"


def check_launches(doc, acts, label):
    fams = {}
    for x in acts:
        if x.rt_ts is not None:
            fams.setdefault(family(x), []).append(x)
    got = {l["family"]: l for l in doc["launches"]}
    C.eq(sorted(got), sorted(fams), "%s: launch families" % label)
    for f, xs in fams.items():
        g = got.get(f)
        if not g:
            continue
        d = sorted(x.ts - x.rt_ts for x in xs)
        r = sorted(x.rt_dur for x in xs)
        C.eq(g["count"], len(d), "%s %s: launches" % (label, f[:50]))
        C.eq(g["delay_max_ns"], d[-1], "%s %s: delay max" % (label, f[:50]))
        C.eq(g["runtime_max_ns"], r[-1], "%s %s: call max" % (label, f[:50]))
        C.check(abs(g["delay_p50_ns"] - float(statistics.median(d))) < 0.05,
                "%s %s: delay p50" % (label, f[:50]), (g["delay_p50_ns"], statistics.median(d)))
        C.check(abs(g["runtime_p50_ns"] - float(statistics.median(r))) < 0.05,
                "%s %s: call p50" % (label, f[:50]), (g["runtime_p50_ns"], statistics.median(r)))
        if len(d) > 1:
            q = statistics.quantiles(d, n=20, method="inclusive")[18]
            C.check(abs(g["delay_p95_ns"] - float(q)) < 0.05, "%s %s: delay p95" % (label, f[:50]),
                    (g["delay_p95_ns"], q))
            q = statistics.quantiles(r, n=20, method="inclusive")[18]
            C.check(abs(g["runtime_p95_ns"] - float(q)) < 0.05, "%s %s: call p95" % (label, f[:50]),
                    (g["runtime_p95_ns"], q))
    worst = max((x.ts - x.rt_ts for x in acts if x.rt_ts is not None), default=None)
    if worst is not None:
        C.eq(doc["worst_launches"][0]["delay_ns"], worst, "%s: the worst launch" % label)


def check_families(doc, acts, nunits, label):
    tot = {}
    for x in acts:
        t = tot.setdefault(family(x), [0, 0])
        t[0] += 1
        t[1] += x.end - x.ts
    got = {f["family"]: [f["count"], f["total_ns"]] for f in doc["families"]}
    C.eq(got, tot, "%s: family counts and totals" % label)
    C.eq(len(doc["ranks"]), nunits, "%s: rank rows" % label)


# ---------------------------------------------------------------- checks

def check_trace(rel, launches, steps_too):
    path = shared(rel)
    if not os.path.exists(path):
        C.skip(rel, "shared trace missing")
        return
    acts, steps = load(path)
    rc, out, err = tool("breakdown", "--format", "json", path)
    if not C.eq(rc, 0, "%s: exit 0 (%s)" % (rel, err.strip())):
        return
    doc = json.loads(out)
    devs = by_device(acts)
    C.eq(sorted(r["device"] for r in doc["ranks"]), sorted(devs), "%s: devices" % rel)
    for r in doc["ranks"]:
        check_row(r, expect(devs.get(r["device"], [])), "%s device %s" % (rel, r["device"]))
    check_families(doc, acts, len(devs), rel)
    if launches:
        check_launches(doc, acts, rel)
    if steps_too and steps:
        rc, out, err = tool("breakdown", "--format", "json", "--by", "step", path)
        doc = json.loads(out)
        want = {}
        for x in acts:
            s = step_of(x, steps)
            if s is not None:
                want.setdefault((x.device, s), []).append(x)
        C.eq(sorted((r["device"], r["step"]) for r in doc["steps"]), sorted(want),
             "%s: step rows" % rel)
        for r in doc["steps"]:
            k = (r["device"], r["step"])
            if k in want:
                check_row(r, expect(want[k]), "%s step %s" % (rel, r["step"]))
        # --steps A-B: the rank row is the union of those steps' activities
        a, b = steps[0][2], steps[min(1, len(steps) - 1)][2]
        rc, out, err = tool("breakdown", "--format", "json", "--steps", "%d-%d" % (a, b), path)
        doc = json.loads(out)
        sel = [x for x in acts if step_of(x, steps) is not None and a <= step_of(x, steps) <= b]
        for r in doc["ranks"]:
            check_row(r, expect([x for x in sel if x.device == r["device"]]),
                      "%s --steps %d-%d" % (rel, a, b))


def check_multi_rank():
    """dlrm_8rank: a directory of 8 per-rank traces, and its database"""
    d = shared("param/dlrm_8rank/kineto")
    if not os.path.isdir(d):
        C.skip("dlrm_8rank", "shared traces missing")
        return
    want = {}
    for f in te.trace_files(d):
        rank = int(re.search(r"worker(\d+)", os.path.basename(f)).group(1))
        want[rank] = load(f)[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "d.db")
        rc, _, err = tool("ingest", "-q", db, d)
        C.eq(rc, 0, "dlrm: ingest (%s)" % err.strip())
        outs = []
        for src in (d, db):
            rc, out, err = tool("breakdown", "--format", "json", src)
            if C.eq(rc, 0, "dlrm %s: exit 0 (%s)" % (src, err.strip())):
                outs.append(json.loads(out))
        if len(outs) == 2:
            C.eq(outs[0]["ranks"], outs[1]["ranks"], "dlrm: directory == database")
        doc = outs[-1] if outs else {"ranks": []}
        C.eq(sorted(r["rank"] for r in doc["ranks"]), sorted(want), "dlrm: one row per rank")
        for r in doc["ranks"]:
            acts = want.get(r["rank"], [])
            devs = by_device(acts)
            C.eq([r["device"]], sorted(devs), "dlrm rank %s: device" % r["rank"])
            check_row(r, expect(acts), "dlrm rank %s" % r["rank"])
        # the skew: max / median of the step times, the slowest rank named
        st = sorted(r["step_ns"] for r in doc["ranks"])
        med = statistics.median(st)
        slow = max(doc["ranks"], key=lambda r: r["step_ns"])
        C.check(abs(doc["step_skew"] - round(st[-1] / med, 4)) < 1e-4, "dlrm: step skew",
                (doc["step_skew"], st[-1] / med))
        C.eq(doc["slowest_trace_id"], slow["trace_id"], "dlrm: slowest rank named")
        all_acts = [x for v in want.values() for x in v]
        check_families(doc, all_acts, len(want), "dlrm")
        check_launches(doc, all_acts, "dlrm")
        # --rank on a directory and on the database
        for src in (d, db):
            rc, out, _ = tool("breakdown", "--format", "json", "--rank", "3", src)
            C.check(rc == 0 and [r["rank"] for r in json.loads(out)["ranks"]] == [3],
                    "dlrm --rank 3 on %s" % os.path.basename(src))
        check_formats(db)


def check_formats(db):
    rc, out, _ = tool("breakdown", "--format", "csv", db)
    rows = list(csv.DictReader(io.StringIO(out)))
    doc = json.loads(tool("breakdown", "--format", "json", db)[1])
    C.check(rc == 0 and len(rows) == len(doc["ranks"]), "csv: one row per rank", len(rows))
    if rows:
        C.eq(list(rows[0])[:5], ["trace_id", "rank", "device", "steps", "step_ns"],
             "csv: header starts with the ids")
        C.eq([int(r["busy_ns"]) for r in rows], [r["busy_ns"] for r in doc["ranks"]],
             "csv busy_ns == json busy_ns")
        C.eq([int(r["idle_ns"]) for r in rows], [r["idle_ns"] for r in doc["ranks"]],
             "csv idle_ns == json idle_ns")
    for by, key in (("step", "steps"), ("stream", "streams")):
        rc, out, _ = tool("breakdown", "--format", "csv", "--by", by, db)
        rows = list(csv.DictReader(io.StringIO(out)))
        j = json.loads(tool("breakdown", "--format", "json", "--by", by, db)[1])
        C.check(rc == 0 and len(rows) == len(j[key]) and by in rows[0],
                "csv --by %s: one row per %s" % (by, by), len(rows))
    rc, out, _ = tool("breakdown", db)
    C.check(rc == 0 and out.startswith("GPU time per rank and device") and
            "Busy (ms)" in out and "Host wait (ms)" in out and "step time skew" in out and
            "Kernel families" in out and "Worst launches" in out, "table: sections", out[:300])
    rank_lines = [ln for ln in out.split("\n\n")[1].splitlines()[2:]]
    C.eq(len(rank_lines), len(doc["ranks"]), "table: one line per rank")
    rc, out, _ = tool("breakdown", "--format", "markdown", db)
    C.check(rc == 0 and out.startswith("### GPU time per rank") and "|---" in out,
            "markdown: headings and tables", out[:200])
    rc, out, _ = tool("breakdown", "--format", "json", "--row-limit", "2", db)
    j = json.loads(out)
    C.check(rc == 0 and len(j["families"]) == 2 and len(j["launches"]) == 2 and
            len(j["ranks"]) == 2, "--row-limit 2")
    rc, out, _ = tool("breakdown", "--format", "json", "--kernel-wait", "0", db)
    j = json.loads(out)
    C.check(rc == 0 and all(r["kernel_wait_ns"] == 0 for r in j["ranks"]) and
            j["kernel_wait_ns"] == 0, "--kernel-wait 0: no kernel wait")


def check_errors():
    rc, _, err = tool("breakdown", "/nonexistent/x.json")
    C.check(rc == 4 and err.count("\n") == 1, "missing file: exit 4", (rc, err))
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write("this is not json")
        rc, _, err = tool("breakdown", bad)
        C.check(rc == 3 and err.startswith("tracetool: ") and err.count("\n") == 1,
                "not JSON: exit 3", (rc, err))
        for arg in ("5-3", "x", "-2", "3-"):
            rc, _, err = tool("breakdown", "--steps", arg, bad)
            C.check(rc == 2 and "--help" in err, "--steps %s: exit 2" % arg, (rc, err))
        rc, _, err = tool("breakdown", "--by", "nonsense", bad)
        C.eq(rc, 2, "unknown --by: exit 2")
        rc, _, err = tool("breakdown", "--kernel-wait", "-1", bad)
        C.eq(rc, 2, "--kernel-wait -1: exit 2")
        # no GPU activity: a CPU-only trace, and steps that select nothing
        cpu = os.path.join(d, "cpu.json")
        with open(cpu, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add",
                                        "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}, f)
        rc, out, err = tool("breakdown", cpu)
        C.check(rc == 4 and out == "" and "no GPU activity" in err and err.count("\n") == 1,
                "no GPU activity: exit 4 with one line", (rc, err))
        # --html never replaces a trace of an input directory, nor one a link
        # leads to (issue 29: it replaced dir/a.json)
        tdir = os.path.join(d, "traces")
        os.mkdir(tdir)
        a = os.path.join(tdir, "a.json")
        with open(a, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
                                        "tid": 7, "ts": 1, "dur": 2}]}, f)
        with open(a, "rb") as f:
            before = f.read()
        link = os.path.join(d, "link.html")
        os.symlink(a, link)
        for args, label in (([a, tdir], "a trace in the input directory"),
                            ([link, a], "a link to the input"), ([link, tdir], "a link into it")):
            rc, out, err = tool("breakdown", "--html", *args)
            C.check(rc == 2 and out == "" and err.count("\n") == 1 and "a.json" in err
                    and "refusing to overwrite" in err, "--html over %s: exit 2, one line" % label,
                    (rc, err))
        with open(a, "rb") as f:
            C.check(f.read() == before, "--html: the input directory's trace is untouched")
    p = shared("hta/df_index_resolver/df_index_resolver.json.gz")
    if os.path.exists(p):
        rc, _, err = tool("breakdown", "--steps", "900000", p)
        C.check(rc == 4 and "ProfilerStep#900000" in err, "--steps outside the trace: exit 4",
                (rc, err))


def check_docs():
    """README's synopsis lists the options of --help's usage line"""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = text.split("## Commands", 1)[1].split("```", 2)[1]
    lines, on = [], False
    for line in block.splitlines():
        if line.startswith("tracetool "):
            on = line.startswith("tracetool breakdown")
        if on:
            lines.append(line)
    usage = tool("breakdown", "--help")[1].split("\n", 1)[0]
    opt = re.compile(r"--([a-z][a-z-]*)")
    C.eq(set(opt.findall(" ".join(lines))), set(opt.findall(usage)),
         "README synopsis == --help usage options")
    C.check("### `tracetool breakdown INPUT|DB`" in text, "README has the breakdown section")


def main():
    if not os.path.exists(te.tracetool_path()):
        C.skip("tracetool", "not built")
        return C.finish()
    C.section("df_index_resolver", check_trace, "hta/df_index_resolver/df_index_resolver.json.gz",
              True, True)
    C.section("nccl_parser_config", check_trace, "hta/nccl_parser_config/nccl_data.json.gz",
              True, True)
    C.section("dlrm_8rank", check_multi_rank)
    C.section("errors", check_errors)
    C.section("docs", check_docs)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
