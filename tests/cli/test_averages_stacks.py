#!/usr/bin/env python3
"""`tracetool averages --group-by-stack N` on traces whose Python stacks are
python_function events, and `--stacks OUT` (collapsed stacks), against a
real PyTorch's own numbers.

The fixture (tests/fixtures/stacks113, made by make_stacks_fixtures.py with
Debian's python3-torch 1.13) is one profiled training run: its events as a
Kineto trace (python_function + cpu_op + user_annotation, ns times), torch's
own outputs for it, and the same outputs of torch's own code over the exact
(ns) times ("exact"; torch 1.13 itself truncates to whole us, see the
generator). What is checked:

  a. --group-by-stack 5 --sort-by self_cpu_time_total --row-limit -1 is torch's
     table (mlp.exact.stack5.txt): every line, with each printed number equal
     to torch's to the last digit (+-0.001: two float sums of the same ns) and
     rows of equal sort key in either order; --group-by-stack 1 --sort-by
     count --row-limit 12 likewise (mlp.exact.stack1.txt);
  b. --format json: every (name, stack) row of torch's key_averages(
     group_by_stack_n=5), in torch's order, count equal, CPU total / self CPU
     equal (to 0.0015 us); against torch 1.13 as is: the same events, and
     each row equal within its truncation bound except the rows of the few
     events 1.13 nests differently (listed: their stacks differ between the
     two references);
  c. --stacks: each line "frame;...;op value", root first, the value the op's
     self CPU time summed over its events under that stack, rounded: equal to
     torch's per-event numbers summed the same way; against torch's own
     export_stacks file (which has no op frame and writes int(self) per
     event): per stack, the same stacks and the totals within that rounding;
  d. the database path gives the same file; --stacks-metric device (none on a
     CPU run; kernel time on a synthetic GPU trace); several traces: a "rank
     R" root frame;
  e. synthetic traces for the rules the fixture shows once or never: a user
     annotation keeps the call that opened it, a backward node has its forward
     op's stack (also on another thread, the autograd engine's), a C++
     autograd node without a forward op has none, "Call stack" args win,
     torch's frame filter, zero-length calls enclose nothing;
  f. a trace without stacks (torch 1.13's own export of the run): one warning
     on stderr, the table still printed, exit 0;
  g. OUT: never an input (exit 2, input unchanged), "-" refused, written whole
     (a failed write leaves the old file and no temporary file).

Environment: TRACETOOL (binary).
"""

import collections
import gzip
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("averages_stacks")

FIX = os.path.join(HERE, "..", "fixtures", "stacks113")
TRACE = os.path.join(FIX, "mlp.trace.json.gz")
LEGACY = os.path.join(FIX, "mlp.legacy.json.gz")
TIME_TOL = 0.0015
TRANSLATE = str.maketrans(" ;\t\n", "____")


def text_of(name):
    with open(os.path.join(FIX, name), "rb") as f:
        data = f.read()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def torch_data():
    return json.loads(text_of("mlp.stacks.json.gz"))


def run_ok(args, label):
    cp = te.run_tool(args)
    C.eq(cp.returncode, 0, label + ": exit code")
    if cp.returncode != 0:
        print("  stderr: %s" % cp.stderr.decode(errors="replace")[-400:])
        return None
    return cp


def json_rows(args, label):
    cp = run_ok(["averages", "--format", "json", "--row-limit", "-1"] + args, label)
    if cp is None:
        return None
    return json.loads(cp.stdout.decode("utf-8"))["traces"][0]["rows"]


def read_stacks(path):
    """{'frame;...;op': value} of a collapsed-stack file, and the lines"""
    with open(path) as f:
        lines = f.read().splitlines()
    out = {}
    for ln in lines:
        stack, value = ln.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(value)
    return out, lines


def line_key(stack, name=None):
    """torch's export_stacks spelling of a stack (innermost first) [+ op]"""
    k = ";".join(e.translate(TRANSLATE) for e in reversed(stack))
    return k + ";" + name.translate(TRANSLATE) if name is not None else k


# ------------------------------------------------------------ a. the table

NUM = re.compile(r"(-?\d+\.\d+)(%|us|ms|s)?")


def cells_equal(got, want):
    """one table line: the same text, numbers within the last printed digit"""
    if got == want:
        return True
    g, w = NUM.split(got), NUM.split(want)
    if len(g) != len(w):
        return False
    for i, (a, b) in enumerate(zip(g, w)):
        if i % 3 == 1:
            if abs(float(a) - float(b)) > 0.0011 * (10 if g[i + 1] == "%" else 1):
                return False
        elif a != b:
            return False
    return True


def blocks(text):
    """(header lines, [row blocks: the row and its stack lines], footer lines)"""
    lines = text.split("\n")
    seps = [i for i, ln in enumerate(lines) if ln.startswith("-----")]
    head, body, foot = lines[:seps[1] + 1], lines[seps[1] + 1:seps[2]], lines[seps[2]:]
    width = len(lines[seps[0]].split(" ")[0])  # the Name column
    out = []
    for ln in body:
        if out and not ln[:width].strip():
            out[-1].append(ln)
        else:
            out.append([ln])
    return head, out, foot


def same_table(label, got, want):
    gh, gb, gf = blocks(got)
    wh, wb, wf = blocks(want)
    C.eq(gh, wh, label + ": header lines")
    C.check(len(gf) == len(wf) and all(cells_equal(a, b) for a, b in zip(gf, wf)),
            label + ": footer", (gf, wf))
    if not C.eq(len(gb), len(wb), label + ": rows"):
        return
    unmatched = list(range(len(wb)))
    bad = []
    for i, blk in enumerate(gb):
        # the same place, or a row of (nearly) the same sort key nearby
        hit = None
        for j in unmatched:
            if abs(j - i) <= 3 and len(wb[j]) == len(blk) and \
                    all(cells_equal(a, b) for a, b in zip(blk, wb[j])):
                hit = j
                break
        if hit is None:
            bad.append((i, blk[0][:150], wb[i][0][:150] if i < len(wb) else None))
        else:
            unmatched.remove(hit)
    C.check(not bad, label + ": every row and its Source Location lines equal torch's",
            bad[:3])


def check_tables():
    cp = run_ok(["averages", "--group-by-stack", "5", "--sort-by", "self_cpu_time_total",
                 "--row-limit", "-1", TRACE], "stack5 table")
    if cp:
        same_table("--group-by-stack 5 table vs torch", cp.stdout.decode(),
                   text_of("mlp.exact.stack5.txt.gz"))
    cp = run_ok(["averages", "--group-by-stack", "1", "--sort-by", "count", "--row-limit", "12",
                 TRACE], "stack1 table")
    if cp:
        same_table("--group-by-stack 1 table vs torch", cp.stdout.decode(),
                   text_of("mlp.exact.stack1.txt"))


# ------------------------------------------------------------ b. the rows

def row_key(name, stack):
    return (name, "\n".join(stack))


def check_rows():
    d = torch_data()
    C.check(d["torch"].startswith("1.13") and d["kineto"] is False,
            "fixture: made by torch 1.13 without Kineto", (d["torch"], d["kineto"]))
    rows = json_rows(["--group-by-stack", "5", TRACE], "json stack5")
    if rows is None:
        return
    got = [(row_key(r["name"], r.get("stack", "").split("\n") if r.get("stack") else []), r)
           for r in rows if r["device"] == "CPU"]
    want = d["exact"]["by_key_5"]
    C.eq([k for k, _ in got], [row_key(w["name"], w["stack"]) for w in want],
         "json rows: torch's keys in torch's (first-occurrence) order")
    bad = []
    for (k, r), w in zip(got, want):
        if r["count"] != w["count"] or \
                abs(r["cpu_time_total_us"] - w["cpu_time_total"]) > TIME_TOL or \
                abs(r["self_cpu_time_total_us"] - w["self_cpu_time_total"]) > TIME_TOL:
            bad.append((k, r["count"], r["cpu_time_total_us"], r["self_cpu_time_total_us"],
                        w["count"], w["cpu_time_total"], w["self_cpu_time_total"]))
    C.check(not bad, "json rows: count, CPU total, self CPU equal torch's", bad[:3])
    check_rows_113(d, dict(got))


def changed_events(d):
    """the events torch 1.13 (whole-us times) nests otherwise than the exact
    reference: another stack, or other direct children (ids)"""
    ex = dict((e["id"], e) for e in d["exact"]["events"])
    return ex, set(e["id"] for e in d["torch113"]["events"]
                   if e["stack"] != ex[e["id"]]["stack"] or
                   e["children"] != ex[e["id"]]["children"])


def check_rows_113(d, got):
    """torch 1.13 as is: every row agrees within its truncation (1 us per
    event and per direct child) but those of the events it nests otherwise"""
    ex, changed = changed_events(d)
    t113 = d["torch113"]["events"]
    C.eq(sorted(e["id"] for e in t113), sorted(ex), "torch 1.13: the same events")
    touched = set()
    for e in t113:
        if e["id"] in changed:
            touched.add(row_key(e["name"], e["stack"][:5]))
            touched.add(row_key(ex[e["id"]]["name"], ex[e["id"]]["stack"][:5]))
    moved = sum(1 for e in t113 if e["stack"] != ex[e["id"]]["stack"])
    C.check(moved <= len(t113) // 10,
            "torch 1.13: few events with another stack (%d of %d; %d nested otherwise)"
            % (moved, len(t113), len(changed)))
    bound = collections.Counter()
    for e in t113:
        bound[row_key(e["name"], e["stack"][:5])] += 1 + e["children"]
    bad, compared = [], 0
    for w in d["torch113"]["by_key_5"]:
        k = row_key(w["name"], w["stack"])
        if k in touched:
            continue
        r = got.get(k)
        compared += 1
        if r is None or r["count"] != w["count"] or \
                abs(r["cpu_time_total_us"] - w["cpu_time_total"]) > w["count"] or \
                abs(r["self_cpu_time_total_us"] - w["self_cpu_time_total"]) > bound[k]:
            bad.append((k, r and (r["count"], r["self_cpu_time_total_us"]),
                        (w["count"], w["self_cpu_time_total"], bound[k])))
    C.check(not bad and compared >= len(d["torch113"]["by_key_5"]) // 3,
            "torch 1.13: %d rows within whole-us truncation" % compared, bad[:3])


# ------------------------------------------------------------ c. collapsed stacks

def check_collapsed(tmp):
    d = torch_data()
    out = os.path.join(tmp, "mlp.folded")
    if not run_ok(["averages", "--stacks", out, TRACE], "--stacks"):
        return
    got, lines = read_stacks(out)
    C.check(all(re.match(r"^\S+ [1-9]\d*$", ln) for ln in lines),
            "--stacks: every line 'frame;...;op value', value > 0", lines[:2])
    C.check(lines and all(ln.startswith("make_stacks_fixtures.py(") and
                          ln.split(";")[0].endswith(":_<module>") for ln in lines),
            "--stacks: root (the script's <module>) first", lines[:1])
    # exact: torch's per-event self CPU summed per (stack, op), rounded
    want = collections.defaultdict(float)
    for e in d["exact"]["events"]:
        if e["stack"]:
            want[line_key(e["stack"], e["name"])] += e["self_cpu_time_total"]
    wr = dict((k, int(v + 0.5)) for k, v in want.items() if int(v + 0.5) > 0)
    C.eq(sorted(got), sorted(wr), "--stacks: torch's (stack, op) pairs with a value")
    bad = [(k[-80:], got.get(k), want[k]) for k in wr
           if got.get(k) != wr[k] and abs(want[k] % 1 - 0.5) > 1e-6]
    C.check(not bad, "--stacks: values = torch's self CPU summed, rounded to us", bad[:3])
    # torch's own export_stacks: no op frame, int(self) per event
    for ref, ev_key, label in (("mlp.exact.stacks.txt.gz", "exact", "exact"),
                               ("mlp.stacks.txt.gz", "torch113", "torch 1.13")):
        compare_export(got, ref, d, ev_key, label)


def compare_export(got, ref, d, ev_key, label):
    """torch's export_stacks file against ours, per stack (the op frame taken
    off ours): the file writes int(self CPU) of each event with a stack and
    int >= 1, so a stack may differ by 1 us per event and per direct child of
    it (torch 1.13's whole-us times), plus the events torch 1.13 nests
    otherwise (whole), plus our rounding per line"""
    tref = collections.Counter()
    for ln in text_of(ref).splitlines():
        stack, value = ln.rsplit(" ", 1)
        tref[stack] += int(value)
    ours, keys = collections.Counter(), collections.Counter()
    for k, v in got.items():
        path = k.rsplit(";", 1)[0]
        ours[path] += v
        keys[path] += 1
    ex, changed = changed_events(d)
    tol = collections.Counter()
    for e in d[ev_key]["events"]:
        if e["stack"]:
            tol[line_key(e["stack"])] += 1 + e["children"]
        if e["id"] in changed:
            x = ex[e["id"]]
            for st in (e["stack"], x["stack"]):
                if st:
                    tol[line_key(st)] += abs(e["self_cpu_time_total"]) + \
                        abs(x["self_cpu_time_total"]) + 1
    bad = []
    for path in set(tref) | set(ours):
        if abs(ours[path] - tref[path]) > tol[path] + keys[path]:
            bad.append((path[-80:], ours[path], tref[path], tol[path] + keys[path]))
    C.check(not bad and set(tref) <= set(ours),
            "--stacks vs %s export_stacks: the same stacks, each within its rounding" % label,
            (bad[:3], list(set(tref) - set(ours))[:2]))


# ------------------------------------------------------------ d. paths and options

def check_db_and_metric(tmp):
    out1, out2 = os.path.join(tmp, "f.folded"), os.path.join(tmp, "db.folded")
    db = os.path.join(tmp, "mlp.db")
    run_ok(["averages", "--stacks", out1, TRACE], "file --stacks")
    if run_ok(["ingest", "-q", db, TRACE], "ingest"):
        run_ok(["averages", "--stacks", out2, db], "database --stacks")
        with open(out1) as a, open(out2) as b:
            C.check(a.read() == b.read(), "--stacks: the database gives the same file")
    out = os.path.join(tmp, "dev.folded")
    if run_ok(["averages", "--stacks", out, "--stacks-metric", "device", TRACE], "device"):
        C.eq(os.path.getsize(out), 0, "--stacks-metric device on a CPU run: no line")


def X(name, ts, dur, cat="cpu_op", tid=1, pid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def PY(name, ts, dur, tid=1):
    return X(name, ts, dur, cat="python_function", tid=tid)


def write_trace(tmp, name, events, rank=None):
    doc = {"schemaVersion": 1, "traceEvents": events}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank, "world_size": 2}
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


GPU = [
    PY("train.py(10): <module>", 0, 1000),
    PY("train.py(5): step", 10, 900),
    X("aten::mm", 100, 50, **{"External id": 7}),
    X("cudaLaunchKernel", 110, 10, cat="cuda_runtime", correlation=100,
      **{"External id": 7}),
    X("gemm", 200, 40, cat="kernel", pid=0, tid=7, correlation=100,
      **{"External id": 7, "device": 0, "stream": 7}),
]


def check_gpu_and_ranks(tmp):
    path = write_trace(tmp, "gpu.json", GPU)
    out = os.path.join(tmp, "gpu.folded")
    if run_ok(["averages", "--stacks", out, "--stacks-metric", "device", path], "gpu device"):
        C.eq(read_stacks(out)[1], ["train.py(10):_<module>;train.py(5):_step;aten::mm 40"],
             "--stacks-metric device: the op's own kernel time under its stack")
    if run_ok(["averages", "--stacks", out, path], "gpu cpu"):
        C.eq(read_stacks(out)[1], ["train.py(10):_<module>;train.py(5):_step;aten::mm 40",
                                   "train.py(10):_<module>;train.py(5):_step;cudaLaunchKernel 10"],
             "--stacks: self CPU of the op and of its runtime call")
    db = os.path.join(tmp, "ranks.db")
    a = write_trace(tmp, "r0.json", GPU, rank=0)
    b = write_trace(tmp, "r1.json", [PY("b.py(1): <module>", 0, 100), X("aten::add", 10, 20)],
                    rank=1)
    if run_ok(["ingest", "-q", db, a, b], "ingest two ranks") and \
            run_ok(["averages", "--stacks", out, db], "two ranks --stacks"):
        C.eq(read_stacks(out)[1],
             ["rank_0;train.py(10):_<module>;train.py(5):_step;aten::mm 40",
              "rank_0;train.py(10):_<module>;train.py(5):_step;cudaLaunchKernel 10",
              "rank_1;b.py(1):_<module>;aten::add 20"],
             "--stacks of several traces: a 'rank R' root frame each")


# ------------------------------------------------------------ e. synthetic rules

SYNTH = [
    PY("t.py(1): <module>", 0, 10000),
    # forward: aten::mm (seq 5) under model.forward
    PY("model.py(3): forward", 100, 300),
    X("aten::mm", 150, 50, **{"Sequence number": 5, "Fwd thread id": 0}),
    # a zero-length call encloses nothing; a filtered frame is left out
    PY("t.py(2): zero", 500, 0),
    PY("torch/autograd/__init__.py(200): backward", 490, 200),
    X("aten::relu", 500, 0),
    # record_function: the annotation keeps the call that opened it
    PY("profiler.py(9): __enter__", 1000, 20),
    X("region", 1010, 500, cat="user_annotation"),
    X("aten::add", 1100, 10),
    # "Call stack" wins over the python_function events
    X("aten::sub", 1200, 10, **{"Call stack": "jit.py(4): f;jit.py(8): g"}),
    # backward on another thread (the autograd engine's): the engine's op has
    # the forward thread's open calls, the node and its ops the forward op's
    PY("<built-in method run_backward>", 2000, 2000),
    X("autograd::engine::evaluate_function: MmBackward0", 2100, 400, tid=2,
      **{"Sequence number": 5, "Fwd thread id": 1}),
    X("MmBackward0", 2110, 290, tid=2, **{"Sequence number": 5, "Fwd thread id": 1}),
    X("aten::mm", 2120, 100, tid=2),
    X("aten::sum", 2410, 40, tid=2),
    # a C++ node without a forward op: no stack, nor its ops
    X("torch::autograd::AccumulateGrad", 3000, 100),
    X("aten::add_", 3010, 50),
]

SYNTH_WANT = {
    ("aten::mm", "model.py(3): forward\nt.py(1): <module>"): 2,
    ("aten::relu", "t.py(1): <module>"): 1,
    ("region", "profiler.py(9): __enter__\nt.py(1): <module>"): 1,
    ("aten::add", "t.py(1): <module>"): 1,
    ("aten::sub", "jit.py(4): f\njit.py(8): g"): 1,
    ("autograd::engine::evaluate_function: MmBackward0",
     "<built-in method run_backward>\nt.py(1): <module>"): 1,
    ("MmBackward0", "model.py(3): forward\nt.py(1): <module>"): 1,
    ("aten::sum", "<built-in method run_backward>\nt.py(1): <module>"): 1,
    ("torch::autograd::AccumulateGrad", None): 1,
    ("aten::add_", None): 1,
}


def check_synthetic(tmp):
    path = write_trace(tmp, "synth.json", SYNTH)
    rows = json_rows(["--group-by-stack", "2", path], "synthetic")
    if rows is None:
        return
    got = dict(((r["name"], r.get("stack")), r["count"]) for r in rows)
    for k, n in SYNTH_WANT.items():
        C.eq(got.get(k), n, "synthetic: %s has stack %r" % k)
    C.eq(len(got), len(SYNTH_WANT), "synthetic: no other row")


# ------------------------------------------------------------ f. no stacks

def check_no_stacks(tmp):
    for args in (["--group-by-stack", "3"], ["--stacks", os.path.join(tmp, "none.folded")]):
        cp = te.run_tool(["averages"] + args + [LEGACY])
        label = "no stacks %s" % args[0]
        C.eq(cp.returncode, 0, label + ": exit 0")
        warn = [ln for ln in te.stderr_lines(cp) if "warning" in ln]
        C.check(len(warn) == 1 and "has no Python stacks" in warn[0] and args[0] in warn[0],
                label + ": one warning on stderr", te.stderr_lines(cp))
        C.check("Self CPU time total" in cp.stdout.decode(), label + ": the table is printed")
    C.eq(os.path.getsize(os.path.join(tmp, "none.folded")), 0, "no stacks: an empty file")
    cp = te.run_tool(["averages", "--group-by-stack", "3", TRACE])
    C.eq([ln for ln in te.stderr_lines(cp) if "warning" in ln], [],
         "a trace with stacks: no warning")


# ------------------------------------------------------------ g. OUT

def check_output_rules(tmp):
    copy = os.path.join(tmp, "in.json")
    with open(copy, "w") as f:
        json.dump({"traceEvents": GPU}, f)
    before = open(copy, "rb").read()
    cp = te.run_tool(["averages", "--stacks", copy, copy])
    C.eq(cp.returncode, 2, "--stacks INPUT: usage error")
    C.eq(open(copy, "rb").read(), before, "--stacks INPUT: the input is untouched")
    link = os.path.join(tmp, "link.json")
    os.symlink(copy, link)
    C.eq(te.run_tool(["averages", "--stacks", link, copy]).returncode, 2,
         "--stacks a link to the input: usage error")
    C.eq(te.run_tool(["averages", "--stacks", "-", copy]).returncode, 2, "--stacks -: refused")
    C.eq(te.run_tool(["averages", "--stacks-metric", "device", copy]).returncode, 2,
         "--stacks-metric without --stacks: usage error")
    C.eq(te.run_tool(["averages", "--stacks", os.path.join(tmp, "o"), "--stacks-metric", "gpu",
                      copy]).returncode, 2, "--stacks-metric gpu: usage error")
    out = os.path.join(tmp, "keep.folded")
    with open(out, "w") as f:
        f.write("old\n")
    C.eq(te.run_tool(["averages", "--stacks", out, os.path.join(tmp, "missing.json")]).returncode,
         4, "missing input: exit 4")
    C.eq(open(out).read(), "old\n", "a failed run leaves OUT as it was")
    C.eq(te.run_tool(["averages", "--stacks", os.path.join(tmp, "no", "dir.folded"),
                      copy]).returncode, 4, "OUT in a missing directory: exit 4")
    if run_ok(["averages", "--stacks", out, copy], "replace OUT"):
        C.eq(open(out).read(), "train.py(10):_<module>;train.py(5):_step;aten::mm 40\n"
             "train.py(10):_<module>;train.py(5):_step;cudaLaunchKernel 10\n",
             "OUT replaced whole")
    C.eq([n for n in os.listdir(tmp) if ".folded." in n], [], "no temporary file left")


def main():
    if not os.access(te.tracetool_path(), os.X_OK):
        C.check(False, "tracetool binary exists", te.tracetool_path())
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_stacks_") as tmp:
        C.section("tables", check_tables)
        C.section("rows", check_rows)
        C.section("collapsed", check_collapsed, tmp)
        C.section("db and metric", check_db_and_metric, tmp)
        C.section("gpu and ranks", check_gpu_and_ranks, tmp)
        C.section("synthetic", check_synthetic, tmp)
        C.section("no stacks", check_no_stacks, tmp)
        C.section("output rules", check_output_rules, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
