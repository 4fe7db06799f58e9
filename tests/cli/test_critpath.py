#!/usr/bin/env python3
"""`tracetool critical-path` against expected values that do not come from
tracetool:

(a) HTA's own critical-path trace (hta/critical_path/cuda_event_sync_multi_stream)
    gives HTA's numbers, tests/fixtures/hta/expected/critical_path/*.json:
    59 nodes, 1178 us, the breakdown, and the same multiset of path edges
    (weight, kind, event, bound_by); from the file and from a database;
(b) hand-made traces (tests/fixtures/critpath/, make_traces.py) whose paths
    were worked out by hand (expected.json): a CPU-bound, a GPU-bound, a
    launch-bound step, and steps bound by cudaEventSynchronize,
    cudaStreamSynchronize and cudaStreamWaitEvent on a long kernel: the
    exact sequence of the path's nodes, its length and breakdown;
    --data-load and --time-range too;
(c) HTA's critical paths of those and of real traces' steps, computed by
    HTA v0.6.1 (tests/fixtures/critpath/hta_expected.json, made by
    make_hta_critpath.py): node count, length, breakdown, the graph's size
    and the path itself (its sha256);
(d) a file read twice (its links need the passes a database makes) gives
    the path a database of it gives;
(e) bad input: a step or a rank not there, several traces, a bad pattern:
    one line, non-zero exit; the --overlay file (valid JSON, the path's
    events marked, a flow per edge between two events, written atomically,
    never over an input); the formats.
"""
import collections
import csv
import hashlib
import io
import json
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("critpath")
FIX = os.path.join(HERE, "..", "fixtures", "critpath")
HTA_EXP = os.path.join(HERE, "..", "fixtures", "hta", "expected", "critical_path",
                       "critical_path_event_sync_multi_stream.json")
DATA = os.path.join(te.shared_dir(), "testdata")
EVENT_SYNC = os.path.join(DATA, "hta", "critical_path", "cuda_event_sync_multi_stream",
                          "event_sync_trace.json.gz")
KIND = {"operator": "critical_path_operator", "dependency": "critical_path_dependency",
        "launch_delay": "critical_path_kernel_launch_delay",
        "kernel_kernel_delay": "critical_path_kernel_kernel_delay",
        "sync": "critical_path_sync_dependency"}
BOUNDS = ("cpu_bound", "data_loading", "gpu_compute_bound", "gpu_communication_bound",
          "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead")


def run_json(args, label):
    p = te.run_tool(["critical-path", "--format", "json"] + args)
    if not C.check(p.returncode == 0, label + ": exit 0", p.stderr.decode()[-300:]):
        return None
    return json.loads(p.stdout.decode())


def path_nodes(doc):
    segs = doc["segments"]
    return ([segs[0]["from"]] if segs else []) + [s["to"] for s in segs]


def us_to_ns(x):
    return int(round(x * 1000))


def hta_event_sync(inp, label):
    exp = json.load(open(HTA_EXP))
    doc = run_json([inp], label)
    if not doc:
        return
    C.eq(doc["path_nodes"], exp["path_node_count"], label + ": path nodes (HTA)")
    C.eq(doc["length_ns"], us_to_ns(exp["path_length_us"]), label + ": length (HTA)")
    want = {k: us_to_ns(v) for k, v in exp["duration_by_bound_type_us"].items() if k}
    C.eq({k: v for k, v in doc["breakdown"].items() if v}, want, label + ": breakdown (HTA)")
    C.eq(doc["graph_nodes"], exp["graph_node_count"], label + ": graph nodes (HTA)")
    got = collections.Counter((s["ns"], KIND[s["kind"]], s.get("name"),
                               s["bound_by"]) for s in doc["segments"])
    want = collections.Counter((us_to_ns(e["duration"]), e["type"], e["s_name"], e["bound_by"])
                               for e in exp["edges"])
    C.eq(got, want, label + ": the path's edges (weight, kind, event, bound_by) as HTA's")
    C.eq(sum(s["ns"] for s in doc["segments"]), doc["length_ns"],
         label + ": the segments add up to the length")


def hand_made():
    exp = json.load(open(os.path.join(FIX, "expected.json")))
    C.check(len(exp) >= 7, "expected.json has the hand-made cases")
    for name, x in sorted(exp.items()):
        doc = run_json([os.path.join(FIX, x["trace"] + ".json")] + x["args"], name)
        if not doc:
            continue
        want = ["%s (%s)" % (n, at) for n, at in x["path"]]
        C.eq(path_nodes(doc), want, name + ": the path, node by node")
        C.eq(doc["length_ns"], x["length_ns"], name + ": length")
        C.eq(doc["breakdown"], dict({b: 0 for b in BOUNDS}, **x["breakdown"]),
             name + ": breakdown")
        C.eq(doc["step"], 1, name + ": the step")


def hta_cases(under=False):
    exp = json.load(open(os.path.join(FIX, "hta_expected.json")))
    for name, x in sorted(exp.items()):
        if name.startswith("_"):
            continue
        trace = x["trace"]
        if trace.startswith("fixture:"):
            path = os.path.join(FIX, trace[8:])
        else:
            path = os.path.join(DATA, trace)
            if not os.path.exists(path):
                C.skip(name, "%s missing" % path)
                continue
        args = [path]
        if x["annotation"] and under:  # the same window (HTA's annotation, instance 0)
            args += ["--under", x["annotation"]]
        elif x["annotation"]:
            args += ["--step", x["annotation"].split("#")[1]]
        for p in x["data_load_events"] or []:
            args += ["--data-load", p]
        doc = run_json(args, name)
        if not doc:
            continue
        C.eq(doc["path_nodes"], x["path_node_count"], name + ": path nodes (HTA)")
        C.eq(doc["length_ns"], us_to_ns(x["path_length_us"]), name + ": length (HTA)")
        C.eq({k: v for k, v in doc["breakdown"].items() if v},
             {k: us_to_ns(v) for k, v in x["duration_by_bound_type_us"].items() if v},
             name + ": breakdown (HTA)")
        C.eq((doc["graph_nodes"], doc["graph_edges"]),
             (x["graph_node_count"], x["graph_edge_count"]), name + ": graph size (HTA)")
        sha = hashlib.sha256(json.dumps(path_nodes(doc)).encode()).hexdigest()
        C.eq(sha, x["path_sha256"], name + ": the path, node by node (HTA's sha256)")
        C.eq(doc["rank"], x["rank"], name + ": rank")


def raw_events(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync")
RT_CATS = ("cuda_runtime", "cuda_driver")


def window_events(ev, op_re, first, last):
    """HTA's critical_path_analysis(annotation, instance_id=(first, last)) from
    the raw JSON, with a whole-name match: the window from the start of the
    first-th slice (by start) whose whole name matches op_re to the latest end
    of the first-th..last-th; its events: the CPU events (slices, runtime
    calls, syncs on no stream) with a duration that start in it, and the GPU
    rows whose runtime call is one of them"""
    ops = sorted(((e["ts"], i, e["ts"] + e.get("dur", 0), e["name"]) for i, e in enumerate(ev)
                  if e.get("cat") not in GPU_CATS + RT_CATS and re.fullmatch(op_re, e["name"])))
    lo, hi = ops[first][0], max(x[2] for x in ops[first:last + 1])
    cpu = [e for e in ev if (e.get("cat") not in GPU_CATS or
                             (e["cat"] == "cuda_sync" and e["args"].get("stream") == -1))
           and e.get("dur", 0) > 0 and lo <= e["ts"] <= hi]
    calls = {e["args"].get("correlation") for e in cpu if e.get("cat") in RT_CATS}
    gpu = [e for e in ev if e.get("cat") in GPU_CATS and e not in cpu and
           (e.get("args") or {}).get("correlation") in calls]
    return ops[first][3], len(ops), lo, hi, len(cpu) + len(gpu)


def under_window(trace, cases):
    ev = raw_events(trace)
    for op, first, last in cases:
        name, n, lo, hi, events = window_events(ev, op, first, last)
        inst = str(first) if first == last else "%d-%d" % (first, last)
        label = "--under %s --instance %s" % (op, inst)
        doc = run_json([trace, "--under", op, "--instance", inst], label)
        if not doc:
            continue
        C.eq((doc["window_op"], doc["instances"], doc["instance_from"], doc["instance_to"]),
             (name, n, first, last), label + ": the window's op, its instances")
        C.eq(doc["events"], events, label + ": the window's events (HTA's clipping, independent)")
        segs = doc["segments"]
        C.check(segs and us_to_ns(lo) <= segs[0]["from_ns"] <= us_to_ns(hi),
                label + ": the path starts in the window", segs[:1])
    n = window_events(ev, "aten::matmul", 0, 0)[1]
    fails([trace, "--under", "aten::matmul", "--instance", "%d" % n], "--instance past the last",
          4, "%d ops match" % n)
    fails([trace, "--under", "no such op"], "--under that matches nothing", 4, "no such op")
    fails([trace, "--instance", "1"], "--instance without --under", 2, "--under")
    fails([trace, "--under", "x", "--step", "1"], "--under with --step", 2, "--step")
    fails([trace, "--under", "x", "--instance", "2-1"], "--instance 2-1", 2, "--instance")


def name_segments():
    """--name lists the segments at an event whose name matches: with a name of
    leaf events (runtime calls, kernels) those with either node's event
    matching, from expected.json's paths (worked out by hand); the path, its
    length and breakdown as without --name"""
    exp = json.load(open(os.path.join(FIX, "expected.json")))
    for name, x in sorted(exp.items()):
        for pat in ("^cuda", "gemm|kernel|small_a"):
            label = "%s --name %s" % (name, pat)
            doc = run_json([os.path.join(FIX, x["trace"] + ".json")] + x["args"] +
                           ["--name", pat], label)
            if not doc:
                continue
            nodes = ["%s (%s)" % (n, at) for n, at in x["path"]]
            want = [(a, b) for a, b in zip(nodes, nodes[1:])
                    if re.search(pat, a.rsplit(" (", 1)[0]) or re.search(pat, b.rsplit(" (", 1)[0])]
            C.eq([(s["from"], s["to"]) for s in doc["segments"]], want, label + ": the segments")
            C.eq((doc["length_ns"], doc["path_nodes"], doc["segments_shown"]),
                 (x["length_ns"], len(nodes), len(want)), label + ": the path stays whole")
            C.eq(doc["shown_ns"], sum(s["ns"] for s in doc["segments"]), label + ": shown_ns")


def name_hta(trace):
    """HTA's path edges whose event matches are all among the segments --name lists"""
    exp = json.load(open(HTA_EXP))
    for pat in ("cudaMalloc", "^aten::mm$", "Memset|cudaLaunch"):
        doc = run_json([trace, "--name", pat], "HTA's trace --name " + pat)
        if not doc:
            continue
        got = collections.Counter((s["ns"], KIND[s["kind"]], s.get("name"), s["bound_by"])
                                  for s in doc["segments"])
        want = collections.Counter((us_to_ns(e["duration"]), e["type"], e["s_name"], e["bound_by"])
                                   for e in exp["edges"] if re.search(pat, e["s_name"] or ""))
        C.check(want and not want - got, "HTA's trace --name %s: HTA's edges of those events "
                "are listed" % pat, want - got)
        C.check(all(re.search(pat, s["from"].rsplit(" (", 1)[0]) or
                    re.search(pat, s["to"].rsplit(" (", 1)[0]) or
                    re.search(pat, s.get("name") or "") for s in doc["segments"]),
                "HTA's trace --name %s: every segment is at a matching event" % pat)
        C.eq(doc["length_ns"], us_to_ns(exp["path_length_us"]), "--name %s: the length" % pat)


def fails(args, label, code=None, want=None):
    p = te.run_tool(["critical-path"] + args)
    lines = te.stderr_lines(p)
    ok = p.returncode != 0 and (code is None or p.returncode == code)
    C.check(ok, label + ": non-zero exit", p.returncode)
    C.check(len(lines) == 1 and (want is None or want in lines[0]), label + ": one line",
            lines)
    C.eq(p.stdout, b"", label + ": nothing on stdout")


def bad_input(tmp):
    trace = os.path.join(FIX, "gpu_bound.json")
    fails([trace, "--step", "7"], "a step not there", 4, "no ProfilerStep#7")
    fails([trace, "--rank", "3"], "a rank not there", 4, "--rank")
    db = os.path.join(tmp, "two.db")
    p = te.run_tool(["ingest", "-q", db, trace, os.path.join(FIX, "cpu_bound.json")])
    C.eq(p.returncode, 0, "ingest two traces")
    fails([db, "--step", "1"], "a database of two traces", 3, "--rank or --trace")
    fails([db, "--rank", "3"], "a database: a rank not there", 4)
    doc = run_json([db, "--trace", "2", "--step", "1"], "a database, --trace 2")
    if doc:
        C.eq((doc["trace_id"], doc["length_ns"]), (2, 900000), "--trace 2 is cpu_bound's path")
    d = os.path.join(tmp, "ranks")
    os.mkdir(d)
    for r in (0, 1):
        doc = json.load(open(trace))
        doc["distributedInfo"]["rank"] = r
        with open(os.path.join(d, "rank%d.json" % r), "w") as f:
            json.dump(doc, f)
    fails([d, "--step", "1"], "a directory of two ranks", 3, "--rank or --trace")
    doc = run_json([d, "--step", "1", "--rank", "1"], "a directory, --rank 1")
    if doc:
        C.eq((doc["rank"], doc["length_ns"]), (1, 830000), "--rank 1 of the directory")
    fails([trace, "--data-load", "(("], "a bad pattern", 2, "--data-load")
    fails([os.path.join(tmp, "none.json")], "a missing file", 4)
    empty = os.path.join(tmp, "nothing.json")
    with open(empty, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1",
                                    "pid": 1, "tid": 1, "ts": 1, "dur": 5}]}, f)
    fails([empty, "--step", "1"], "a step with no op in it", 4)
    fails([trace, "--step", "x"], "a bad step", 2)


def overlay(tmp):
    trace = os.path.join(FIX, "stream_wait.json")
    out = os.path.join(tmp, "ov.json")
    doc = run_json([trace, "--step", "1", "--overlay", out], "--overlay")
    if not doc or not C.check(os.path.exists(out), "--overlay: the file is there"):
        return
    C.check(not os.path.exists(out + ".tmp"), "--overlay: no temporary left")
    ov = json.load(open(out))
    ev = ov["traceEvents"]
    crit = {e["name"] for e in ev if e.get("ph") == "X" and e["args"].get("critical") == 1}
    nodes = path_nodes(doc)
    C.eq(crit, {n.rsplit(" (", 1)[0] for n in nodes}, "--overlay: the path's events marked")
    flows = [e for e in ev if e.get("ph") in ("s", "f")]
    cross = [s for s in doc["segments"] if s["from"].rsplit(" (", 1)[0] !=
             s["to"].rsplit(" (", 1)[0]]
    C.eq(len(flows), 2 * len(cross), "--overlay: a flow (s, f) per edge between two events")
    C.check(all(f["name"] == "critical_path" and f["cat"] == "critical_path" for f in flows),
            "--overlay: the flows are named critical_path")
    C.check(not any(e.get("name") == "aten::next_step_op" for e in ev),
            "--overlay: only the window's events")
    p = te.run_tool(["critical-path", trace, "--overlay", trace])
    C.eq(p.returncode, 2, "--overlay over the input: usage error")
    gz = os.path.join(tmp, "ov.json.gz")
    p = te.run_tool(["critical-path", trace, "--step", "1", "--overlay", gz])
    C.check(p.returncode == 0 and open(gz, "rb").read(2) == b"\x1f\x8b", "--overlay .gz: gzip")


def formats():
    trace = os.path.join(FIX, "gpu_bound.json")
    p = te.run_tool(["critical-path", trace, "--step", "1", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(p.stdout.decode())))
    bd = {r["bound_by"]: int(r["ns"]) for r in rows if r["what"] == "breakdown"}
    seg = [r for r in rows if r["what"] == "segment"]
    C.eq(bd["gpu_compute_bound"], 800000, "csv: the breakdown rows")
    C.eq(len(seg), 5, "csv: a row per segment")
    C.eq(seg[2]["name"], "gemm_a", "csv: the segment's event")
    text = te.run_tool(["critical-path", trace, "--step", "1"]).stdout.decode()
    C.check("gpu_compute_bound" in text and "kernel_kernel_delay" in text and "830000" in text,
            "table: the breakdown and the segments")
    md = te.run_tool(["critical-path", trace, "--step", "1", "--format", "markdown"])
    C.check(b"| gemm\\_a |" in md.stdout, "markdown: a table of segments")


def rare_shapes(tmp):
    """a file one reading cannot link (tests/tools/rare_traces.py: 'B'
    slices closed late, kernels far from their calls, ops out of order) is
    read twice: the same path as from a database made of it"""
    trace, db = os.path.join(tmp, "rare.json"), os.path.join(tmp, "rare.db")
    gen = os.path.join(HERE, "..", "tools", "rare_traces.py")
    p = subprocess.run([sys.executable, gen, "all", "1", trace], stdout=subprocess.DEVNULL)
    C.eq(p.returncode, 0, "rare_traces.py all")
    C.eq(te.run_tool(["ingest", "-q", db, trace]).returncode, 0, "ingest the rare shapes")
    for args in ([], ["--step", "2"]):
        a, b = run_json([trace] + args, "rare shapes"), run_json([db] + args, "rare shapes, db")
        if a and b:
            a.pop("path")
            b.pop("path")
            C.check(a == b and a["path_nodes"] > 10, "rare shapes %s: the file's path is the "
                    "database's" % " ".join(args))


def main():
    tmp = tempfile.mkdtemp(prefix="tt_critpath_")
    try:
        if os.path.exists(EVENT_SYNC):
            C.section("HTA's trace", hta_event_sync, EVENT_SYNC, "event_sync_trace")
            db = os.path.join(tmp, "es.db")
            if C.eq(te.run_tool(["ingest", "-q", db, EVENT_SYNC]).returncode, 0, "ingest"):
                C.section("HTA's trace, a database", hta_event_sync, db, "event_sync_trace db")
            with open(EVENT_SYNC, "rb") as f:
                p = te.run_tool(["critical-path", "-", "--format", "json"], stdin=f)
            C.check(p.returncode == 0 and json.loads(p.stdout)["length_ns"] == 1178000,
                    "standard input")
        else:
            C.skip("HTA's trace", EVENT_SYNC + " missing")
        C.section("hand-made", hand_made)
        C.section("HTA's paths", hta_cases)
        C.section("bad input", bad_input, tmp)
        C.section("overlay", overlay, tmp)
        C.section("formats", formats)
        C.section("rare shapes", rare_shapes, tmp)
        C.section("HTA's paths, --under", hta_cases, True)
        C.section("--name", name_segments)
        if os.path.exists(EVENT_SYNC):
            C.section("--under", under_window, EVENT_SYNC,
                      [("aten::matmul", 0, 0), ("aten::matmul", 1, 1), ("aten::matmul", 0, 1),
                       ("aten::matmul", 2, 2), ("aten::mm", 1, 1), ("aten::.*", 3, 5)])
            C.section("--name, HTA's trace", name_hta, EVENT_SYNC)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
