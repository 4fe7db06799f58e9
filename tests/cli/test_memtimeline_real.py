#!/usr/bin/env python3
"""The memory timeline right on every real trace (issue 11), against totals
computed here from the trace with the standard library only:

- kineto/tb_plugin_2021-06 (PyTorch 1.9: [memory] events with Bytes, no Addr,
  no totals): the timeline's total at every point is the running sum of Bytes
  of the device (peak 2.60 GiB on cuda:0), for cuda:0 and for cpu;
- hta/df_index_resolver (Addr, Total Allocated): the total, including the
  "live before the trace" memory, equals Total Allocated after every point;
- a HIP trace made here ("Device Type" 6): plotted by default (the device with
  the most memory events) and with --device hip:0, the same;
- --device takes every c10 device name and refuses a bad one (exit 2);
- a warning on stderr when the categories cover less than half of the peak;
- the HTML names the file by its base name, not its absolute path.
"""

import collections
import decimal
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("memtimeline_real")
SHARED = te.shared_dir()
TB = os.path.join(SHARED, "testdata", "kineto", "tb_plugin_2021-06",
                  "worker0.1623143089861.pt.trace.json.gz")
DF = os.path.join(SHARED, "testdata", "hta", "df_index_resolver", "df_index_resolver.json.gz")
TOOL = te.tracetool_path()
GIB = 1024 ** 3


def run(*args):
    return subprocess.run([TOOL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


def load(path):
    raw = te.read_bytes(path)
    doc = json.loads(raw, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def t_us(ts):
    """torch's int(t_ns / 1000), from the trace's ts in µs (exact decimal)"""
    ns = int(decimal.Decimal(ts) * 1000)
    return int(ns / 1000)


def memory_events(events, dtype, did):
    out = []
    for i, e in enumerate(events):
        a = e.get("args") or {}
        if e.get("name") == "[memory]" and a.get("Device Type") == dtype and \
                a.get("Device Id") == did and "ts" in e:
            out.append((t_us(e["ts"]), i, a))
    out.sort(key=lambda x: (x[0], x[1]))  # stable: file order within a µs
    return out


def expected_points(mem, value):
    """[(t, value after the last event at t)] with value(running, args)"""
    pts, run_sum = [], 0
    for t, _, a in mem:
        run_sum += int(a["Bytes"])
        v = value(run_sum, a)
        if pts and pts[-1][0] == t:
            pts[-1] = (t, v)
        else:
            pts.append((t, v))
    return pts


def timeline(trace, out, *opts):
    cp = run("memtimeline", *opts, trace, out)
    C.eq(cp.returncode, 0, "memtimeline %s %s: exit 0" % (" ".join(opts), os.path.basename(out)))
    if cp.returncode != 0:
        print(cp.stderr.decode()[-500:])
        return None, cp
    with open(out) as f:
        times, sizes = json.load(f)
    return (times, [sum(s[1:]) for s in sizes]), cp


def same_curve(got, want, label):
    times, totals = got
    # torch's first point may repeat the first time (the PREEXISTING point
    # re-stamped): compare the value after the last point at each time
    last = collections.OrderedDict()
    for t, v in zip(times, totals):
        last[t] = v
    got_pts = list(last.items())
    C.eq(len(got_pts), len(want), label + ": points")
    bad = [(g, w) for g, w in zip(got_pts, want) if g != w]
    C.check(not bad, label + ": total at every point", bad[:3])


def check_tb(d):
    events = load(TB)
    for dev, (dtype, did), opts in (("cuda:0", (1, 0), ()), ("cuda:0", (1, 0), ("--device", "cuda:0")),
                                    ("cpu", (0, -1), ("--device", "cpu"))):
        mem = memory_events(events, dtype, did)
        want = expected_points(mem, lambda s, a: s)
        got, cp = timeline(TB, os.path.join(d, "tb.json"), *opts)
        if got is None:
            continue
        same_curve(got, want, "tb_plugin_2021-06 %s %s" % (dev, " ".join(opts)))
        if dev == "cuda:0":
            peak = max(v for _, v in want)
            C.check(abs(peak / GIB - 2.60) < 0.005, "cuda:0 running-sum peak is 2.60 GiB", peak)
            C.eq(max(got[1]), peak, "the timeline's peak is the running sum's")
            err = cp.stderr.decode()
            C.check("warning" in err and "categor" in err,
                    "uncategorised peak: a warning on stderr", err)


def check_df(d):
    events = load(DF)
    mem = memory_events(events, 1, 1)
    want = expected_points(mem, lambda s, a: int(a["Total Allocated"]))
    got, _ = timeline(DF, os.path.join(d, "df.json"))
    if got is not None:
        same_curve(got, want, "df_index_resolver cuda:1 (with the memory live before)")
    got, _ = timeline(DF, os.path.join(d, "df.json"), "--device", "cuda:1")
    if got is not None:
        same_curve(got, want, "df_index_resolver --device cuda:1")
    html = os.path.join(d, "df_index_resolver.html")
    cp = run("memtimeline", DF, html)
    if C.check(cp.returncode == 0, "df .html: exit 0", cp.stderr):
        page = open(html, encoding="utf-8").read()
        C.check("df_index_resolver.json.gz" in page and os.path.dirname(DF) not in page,
                "the page names the file by its base name only")


def make_hip_trace(path):
    """a small ROCm-style trace: HIP memory events (Device Type 6) and a few
    CPU ones, each allocation freed, with the allocator's totals"""
    events, t, live, total = [], 1_000_000, [], 0
    events.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 7,
                   "ts": t, "dur": 5000})
    addr = 0x7f0000000000
    for i in range(40):
        size = 512 * (1 + i % 5)
        total += size
        events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                       "ts": t + 10 * i, "args": {"Device Type": 6, "Device Id": 0,
                                                  "Addr": addr + 4096 * i, "Bytes": size,
                                                  "Total Allocated": total,
                                                  "Total Reserved": 1 << 21}})
        live.append((addr + 4096 * i, size))
        if i % 3 == 2:
            a, s = live.pop(0)
            total -= s
            events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                           "ts": t + 10 * i + 5, "args": {"Device Type": 6, "Device Id": 0,
                                                          "Addr": a, "Bytes": -s,
                                                          "Total Allocated": total,
                                                          "Total Reserved": 1 << 21}})
    for i in range(3):
        events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                       "ts": t + 1000 + i, "args": {"Device Type": 0, "Device Id": -1,
                                                    "Addr": 0x1000 + i, "Bytes": 64,
                                                    "Total Allocated": 64 * (i + 1),
                                                    "Total Reserved": 4096}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)


def check_hip(d):
    path = os.path.join(d, "rocm_trace.json")
    make_hip_trace(path)
    events = load(path)
    want = expected_points(memory_events(events, 6, 0), lambda s, a: int(a["Total Allocated"]))
    got_default, _ = timeline(path, os.path.join(d, "hip1.json"))
    got_hip, _ = timeline(path, os.path.join(d, "hip2.json"), "--device", "hip:0")
    if got_default is not None:
        same_curve(got_default, want, "HIP trace, default device")
    if got_hip is not None:
        same_curve(got_hip, want, "HIP trace, --device hip:0")
    for out in ("hip.png", "hip.html"):
        cp = run("memtimeline", "--device", "hip:0", path, os.path.join(d, out))
        C.eq(cp.returncode, 0, "HIP trace to %s: exit 0" % out)
    cp = run("memtimeline", "--device", "xpu:0", path, os.path.join(d, "x.json"))
    C.check(cp.returncode == 4 and b"xpu:0" in cp.stderr, "a device without events: exit 4 naming it",
            cp.stderr)
    for bad in ("cuda:abc", "gpu:0", "cuda:-1"):
        cp = run("memtimeline", "--device", bad, path, os.path.join(d, "x.json"))
        C.eq(cp.returncode, 2, "--device %s: usage error" % bad)


def check_cpu_index(d):
    """CPU events that carry Device Id 0 (not c10's -1): --device cpu and
    cpu:0 find them, as the default device does"""
    path = os.path.join(d, "cpu0.json")
    events, total = [], 0
    for i in range(6):
        b = 256 if i < 3 else -256
        total += b
        events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                       "ts": 1000 + 10 * i, "args": {"Device Type": 0, "Device Id": 0,
                                                     "Addr": 0x5000 + 512 * (i % 3), "Bytes": b,
                                                     "Total Allocated": total,
                                                     "Total Reserved": 4096}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
    want = expected_points(memory_events(events, 0, 0), lambda s, a: int(a["Total Allocated"]))
    for opts in ((), ("--device", "cpu"), ("--device", "cpu:0")):
        got, _ = timeline(path, os.path.join(d, "cpu0_out.json"), *opts)
        if C.check(got is not None, "CPU index 0 %s: exit 0" % (opts,)):
            same_curve(got, want, "CPU index 0 %s" % (opts,))


def check_parameter_evidence(d):
    """PARAMETER only where the trace says so: a block never freed, made
    outside the steps of a trace that has ProfilerStep ops. Without steps, an
    op's output kept to the end (a 3 GiB aten::addmm) is Unknown"""
    def trace(with_step):
        ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1,
               "ts": 100, "dur": 50}]
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 120,
                   "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 3 * GIB}})
        if with_step:
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1,
                       "tid": 1, "ts": 200, "dur": 100})
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                       "ts": 210, "dur": 10})
            ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 215,
                       "args": {"Device Type": 1, "Device Id": 0, "Addr": 8192, "Bytes": 512}})
            ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 230,
                       "args": {"Device Type": 1, "Device Id": 0, "Addr": 8192, "Bytes": -512}})
        path = os.path.join(d, "param%d.json" % with_step)
        with open(path, "w") as f:
            json.dump({"traceEvents": ev}, f)
        return path
    for with_step, col, label in ((0, 8, "no steps: Unknown"), (1, 1, "steps: PARAMETER")):
        out = os.path.join(d, "param.json")
        cp = run("memtimeline", trace(with_step), out)
        if not C.check(cp.returncode == 0, label + ": exit 0", cp.stderr):
            continue
        times, sizes = json.load(open(out))
        C.eq(sizes[-1][col], 3 * GIB, label + ": the 3 GiB block's category")
        C.check(with_step or all(r[1] == 0 for r in sizes), label + ": no PARAMETER")


def main():
    d = tempfile.mkdtemp(prefix="tt-memtl-real-")
    try:
        C.section("HIP", check_hip, d)
        C.section("PARAMETER evidence", check_parameter_evidence, d)
        C.section("CPU index", check_cpu_index, d)
        if os.path.exists(TB):
            C.section("tb_plugin_2021-06", check_tb, d)
        else:
            C.skip("tb_plugin_2021-06", "missing: " + TB)
        if os.path.exists(DF):
            C.section("df_index_resolver", check_df, d)
        else:
            C.skip("df_index_resolver", "missing: " + DF)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
