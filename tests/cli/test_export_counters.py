#!/usr/bin/env python3
"""`tracetool export --counters` (issue 25): the counter tracks ("ph": "C",
cat "tracetool") it adds, against the same counters computed here from the
raw JSON (Python standard library only, times exact with Decimal):

- "Queue length (GPU D stream S)" {"length"}: each change of a stream's
  launch queue (+1 at a launch's start, -1 at its kernel's start, joined by
  correlation; launches first at equal times), in order;
- "Memory bandwidth (KIND)" {"GB/s"}: each change of the sum of the
  bandwidths of a kind's copies in flight (a 0 duration as 1 us; ends first
  at equal times);
- "Memory allocated (GPU D|CPU)" {"bytes"}: each [memory] event's Total
  Allocated, in time order (a hand-made trace: no small shared trace has
  one).

Also: the tracks belong to the process (tid 0, no thread named for them),
nothing is added without --counters, --steps cuts them as the other events,
and a database gives the file's tracks. Trace: kineto/tb_plugin_2021-06
(PyTorch 1.9, ResNet50: launches, memcpy and memset with a bandwidth, steps
5-10).
"""

import collections
import json
import os
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counters_common as cc  # noqa: E402
from counters_common import te, ns  # noqa: E402

C = te.Checker("export_counters")
TRACE = "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz"
LAUNCH = cc.LAUNCHES


def stream_of(e):
    s = (e.get("args") or {}).get("stream")
    return s if isinstance(s, int) else -1


def queue_tracks(ev):
    launch = {}
    for e in ev:
        c = (e.get("args") or {}).get("correlation")
        if e.get("ph") == "X" and e.get("name") in LAUNCH and stream_of(e) == -1 and c is not None:
            launch[c] = ns(e["ts"])
    pts = collections.defaultdict(list)
    for e in ev:
        c = (e.get("args") or {}).get("correlation")
        if e.get("ph") == "X" and stream_of(e) != -1 and c in launch:
            key = "Queue length (GPU %d stream %d)" % (e["args"]["device"], stream_of(e))
            pts[key] += [(launch[c], 0, 1), (ns(e["ts"]), 1, -1)]
    out = {}
    for k, p in pts.items():
        q, out[k] = 0, []
        for t, _, d in sorted(p):
            q += d
            out[k].append((t, q))
    return out


kind_of = cc.copy_kind


def bandwidth_tracks(ev):
    pts = collections.defaultdict(list)
    for i, e in enumerate(ev):
        a = e.get("args") or {}
        k = kind_of(str(e.get("name", "")))
        if e.get("ph") != "X" or stream_of(e) == -1 or not k or \
                "memory bandwidth (GB/s)" not in a:
            continue
        bw, t, d = float(a["memory bandwidth (GB/s)"]), ns(e["ts"]), ns(e["dur"]) or 1000
        pts["Memory bandwidth (%s)" % k] += [(t, 1, i, bw), (t + d, 0, i, -bw)]
    out = {}
    for k, p in pts.items():
        s, n, out[k] = 0.0, 0, []
        for t, start, _, bw in sorted(p):
            s += bw
            n += 1 if start else -1
            if n == 0:
                s = 0.0
            out[k].append((t, s))
    return out


def memory_tracks(ev):
    pts = collections.defaultdict(list)
    for i, e in enumerate(ev):
        a = e.get("args") or {}
        if e.get("name") != "[memory]" or "Total Allocated" not in a:
            continue
        dt, di = a.get("Device Type"), a.get("Device Id")
        key = "Memory allocated (CPU)" if dt == 0 else "Memory allocated (GPU %d)" % di \
            if dt == 1 else "Memory allocated (device type %d id %d)" % (dt, di)
        pts[key].append((ns(e["ts"]), i, int(a["Total Allocated"])))
    return {k: [(t, v) for t, _, v in sorted(p)] for k, p in pts.items()}


def export(args, tmp, name="out.json"):
    out = os.path.join(tmp, name)
    p = te.run_tool(["export"] + args + [out])
    if not C.check(p.returncode == 0, "export %s: exit 0" % " ".join(args[:-1]),
                   p.stderr.decode()[-300:]):
        return None
    with open(out) as f:
        doc = json.load(f, parse_float=Decimal)
    os.unlink(out)
    return doc["traceEvents"]


def ours(events):
    """the tracetool counter tracks: name -> [(ts ns, value)] in file order"""
    out = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "tracetool":
            (key, v), = e["args"].items()
            out[e["name"]].append((ns(e["ts"]), v))
    return out


def check_tracks(got, want, what, approx=False):
    C.eq(sorted(k for k in got if k in want or what in k), sorted(want), what + ": the tracks")
    for k in sorted(want):
        g, w = got.get(k, []), want[k]
        if not C.eq(len(g), len(w), "%s: its changes" % k):
            continue
        if approx:
            ok = all(t == u and abs(float(v) - x) <= 1e-9 * abs(x) + 1e-12
                     for (t, v), (u, x) in zip(g, w))
        else:
            ok = g == w
        C.check(ok, "%s: each change (ts, value) as computed from the raw JSON" % k)


def check(tmp):
    path = cc.shared_trace(TRACE)
    ev = cc.load_events(path)
    events = export(["--counters", path], tmp)
    if events is None:
        return
    got = ours(events)
    q, b = queue_tracks(ev), bandwidth_tracks(ev)
    C.check(q and b and not memory_tracks(ev),
            "the trace has launches, copies with a bandwidth, no Total Allocated")
    check_tracks(got, q, "Queue length")
    check_tracks(got, b, "Memory bandwidth", approx=True)
    C.eq(sorted(got), sorted(list(q) + list(b)), "no other tracetool track")
    mine = [e for e in events if e.get("cat") == "tracetool"]
    C.check(all(e["ph"] == "C" and e["tid"] == 0 and e["pid"] == mine[0]["pid"] for e in mine),
            "the counters are the process's tracks (ph C, tid 0)")
    C.check(not any(e.get("name") == "thread_name" and e.get("tid") == 0 for e in events),
            "no thread is named for them")
    plain = export([path], tmp)
    if plain is not None:
        C.eq(sum(1 for e in plain if e.get("cat") == "tracetool"), 0, "without --counters: none")
        C.eq(len(events) - len(mine), len(plain), "--counters adds only its tracks")
    steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
             if e.get("ph") == "X" and e.get("name") in ("ProfilerStep#6", "ProfilerStep#7")]
    cut = export(["--counters", "--steps", "6-7", path], tmp)
    if cut is not None and C.eq(len(steps), 2, "steps 6 and 7 in the trace"):
        inside = [(t, v) for k in got for t, v in got[k]
                  if any(a <= t <= b_ for a, b_ in steps)]
        cut_pts = [(t, v) for k, p in ours(cut).items() for t, v in p]
        C.check(cut_pts and all(any(a <= t <= b_ for a, b_ in steps) for t, _ in cut_pts),
                "--steps 6-7: every counter change inside the steps")
        C.eq(sorted(cut_pts), sorted(inside), "--steps 6-7: all of those inside them")
    db = os.path.join(tmp, "t.db")
    if C.eq(te.run_tool(["ingest", "-q", db, path]).returncode, 0, "ingest"):
        from_db = export(["--counters", db], tmp)
        if from_db is not None:
            C.check(ours(from_db) == got, "a database gives the file's tracks")


def check_memory(tmp):
    """[memory] events with a Total Allocated (none of the small shared traces
    has one), out of time order, on two devices, one without it"""
    def mem(ts, dtype, did, total=None):
        a = {"Device Type": dtype, "Device Id": did, "Bytes": 8}
        if total is not None:
            a["Total Allocated"] = total
        return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts, "args": a}
    ev = [mem(10, 1, 0, 512), mem(5, 1, 0, 256), mem(7, 0, -1, 64), mem(10, 1, 0, 1024),
          mem(12, 1, 0), mem(20, 1, 0, 0), mem(3, 0, -1, 32), mem(30, 2, 1, 5)]
    path = os.path.join(tmp, "mem.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    want = memory_tracks(ev)
    C.eq(want["Memory allocated (GPU 0)"], [(5000, 256), (10000, 512), (10000, 1024),
                                            (20000, 0)], "memory by hand: GPU 0")
    events = export(["--counters", path], tmp)
    if events is not None:
        check_tracks(ours(events), want, "Memory allocated")


def main():
    if not os.path.exists(cc.shared_trace(TRACE)):
        print("SKIP: no shared test data")
        return te.SKIP_EXIT
    with tempfile.TemporaryDirectory(prefix="tt_xp_counters_") as tmp:
        C.section("export --counters", check, tmp)
        C.section("export --counters: memory", check_memory, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
