#!/usr/bin/env python3
"""`tracetool diff`, the CI gate, on real traces.

Expected values come from this script (standard library only), reading the
traces itself: the device step time of a step is its device end (the moment
by which 99% of the busy time of the GPU activities -- kernel, memcpy,
memset -- whose runtime call (same correlation id) starts inside the step's
ProfilerStep#N span is done) minus that of the step before;
the per-step GPU activity counts likewise. docs/DIFF.md quotes the same
figures for this pair (76.8 -> 116.7 ms, p = 1/252 with 5 steps a side).

- hta/trace_diff control vs test (A100 8 ranks vs V100 2 ranks): exit 6
  (not comparable); with --allow-env-mismatch exit 1, the device step times
  equal the ones computed here, p = 1/252, the per-step counts, the rows of
  torch.compile's CompiledFunction (added) and cutlass::Kernel (removed);
  swapped: improved, exit 0; --step-clock cpu: 6 v 6, p = 1/924.
- A/A within one run (steps 1009-1011 vs 1012-1014): exit 0; with
  --threshold 2 inconclusive (too few steps), --fail-on-inconclusive exit 6.
- self-diff of every shared Kineto trace: exit 0, every delta 0; the JSON
  of two runs byte-identical.
- real A/B pairs made by PyTorch 1.13 (tests/fixtures/diff): A/A in two
  processes does not gate; a planted op worth ~25% of a step gates (exit 1)
  and is the top contributor; a tiny planted op does not gate and shows as
  count changes.
- HTA's trace_compare pair: the same added / removed ops as HTA's tests.
- matching: kernel-family coverage of the pair >= 85% / 99% (docs/DIFF.md);
  --rename folds keys (a bad regex exits 3 naming the line); --match op.
- ranks: param/dlrm_8rank ranks 0-3 vs 4-7: no gated regression, by the
  slowest rank (default) and per rank (--rank-agg each --rank-map).
- --save-summary: the diff from a saved summary is byte-identical to the diff
  from the traces; a truncated summary exits 3.
- the reports: JUnit XML parses with failures, GitHub workflow commands,
  --markdown/--json/--junit files, $GITHUB_STEP_SUMMARY appended.
- usage errors exit 2, an ET alone or not-a-trace exit 3, a missing file 4.
- issue 29 (a hostile tester): no output replaces an input (same file,
  links, a trace in an input directory, $GITHUB_STEP_SUMMARY, the --rename
  file); an input on a FIFO is read once; --rename rules are bounded
  (nested {m,n}, long lines, a directory); --rank-agg each without rank pairs
  is not comparable, with no "nan" in any format; summaries recognised by
  parsing (re-indented, sorted keys, a future schema named), keys kept whole;
  --gate with an empty item; a memory timeline named as one; times near the
  ends of int64 (UBSan).
- issue 24: a trace file and each file of a rank directory are read without
  a temporary database (TT_DEBUG_DIFF); a database gives the same result; a
  file whose rows need the SQL passes is read twice, to the same result.
- issue 22: op and kernel names with quotes, <, ]]>, newlines, ::, %0A, ESC
  keep every format valid (JSON, JUnit names round-trip, one GitHub command
  per line with no raw control character, CSV); --format table and csv;
  no share of a step change under 1%; 1,646-byte kernel names kept whole;
  trace_compare's straggling kernel does not move the device step time;
  the slowest rank of single-step traces (dlrm, rank 3 slowed 1.5x); a side
  without ProfilerStep#N against one with is not comparable.
"""
import decimal
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("diff")
SHARED = te.shared_dir()
TOOL = te.tracetool_path()
CTRL = os.path.join(SHARED, "testdata", "hta", "trace_diff", "control", "control.json.gz")
TEST = os.path.join(SHARED, "testdata", "hta", "trace_diff", "test", "test.json.gz")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
RT_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "Driver"}


def run(args, env=None):
    return subprocess.run([TOOL, "diff"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env)


def ns(us):
    """µs (a Decimal: the trace's own digits) to integer ns"""
    return int(decimal.Decimal(us) * 1000)


def device_end(iv):
    """a step's device end: the moment by which 99% of the busy time (the union
    of its activities' intervals) is done, in integer ns (the last end when
    there is no busy time)"""
    blocks = []
    for a, b in sorted(iv):
        if blocks and a <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], b)
        else:
            blocks.append([a, b])
    tot = sum(b - a for a, b in blocks)
    if tot == 0:
        return max(b for _, b in iv)
    need, done = tot - tot // 100, 0
    for a, b in blocks:
        if b - a >= need - done:
            return a + (need - done)
        done += b - a
    return blocks[-1][1]


def expected(path):
    """per step number: (cpu span, device end, kernels, memcpys, memsets)"""
    doc = json.loads(te.read_bytes(path), parse_float=decimal.Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = []
    for e in evs:
        if (e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                and e.get("cat") != "gpu_user_annotation"):
            steps.append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"][13:])))
    steps.sort()
    rt = {}
    for e in evs:
        a = e.get("args") or {}
        if e.get("cat") in RT_CATS and "correlation" in a:
            rt[a["correlation"]] = ns(e["ts"])
    per = {s[2]: [0, 0, 0, None] for s in steps}
    iv = {}
    for e in evs:
        if e.get("cat") not in GPU_CATS or e.get("ph") != "X":
            continue
        a = e.get("args") or {}
        t = rt.get(a.get("correlation"), ns(e["ts"]))
        for lo, hi, num in steps:
            if lo <= t < hi:
                p = per[num]
                k = {"kernel": 0, "Kernel": 0, "gpu_memcpy": 1, "Memcpy": 1}.get(e["cat"], 2)
                p[k] += 1
                iv.setdefault(num, []).append((ns(e["ts"]), ns(e["ts"]) + max(0, ns(e.get("dur", 0)))))
                break
    for num, v in iv.items():
        per[num][3] = device_end(v)
    nums = [s[2] for s in steps]
    dev = [per[b][3] - per[a][3] for a, b in zip(nums, nums[1:])
           if per[a][3] is not None and per[b][3] is not None and per[b][3] >= per[a][3]]
    cpu = [hi - lo for lo, hi, _ in steps]
    return dev, cpu, per


def metric(doc, mid):
    for m in doc["metrics"]:
        if m["id"] == mid:
            return m
    return None


def row(doc, kind, key):
    for r in doc["rows"]:
        if r["kind"] == kind and r["key"] == key:
            return r
    return None


def close(a, b, tol):
    return abs(a - b) <= tol


def check_pair(d):
    p = run([CTRL, TEST])
    C.eq(p.returncode, 6, "control vs test: not comparable (exit 6)")
    C.check(p.stdout.decode().startswith("NOT COMPARABLE: GPU NVIDIA A100-PG509-200 vs Tesla"
                                         " V100-SXM2-16GB, world size 8 vs 2"),
            "control vs test: the reason line", p.stdout.decode()[:200])
    p = run(["--allow-env-mismatch", "--format", "json", CTRL, TEST])
    C.eq(p.returncode, 1, "--allow-env-mismatch: regression (exit 1)")
    doc = json.loads(p.stdout)
    C.eq(doc["schema"], "tracetool.diff/1", "json schema")
    m = metric(doc, "device_step_time")
    bdev, bcpu, bper = expected(CTRL)
    ndev, ncpu, nper = expected(TEST)
    C.eq(sorted(m["base"]["samples"]), sorted(bdev), "device step times of control (computed here)")
    C.eq(sorted(m["new"]["samples"]), sorted(ndev), "device step times of test (computed here)")
    C.check(close(m["base"]["value"] / 1e6, 76.8, 0.05) and close(m["new"]["value"] / 1e6, 116.7, 0.05),
            "medians 76.8 -> 116.7 ms", (m["base"]["value"], m["new"]["value"]))
    C.check(close(m["p"], 1 / 252, 1e-6), "p = 1/252", m["p"])
    C.eq((m["base"]["n"], m["new"]["n"], m["verdict"]), (5, 5, "regressed"), "n 5/5, regressed")
    for mid, k in (("kernels_per_step", 0), ("memcpy_per_step", 1), ("memset_per_step", 2)):
        mm = metric(doc, mid)
        C.eq(sorted(mm["base"]["samples"]), sorted(v[k] for v in bper.values()),
             "%s of control (computed here)" % mid)
        C.eq(sorted(mm["new"]["samples"]), sorted(v[k] for v in nper.values()),
             "%s of test (computed here)" % mid)
    C.eq((metric(doc, "kernels_per_step")["base"]["value"], metric(doc, "kernels_per_step")["new"]["value"]),
         (1428, 1555), "kernels per step 1428 -> 1555")
    C.eq((metric(doc, "memcpy_per_step")["base"]["value"], metric(doc, "memcpy_per_step")["new"]["value"]),
         (38, 803), "memcpy per step 38 -> 803")
    cf = row(doc, "op", "CompiledFunction")
    C.check(cf is not None and cf["status"] == "added", "CompiledFunction added", cf)
    ck = row(doc, "kernel", "cutlass::Kernel")
    C.check(ck is not None and ck["status"] == "removed", "cutlass::Kernel removed", ck)
    sg = row(doc, "kernel", "ARCH_sgemm_TILE")
    C.check(sg is not None and sg["status"] == "count changed" and sg["delta_ns"] > 0,
            "the sgemm family (volta_/ampere_ folded) grew", sg)
    nc = row(doc, "kernel", "nccl:allreduce:f32")
    C.check(nc is not None and nc["verdict"] == "not gated", "NCCL row keyed, never gated", nc)
    p = run(["--allow-env-mismatch", TEST, CTRL])
    C.eq(p.returncode, 0, "swapped: exit 0")
    C.check(p.stdout.decode().startswith("IMPROVEMENT: device step time"), "swapped: improvement",
            p.stdout.decode()[:120])
    p = run(["--allow-env-mismatch", "--step-clock", "cpu", "--format", "json", CTRL, TEST])
    m = json.loads(p.stdout)["metrics"][0]
    C.eq(m["id"], "cpu_step_time", "--step-clock cpu: the CPU step time is gated")
    C.eq(sorted(m["base"]["samples"]), sorted(bcpu), "CPU step times of control (computed here)")
    C.check(close(m["p"], 1 / 924, 1e-7) and (m["base"]["n"], m["new"]["n"]) == (6, 6),
            "--step-clock cpu: 6 v 6, p = 1/924", (m["p"], m["base"]["n"]))


def check_aa():
    a = ["--steps", "1009-1011", "--new-steps", "1012-1014", CTRL, CTRL]
    p = run(a)
    C.eq(p.returncode, 0, "A/A within one run: exit 0")
    C.check(p.stdout.decode().startswith("NO CHANGE: device step time +2.5%"), "A/A: +2.5%, unchanged",
            p.stdout.decode()[:100])
    p = run(["--threshold", "2", "--format", "json"] + a)
    m = json.loads(p.stdout)["metrics"][0]
    C.eq((p.returncode, m["verdict"]), (0, "inconclusive"), "--threshold 2: inconclusive, exit 0")
    C.check("at least 5 a side" in m["note"], "the note says how many steps would do", m["note"])
    C.eq(run(["--threshold", "2", "--fail-on-inconclusive"] + a).returncode, 6,
         "--fail-on-inconclusive: exit 6")


def kineto_traces():
    out = []
    for root in (os.path.join(SHARED, "testdata"), os.path.join(ROOT, "testdata", "kineto")):
        for dp, _, fs in os.walk(root):
            for f in sorted(fs):
                if f.endswith((".json", ".json.gz")) and "/et" not in dp and "_et" not in f \
                        and "chakra" not in dp:
                    out.append(os.path.join(dp, f))
    return sorted(out)


def check_self(d):
    traces = kineto_traces()
    C.check(len(traces) >= 20, "self-diff: traces found", len(traces))
    bad = []
    for t in traces:
        p = run(["--format", "json", t, t])
        if p.returncode != 0:
            bad.append((t, p.returncode, p.stderr.decode()[-200:]))
            continue
        doc = json.loads(p.stdout)
        if any(r["delta_ns"] != 0 or r["status"] != "matched" for r in doc["rows"]) or \
                any(m["base"]["value"] != m["new"]["value"] for m in doc["metrics"]):
            bad.append((t, "a delta", ""))
    C.eq(bad, [], "self-diff of every shared Kineto trace: exit 0, every delta 0")
    a = run(["--format", "json", "--allow-env-mismatch", CTRL, TEST]).stdout
    b = run(["--format", "json", "--allow-env-mismatch", CTRL, TEST]).stdout
    C.check(a == b and len(a) > 1000, "two runs: byte-identical JSON")


def check_reports(d):
    md, js, ju, summ = (os.path.join(d, n) for n in ("r.md", "r.json", "r.xml", "summary.md"))
    open(summ, "w").write("earlier step\n")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=summ)
    p = run(["--allow-env-mismatch", "--format", "github", "--markdown", md, "--json", js,
             "--junit", ju, CTRL, TEST], env=env)
    C.eq(p.returncode, 1, "reports: exit 1")
    lines = p.stdout.decode().splitlines()
    C.check(any(l.startswith("::error title=tracetool diff::device_step_time regressed") for l in lines),
            "github: an ::error for the step time", lines[:3])
    C.check(any(l.startswith("::warning title=tracetool diff::compared although") for l in lines),
            "github: a ::warning for the environment", lines[:3])
    root = ET.parse(ju).getroot()
    # the step time, and the rows that grew (calls per step, shares: gated
    # with the step since issue 22)
    C.check(root.tag == "testsuite" and int(root.get("failures")) >= 1, "junit: failures",
            root.get("failures"))
    # the constraints of the common JUnit schema (Jenkins junit-10.xsd): the
    # suite's counts and the testcases' names, a message and type on failures
    C.check(all(root.get(a) is not None for a in ("name", "tests", "failures", "errors", "skipped", "time"))
            and int(root.get("tests")) == len(root.findall("testcase")), "junit: the suite's attributes")
    C.check(root.findall("testcase") and
            all(tc.get("name") and tc.get("classname") and tc.get("time") is not None
                for tc in root.findall("testcase")), "junit: every testcase has name, classname, time")
    C.check(list(root.iter("failure")) and
            all(f.get("message") and f.get("type") for f in root.iter("failure")),
            "junit: failures carry message and type")
    C.check(set(ch.tag for ch in root) <= {"testcase", "system-out", "system-err", "properties"},
            "junit: only testcases and output in the suite")
    C.check(any(tc.find("failure") is not None and tc.get("name") == "device_step_time"
                for tc in root.iter("testcase")), "junit: the step time failed")
    with open(js) as f:
        C.eq(json.load(f)["exit_code"], 1, "--json file")
    with open(md) as f:
        text = f.read()
    C.check(text.startswith("### tracetool diff: REGRESSION") and "| Metric |" in text,
            "--markdown file", text[:100])
    with open(summ) as f:
        s = f.read()
    C.check(s.startswith("earlier step\n### tracetool diff: REGRESSION"),
            "$GITHUB_STEP_SUMMARY appended", s[:80])


FIX = os.path.join(ROOT, "tests", "fixtures", "diff")


def check_torch_pairs():
    """Real A/B pairs made by PyTorch 1.13 (tests/fixtures/make_diff_fixtures.py),
    each run in its own process, 16 steps a run."""
    a1, a2 = os.path.join(FIX, "a1.trace.json.gz"), os.path.join(FIX, "a2.trace.json.gz")
    planted, small = os.path.join(FIX, "planted.trace.json.gz"), os.path.join(FIX, "small.trace.json.gz")
    for x, y in ((a1, a2), (a2, a1)):
        p = run(["--format", "json", x, y])
        doc = json.loads(p.stdout)
        C.check(p.returncode == 0 and doc["metrics"][0]["verdict"] in ("unchanged", "improved"),
                "torch A/A (%s vs %s): no gate" % (os.path.basename(x), os.path.basename(y)),
                (p.returncode, doc["summary"]))
        C.eq((doc["metrics"][0]["base"]["n"], doc["metrics"][0]["new"]["n"]), (16, 16), "A/A: 16 steps a side")
    p = run(["--format", "json", a1, planted])
    doc = json.loads(p.stdout)
    C.eq((p.returncode, doc["metrics"][0]["id"], doc["metrics"][0]["verdict"]),
         (1, "cpu_step_time", "inconclusive"),
         "torch planted ~25% op: exit 1 (one run a side: the step time is inconclusive, the"
         " planted op's row gates)")
    top = doc["rows"][0]
    C.eq((top["key"], top["status"]), ("planted_extra", "added"), "the planted op is the top contributor")
    C.check(top["verdict"] == "regressed" and top["delta_ns"] > 0 and top["new_share"] > 0.1,
            "the planted op regressed: added, over a tenth of NEW's step", top)
    # per-op gates (opt-in): the planted op and the matmul inside it, nothing
    # in A/A (Benjamini-Hochberg across rows), nothing for the tiny op
    doc = json.loads(run(["--gate", "+ops,kernels", "--format", "json", a1, planted]).stdout)
    gated = sorted(r["key"] for r in doc["rows"] if r["verdict"] == "regressed")
    C.eq(gated, ["aten::mm", "planted_extra"], "--gate +ops: the planted op (added) and its matmul")
    for x, y in ((a1, a2), (a2, a1), (a1, small)):
        doc = json.loads(run(["--gate", "+ops,kernels", "--format", "json", x, y]).stdout)
        C.check(doc["exit_code"] == 0 and not [r for r in doc["rows"] if r["verdict"] == "regressed"],
                "--gate +ops: no row gated (%s vs %s)" % (os.path.basename(x), os.path.basename(y)),
                [r["key"] for r in doc["rows"] if r["verdict"] == "regressed"])
    p = run(["--format", "json", a1, small])
    doc = json.loads(p.stdout)
    C.eq((p.returncode, doc["metrics"][0]["verdict"]), (0, "unchanged"),
         "torch tiny planted op: no gate, exit 0")
    changed = {r["key"]: (r["base_count"], r["new_count"]) for r in doc["rows"]
               if r["status"] == "count changed"}
    C.check(changed.get("aten::zeros") == (2, 3) and changed.get("aten::add_") == (12, 13),
            "the tiny change is listed as count changes (aten::zeros, aten::add_ +1 a step)", changed)


def check_hta_parity():
    """HTA's own unit-test pair (tests/test_trace_diff.py: rank 1, step 1010):
    added AddmmBackward0, All2All_Pooled_Req, CatBackward0; removed
    nccl:all_reduce; one GPU kernel whose count went down."""
    base = os.path.join(SHARED, "testdata", "hta", "trace_compare", "base")
    test = os.path.join(SHARED, "testdata", "hta", "trace_compare", "test")
    if not os.path.isdir(base):
        C.skip("hta/trace_compare", "missing")
        return
    p = run(["--steps", "1010", "--format", "json", base, test])
    C.eq(p.returncode, 0, "trace_compare: one step a side, exit 0")
    doc = json.loads(p.stdout)
    rows = doc["rows"]
    cpu = [r for r in rows if r["kind"] in ("op", "runtime")]
    C.eq(sorted(r["key"] for r in cpu if r["status"] == "added"),
         ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], "trace_compare: added ops")
    C.eq(sorted(r["key"] for r in cpu if r["status"] == "removed"), ["nccl:all_reduce"],
         "trace_compare: removed ops")
    gpu_down = [r for r in rows if r["kind"] == "kernel" and r["new_count"] < r["base_count"]]
    C.eq(len(gpu_down), 1, "trace_compare: one kernel fewer")
    cats = {"=": 0, "+": 0, "-": 0}
    for r in cpu:
        cats["=" if r["base_count"] == r["new_count"] else "+" if r["new_count"] > r["base_count"] else "-"] += 1
    C.eq(cats, {"=": 5, "+": 3, "-": 1}, "trace_compare: HTA's CPU count change categories")
    # one 4 us kernel fewer, which ran 52 ms after the others: no change of the
    # device step time (issue 22: it was -94%, inconclusive)
    C.eq(doc["metrics"][0]["verdict"], "unchanged", "trace_compare: one step: unchanged")


def synthetic(path, steps, ops, rank=None, world=None):
    """A CPU trace: ProfilerStep#1..steps, each holding ops [(name, dur_us)]
    (of that rank of world ranks, when given)."""
    evs, t = [], 1000
    for s in range(1, steps + 1):
        span = sum(d for _, d in ops) + 10
        evs.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1,
                    "tid": 1, "ts": t, "dur": span})
        u = t + 5
        for name, dur in ops:
            evs.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": u,
                        "dur": dur})
            u += dur
        t += span + 50
    doc = {"schemaVersion": 1, "traceEvents": evs}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank, "world_size": world}
    with open(path, "w") as f:
        json.dump(doc, f)


def check_escaping_and_cut(d):
    base, new = os.path.join(d, "sb.json"), os.path.join(d, "sn.json")
    evil = "evil%op\nline"
    synthetic(base, 6, [("aten::mm", 1000), (evil, 100)])
    synthetic(new, 6, [("aten::mm", 1000), (evil, 400)])
    p = run(["--gate", "+ops", "--format", "github", base, new])
    out = p.stdout.decode()
    C.eq(p.returncode, 1, "synthetic: a regression (exit 1)")
    C.check("::error title=tracetool diff::op evil%25op%0Aline regressed" in out,
            "github: % and newline escaped in a workflow command", out)
    C.check(all(l.startswith("::") for l in out.splitlines()), "github: one command per line")
    # a Markdown report over 1 MiB is cut in $GITHUB_STEP_SUMMARY
    ops = [("op_%05d_%s" % (i, "x" * 60), 10) for i in range(9000)]
    synthetic(base, 2, ops[:4500])
    synthetic(new, 2, ops[4500:])
    summ = os.path.join(d, "big_summary.md")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=summ)
    p = run(["--top", "100000", "--markdown", os.path.join(d, "big.md"), base, new], env=env)
    full = os.path.getsize(os.path.join(d, "big.md"))
    got = open(summ).read()
    C.check(full > 1024 * 1024, "synthetic: the full Markdown report is over 1 MiB", full)
    C.check(len(got.encode()) <= 1024 * 1024 and "lines omitted" in got.splitlines()[-1],
            "$GITHUB_STEP_SUMMARY: cut below 1 MiB, says how much was left out",
            (len(got), got.splitlines()[-1][:80]))


def check_summary(d):
    """--save-summary: a small file that stands for a side; the diff from it is
    the diff from the traces, byte for byte"""
    # a CI baseline is kept gzipped (the name says so); a full summary of the
    # 35 MB control trace is ~0.8 MB of JSON, ~140 kB gzipped
    cs, ts = os.path.join(d, "c.sum.json.gz"), os.path.join(d, "t.sum.json.gz")
    p = run(["--save-summary", cs, CTRL])
    C.eq((p.returncode, p.stdout), (0, b""), "--save-summary with one side: exit 0, no report")
    C.check(os.path.getsize(cs) < os.path.getsize(CTRL) / 10, "the summary is small",
            os.path.getsize(cs))
    with gzip.open(cs, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    C.check(doc["schema"] == "tracetool.summary/1" and len(doc["traces"][0]["diff"]["keys"]) > 10,
            "the saved summary: a tracetool.summary/1 with the trace's diff section",
            doc["schema"])
    want = run(["--allow-env-mismatch", "--format", "json", CTRL, TEST]).stdout
    got = run(["--allow-env-mismatch", "--format", "json", cs, TEST]).stdout
    C.check(got == want, "summary vs trace: the same JSON as trace vs trace")
    p = run(["--allow-env-mismatch", "--save-summary", ts, CTRL, TEST])
    C.eq(p.returncode, 1, "--save-summary beside a diff: the diff's exit code")
    got = run(["--allow-env-mismatch", "--format", "json", cs, ts]).stdout
    C.check(got == want, "summary vs summary (NEW saved by the diff): the same JSON")
    got = run(["--allow-env-mismatch", "--steps", "1012-1014", "--format", "json", cs, TEST]).stdout
    doc = json.loads(got)
    C.eq(doc["metrics"][0]["base"]["n"], 3, "--steps applies to a summary's samples")
    bad = os.path.join(d, "bad.sum.json")
    with gzip.open(cs, "rt", encoding="utf-8") as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text[:len(text) // 2])
    p = run([bad, TEST])
    C.eq(p.returncode, 3, "a truncated summary: bad input (3)")
    C.check("bad.sum.json" in p.stderr.decode() and p.stderr.decode().count("\n") == 1,
            "one line naming it", p.stderr.decode())


def check_matching(d):
    """kernel families cover the pair as docs/DIFF.md measured (>= 85% / 99%);
    --rename folds keys; --match op keys kernels by their launching op"""
    doc = json.loads(run(["--allow-env-mismatch", "--format", "json", CTRL, TEST]).stdout)
    cov = doc["coverage"]["kernel_time"]
    C.check(cov["base"] >= 0.85 and cov["new"] >= 0.99, "family coverage of kernel time", cov)
    ren = os.path.join(d, "rename.txt")
    with open(ren, "w") as f:
        f.write("# the GEMMs of both libraries are one\n"
                "^(cutlass::Kernel|ARCH_sgemm_TILE|magma_sgemmEx_kernel)$ => GEMM(\\1)\n"
                "^GEMM\\(.*\\)$ => GEMM\n")
    doc = json.loads(run(["--allow-env-mismatch", "--rename", ren, "--format", "json", CTRL, TEST]).stdout)
    keys = {r["key"]: r for r in doc["rows"] if r["kind"] == "kernel"}
    C.check("GEMM" in keys and keys["GEMM"]["status"] != "added" and "cutlass::Kernel" not in keys,
            "--rename: both sides' GEMMs are one key", sorted(keys)[:5])
    C.check(doc["coverage"]["kernel_time"]["base"] > cov["base"], "--rename raises the coverage")
    with open(ren, "w") as f:
        f.write("bad( => x\n")
    p = run(["--rename", ren, CTRL, CTRL])
    C.eq(p.returncode, 3, "--rename with a bad regex: bad input (3)")
    C.check("rename.txt: line 1" in p.stderr.decode(), "names the file and line", p.stderr.decode())
    doc = json.loads(run(["--allow-env-mismatch", "--match", "shape", "--format", "json", CTRL, TEST]).stdout)
    mm = [r["key"] for r in doc["rows"] if r["kind"] == "op" and r["key"].startswith("aten::mm ")]
    C.check("aten::mm [[100,1024],[1024,256]]" in mm, "--match shape: ops by name and input shapes", mm[:3])
    doc = json.loads(run(["--match", "shape", "--format", "json", CTRL, CTRL]).stdout)
    C.check(doc["rows"] and all(r["delta_ns"] == 0 for r in doc["rows"]),
            "--match shape: self-diff all zero", len(doc["rows"]))
    doc = json.loads(run(["--allow-env-mismatch", "--match", "op", "--format", "json", CTRL, TEST]).stdout)
    keys = {r["key"]: r for r in doc["rows"] if r["kind"] == "kernel"}
    C.check(keys.get("launched by aten::mm", {}).get("status") == "count changed" and
            keys.get("launched by CompiledFunction", {}).get("status") == "added",
            "--match op: kernels by the op that launched them", sorted(keys)[:6])


def check_ranks(d):
    """param/dlrm_8rank, ranks 0-3 against 4-7: no gated regression, by the
    slowest rank per step (default) or per rank with --rank-map"""
    k = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
    files = sorted(os.listdir(k)) if os.path.isdir(k) else []
    w = {int(f.split("_")[0][6:]): os.path.join(k, f) for f in files if f.startswith("worker")}
    if len(w) != 8:
        C.skip("dlrm_8rank", "missing")
        return
    args = []
    for r in range(4):
        args += ["-b", w[r], "-n", w[r + 4]]
    p = run(["--format", "json"] + args)
    doc = json.loads(p.stdout)
    C.eq(p.returncode, 0, "dlrm ranks 0-3 vs 4-7: no gated regression")
    C.check("8 vs" not in doc["environment"]["mismatch"] and "4 traces" in doc["environment"]["base"],
            "dlrm: 4 traces a side, comparable", doc["environment"])
    p = run(["--format", "json", "--rank-agg", "each", "--rank-map", "0:4,1:5,2:6,3:7"] + args)
    doc = json.loads(p.stdout)
    per = [m for m in doc["metrics"] if " rank " in m["id"]]
    C.eq(p.returncode, 0, "--rank-agg each: exit 0")
    C.eq([m["id"] for m in per], ["cpu_step_time rank %d vs %d" % (r, r + 4) for r in range(4)],
         "--rank-agg each --rank-map: one metric per rank pair")
    C.check(all(m["verdict"] != "regressed" for m in per), "no rank regressed")
    summ = os.path.join(d, "dlrm.sum.json")
    base = []
    for r in range(4):
        base += ["-b", w[r]]
    news = []
    for r in range(4):
        news += ["-n", w[r + 4]]
    C.eq(run(["--save-summary", summ, "--rank-agg", "each"] + base).returncode, 0,
         "--save-summary of ranks 0-3")
    p2 = run(["--format", "json", "--rank-agg", "each", "--rank-map", "0:4,1:5,2:6,3:7", "-b", summ] + news)
    # the summary of four inputs is called by their directory (docs/DIFF.md)
    doc, doc2 = json.loads(p.stdout), json.loads(p2.stdout)
    for x in (doc, doc2):
        x["environment"]["base"] = x["environment"]["base"].split(": GPU ")[1]
    C.check(doc2 == doc, "a saved side keeps its ranks: the same JSON (but BASE's name)",
            p2.stderr.decode()[-200:])


def check_scaling(d):
    """linear in the steps: N and 4N steps of 40 ops a side, at most ~5x the time"""
    times = []
    for n in (150, 600):
        b, nw = os.path.join(d, "lb%d.json" % n), os.path.join(d, "ln%d.json" % n)
        ops = [("op_%d" % i, 20 + i) for i in range(40)]
        synthetic(b, n, ops)
        synthetic(nw, n, ops[:-1] + [("op_new", 30)])
        for f in (b, nw):  # ingest once: time the diff, not the parse
            subprocess.run([TOOL, "ingest", "-q", f + ".db", f], check=True)
        best = None
        for _ in range(3):  # best of 3: a busy machine slows single runs
            t0 = time.perf_counter()
            p = run(["--format", "json", b + ".db", nw + ".db"])
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        times.append(best)
        # op_new (30 us, about 2% of a step) is added: a structural regression
        C.eq(p.returncode, 1, "scaling: %d steps a side: exit 1 (an op added)" % n)
    # a ratio, t(N) floored at 150 ms (process start-up dominates below it)
    C.check(times[1] <= 8 * max(times[0], 0.15), "diff time linear in steps (4x steps: %.2f -> %.2f s)"
            % tuple(times))


BAD_INPUTS = [
    ("empty", b""),
    ("whitespace", b"  \n\t "),
    ("not JSON", b"hello"),
    ("a number", b"42\n"),
    ("empty object", b"{}"),
    ("traceEvents not an array", b'{"traceEvents": 5}'),
    ("truncated", b'{"traceEvents": ['),
    ("data after the document", b'{"traceEvents": []}\n  x'),
    ("bad token", b'{"traceEvents":[{"ph":X}]}'),
]


def check_bad_inputs(d):
    """every refused input: the same one line as `ingest` gives (file, byte,
    what), on either side, the same exit code, nothing on stdout"""
    good = os.path.join(d, "good.json")
    synthetic(good, 2, [("aten::mm", 10)])
    for label, data in BAD_INPUTS + [("gzip with a syntax error", None)]:
        path = os.path.join(d, "bad_%s.json" % label.replace(" ", "_"))
        with open(path, "wb") as f:
            if data is None:
                import gzip
                f.write(gzip.compress(b'{"traceEvents":[{"ph":"X","ts":1.2.3}]}'))
            else:
                f.write(data)
        db = os.path.join(d, "bad.db")
        if os.path.exists(db):
            os.unlink(db)
        ing = subprocess.run([TOOL, "ingest", "-q", db, path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        for args in ([path, good], [good, path]):
            p = run(args)
            lines = p.stderr.decode().splitlines()
            C.check(p.returncode == ing.returncode and p.returncode in (3, 4) and p.stdout == b""
                    and lines == ing.stderr.decode().splitlines() and len(lines) == 1,
                    "bad input (%s, %s): as ingest refuses it" % (label, "BASE" if args[0] == path else "NEW"),
                    (p.returncode, ing.returncode, lines, ing.stderr.decode()))
    # names with control characters cannot forge report lines
    evil = os.path.join(d, "evil.json")
    synthetic(evil, 2, [("aten::mm", 10), ("fake\nREGRESSION: forged\x1b[2J", 5)])
    p = run([good, evil])
    out = p.stdout.decode()
    C.check(p.returncode in (0, 1) and "\nREGRESSION: forged" not in out and "\x1b" not in out,
            "control characters in a key are shown escaped in the text report", out[-400:])


def check_errors(d):
    C.eq(run([]).returncode, 2, "no inputs: usage (2)")
    C.eq(run(["--gate", "speed", CTRL, CTRL]).returncode, 2, "bad --gate: usage (2)")
    C.eq(run(["--threshold", "-1", CTRL, CTRL]).returncode, 2, "bad --threshold: usage (2)")
    C.eq(run(["--rank-map", "0-4", CTRL, CTRL]).returncode, 2, "bad --rank-map: usage (2)")
    et = os.path.join(SHARED, "testdata", "param", "et_only", "pt2_et.json.gz")
    p = run([et, et])
    C.eq(p.returncode, 3, "an ET alone: bad input (3)")
    C.check(p.stderr.decode().count("\n") == 1 and "pt2_et.json.gz" in p.stderr.decode(),
            "one line naming the file", p.stderr.decode())
    bad = os.path.join(d, "bad.json")
    open(bad, "w").write("{not json")
    C.eq(run([bad, CTRL]).returncode, 3, "not JSON: bad input (3)")
    C.eq(run([os.path.join(d, "missing.json"), CTRL]).returncode, 4, "missing file: 4")
    p = run(["--json", "/nonexistent/dir/r.json", CTRL, CTRL])
    C.eq(p.returncode, 4, "unwritable --json: 4")


# ---- issue 29: what a hostile tester found ----

def digest(path):
    with open(path, "rb") as f:
        return f.read()


def one_line(p, *words):
    err = p.stderr.decode()
    return err.count("\n") == 1 and all(w in err for w in words)


def check_outputs_not_inputs(d):
    """no report, summary or $GITHUB_STEP_SUMMARY replaces an input: the same
    file (a symbolic or hard link too), a trace in an input directory, a -b/-n
    input, the --rename file; exit 2 before anything is read or written"""
    a, n = os.path.join(d, "o_a.json"), os.path.join(d, "o_n.json")
    synthetic(a, 6, [("aten::mm", 100)])
    synthetic(n, 6, [("aten::mm", 100)])
    db = os.path.join(d, "o_v.db")
    subprocess.run([TOOL, "ingest", "-q", db, a], check=True)
    sub = os.path.join(d, "o_dir")
    os.mkdir(sub)
    inside = os.path.join(sub, "x.json")
    synthetic(inside, 6, [("aten::mm", 100)])
    sym, hard = os.path.join(d, "o_sym.json"), os.path.join(d, "o_hard.json")
    os.symlink(a, sym)
    os.link(n, hard)
    ren = os.path.join(d, "o_rules.txt")
    with open(ren, "w") as f:
        f.write("^aten::(.*)$ => \\1\n")
    keep = {f: digest(f) for f in (a, n, db, inside, ren)}
    cases = [
        (["--save-summary", db, db, n], "--save-summary over the BASE database", db),
        (["--junit", n, a, n], "--junit over NEW", n),
        (["--json", inside, sub, n], "--json over a trace in BASE's directory", inside),
        (["--markdown", sym, a, n], "--markdown through a symbolic link to BASE", a),
        (["--json", hard, a, n], "--json on a hard link to NEW", n),
        (["--markdown", a, "-b", n, "-b", a, "-n", inside], "--markdown over a -b input", a),
        (["--json", ren, "--rename", ren, a, n], "--json over the --rename file", ren),
        (["--save-summary", inside, "-n", sub], "--save-summary of one side over its trace", inside),
    ]
    for args, label, victim in cases:
        p = run(args)
        C.check(p.returncode == 2 and p.stdout == b"" and
                one_line(p, "refusing to overwrite", os.path.basename(victim)),
                "%s: exit 2, one line naming it" % label, (p.returncode, p.stderr.decode()))
    env = dict(os.environ, GITHUB_STEP_SUMMARY=n)
    p = run([a, n], env=env)
    C.check(p.returncode == 2 and one_line(p, "$GITHUB_STEP_SUMMARY", "o_n.json"),
            "$GITHUB_STEP_SUMMARY naming NEW: exit 2, one line", (p.returncode, p.stderr.decode()))
    C.check(all(digest(f) == keep[f] for f in keep), "every input is untouched")
    out = os.path.join(d, "o_report.json")
    C.eq(run(["--json", out, a, n]).returncode, 0, "a new report beside the inputs: written")
    C.check(os.path.exists(out), "the report exists")


def check_fifo(d):
    """an input on a FIFO is read once (it was opened to look for a summary,
    closed unread, and the second open blocked forever)"""
    a = os.path.join(d, "f_a.json")
    synthetic(a, 6, [("aten::mm", 100)])
    fifo = os.path.join(d, "f_fifo")
    for what, src, code in (("a trace", a, 0), ("a summary", None, 3)):
        if src is None:
            src = os.path.join(d, "f_a.sum.json")
            subprocess.run([TOOL, "diff", "--save-summary", src, a], check=True)
        os.mkfifo(fifo)
        writer = subprocess.Popen(["sh", "-c", 'exec cat "$0" > "$1"', src, fifo],
                                  stderr=subprocess.DEVNULL)
        try:
            p = subprocess.run([TOOL, "diff", fifo, a], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            rc, err = p.returncode, p.stderr.decode()
        except subprocess.TimeoutExpired:
            rc, err = "hung (60 s)", ""
        if writer.poll() is None:
            writer.kill()
        writer.wait()
        os.unlink(fifo)
        C.eq(rc, code, "%s on a FIFO: read once, exit %d" % (what, code))
        if code:
            C.check(err.count("\n") == 1 and "regular file" in err,
                    "a summary on a FIFO: one line saying summaries are read from regular files",
                    err)


def memory_limit():
    """a cap on the address space (not under a sanitizer, whose shadow
    memory needs terabytes of it)"""
    if os.environ.get("TT_SANITIZED"):
        return None
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    return cap


def check_rename_bounds(d):
    """--rename: a rule whose nested bounds regcomp expands to millions of
    copies (it grew to 14.5 GB), an overlong line, a directory, rules that
    grow a key without end: one line naming file and line, bounded memory"""
    a = os.path.join(d, "r_a.json")
    synthetic(a, 2, [("aten::mm", 100)])
    ren = os.path.join(d, "r_rules.txt")
    cases = [
        ("# fine\n^aten => ATEN\na{1,255}{1,255}{1,255} => x\n", 3, ["line 3", "too costly"],
         "nested counted repetitions"),
        ("(((((x{1,100}){1,100}))))+ => y\n", 3, ["line 1", "too costly"], "bounds in groups"),
        ("a => b\n" + "x" * (10 << 20) + " => y\n", 3, ["line 2", "too long"], "a 10 MB line"),
        ("^(.*)$ => \\1\\1\n" * 40, 3, ["r_rules.txt", "line", "longer than"],
         "rules that double a key each"),
    ]
    for text, code, words, label in cases:
        with open(ren, "w") as f:
            f.write(text)
        try:
            p = subprocess.run([TOOL, "diff", "--rename", ren, a, a], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120, preexec_fn=memory_limit())
            C.check(p.returncode == code and one_line(p, "r_rules.txt", *words),
                    "--rename with %s: exit %d, one line (%s)" % (label, code, ", ".join(words)),
                    (p.returncode, p.stderr.decode()[:300]))
        except subprocess.TimeoutExpired:
            C.check(False, "--rename with %s: finishes" % label)
    p = run(["--rename", d, a, a])
    C.check(p.returncode == 2 and one_line(p, "is a directory"), "--rename DIR: exit 2, one line",
            (p.returncode, p.stderr.decode()))
    with open(ren, "w") as f:
        f.write("^aten::([a-z]+)$ => ATEN.\\1\n[0-9]{1,3}(x[0-9]{1,3}){0,3} => N\n")
    p = run(["--rename", ren, "--format", "json", a, a])
    C.check(p.returncode == 0 and any(r["key"] == "ATEN.mm" for r in json.loads(p.stdout)["rows"]),
            "ordinary rules still work", p.stderr.decode())


def check_rank_pairs(d):
    """--rank-agg each with no BASE rank that has its NEW rank: not
    comparable (it said NO CHANGE, exit 0), and no "nan" in any report"""
    r0, r1 = os.path.join(d, "k_r0.json"), os.path.join(d, "k_r1.json")
    synthetic(r0, 6, [("aten::mm", 100)], rank=0, world=2)
    synthetic(r1, 6, [("aten::mm", 100)], rank=1, world=2)
    md, js, ju = (os.path.join(d, "k_report" + x) for x in (".md", ".json", ".xml"))
    for fmt in ("text", "markdown", "json", "junit", "github"):
        for extra in ([], ["--fail-on-inconclusive"]):
            p = run(["--rank-agg", "each", "--format", fmt, "--markdown", md, "--json", js,
                     "--junit", ju] + extra + [r0, r1])
            out = p.stdout.decode()
            files = "".join(open(f).read() for f in (md, js, ju))
            C.eq(p.returncode, 6, "--rank-agg each, no rank pairs (%s%s): exit 6"
                 % (fmt, " " + extra[0] if extra else ""))
            C.check("nan" not in (out + files).lower(), "no nan in %s (nor the files)" % fmt,
                    [l for l in (out + files).splitlines() if "nan" in l.lower()][:3])
            C.check("NOT COMPARABLE: no BASE rank has a NEW rank" in out,
                    "%s: the headline says why" % fmt, out[:200])
    doc = json.loads(run(["--rank-agg", "each", "--format", "json", r0, r1]).stdout)
    C.eq((doc["verdict"], doc["exit_code"]), ("not comparable", 6), "json: not comparable")
    p = run(["--rank-agg", "each", "--rank-map", "0:1", r0, r1])
    C.eq(p.returncode, 0, "--rank-map 0:1 pairs them: exit 0")


def check_summary_parse(d):
    """a summary is recognised by parsing (re-indented, keys sorted), a
    future schema is named, and keys are kept whole (a 70 KB op name)"""
    a, n = os.path.join(d, "s_a.json"), os.path.join(d, "s_n.json")
    long_name = "op_" + "x" * 70000
    synthetic(a, 6, [("aten::mm", 1000), (long_name, 10)])
    synthetic(n, 6, [("aten::mm", 1100), (long_name, 10)])
    summ = os.path.join(d, "s_a.sum.json")
    C.eq(run(["--save-summary", summ, a]).returncode, 0, "saved")
    w = run(["--format", "json", a, n])
    want = w.stdout
    got = run(["--format", "json", summ, n]).stdout
    C.check(got == want and len(want) > 70000, "a 70 KB key: the diff from the summary is the"
            " diff from the trace", [len(r["key"]) for r in json.loads(got)["rows"]])
    with open(summ) as f:
        doc = json.load(f)
    for label, kw in (("re-indented", {"indent": 2}), ("keys sorted", {"indent": 1, "sort_keys": True})):
        other = os.path.join(d, "s_other.json")
        with open(other, "w") as f:
            json.dump(doc, f, **kw)
        p = run(["--format", "json", other, n])
        C.check(p.returncode == w.returncode and p.stdout == want,
                "a summary %s: read as one, the same diff"
                % label, p.stderr.decode())
    with open(os.path.join(ROOT, "tests", "fixtures", "diff", "a2.diff-summary-v1.json")) as f:
        old = json.load(f)  # a tracetool.diff-summary/1 (main 01ed10c's --save-summary)
    doc2 = dict(old, schema="tracetool.diff-summary/2")
    other = os.path.join(d, "s_v2.json")
    with open(other, "w") as f:
        json.dump(doc2, f, indent=2)
    p = run([other, n])
    C.check(p.returncode == 3 and one_line(p, "s_v2.json", "unsupported summary schema 2"),
            "a future schema: exit 3, 'unsupported summary schema 2'", p.stderr.decode())
    with open(other, "w") as f:
        json.dump(dict(doc, schema="tracetool.summary/2"), f, indent=2)
    p = run([other, n])
    C.check(p.returncode == 3 and one_line(p, "s_v2.json", "2"),
            "a future summary schema: exit 3, one line", p.stderr.decode())
    bad = dict(old, metrics=dict(old["metrics"], cpu_step_time=[-5] + old["metrics"]["cpu_step_time"][1:]))
    with open(other, "w") as f:
        json.dump(bad, f)
    p = run([other, n])
    C.check(p.returncode == 3 and one_line(p, "s_v2.json", "negative step time"),
            "a negative step time in a diff-summary/1: exit 3", p.stderr.decode())
    sec = doc["traces"][0]["diff"]
    sec["metrics"]["cpu_step_time"][0] = -5
    with open(other, "w") as f:
        json.dump(doc, f)
    p = run([other, n])
    C.check(p.returncode == 3 and one_line(p, "s_v2.json", "negative step time"),
            "a negative step time in a summary: exit 3", p.stderr.decode())
    report = os.path.join(d, "s_report.json")
    run(["--json", report, a, n])
    p = run([report, n])
    C.check(p.returncode == 3 and one_line(p, "s_report.json", "diff report"),
            "a diff report as an input: exit 3, says what it is", p.stderr.decode())


def check_low(d):
    """--gate with an empty item; a memory-timeline file named as what it is"""
    a = os.path.join(d, "l_a.json")
    synthetic(a, 6, [("aten::mm", 100)])
    for g in (",", "", "step,", "+", "step,,memory"):
        p = run(["--gate", g, a, a])
        C.check(p.returncode == 2 and one_line(p, "--gate"), "--gate '%s': usage (2)" % g,
                (p.returncode, p.stderr.decode()))
    src = os.path.join(ROOT, "testdata", "kineto", "resnet50_2021-06_trace.json.gz")
    for name in ("l_mt.json", "l_mt.raw.json.gz"):
        mt = os.path.join(d, name)
        subprocess.run([TOOL, "memtimeline", src, mt], stderr=subprocess.DEVNULL, check=True)
        p = run([mt, a])
        C.check(p.returncode == 3 and one_line(p, name, "memory timeline")
                and "Execution Trace" not in p.stderr.decode(),
                "a memory timeline (%s): exit 3, named as one" % name, p.stderr.decode())


def check_time_overflow(d):
    """times near the end of int64 (a database of an older tracetool, edited
    or hostile): the whole-trace step of a trace without ProfilerStep, whose
    end + 1 overflowed (UBSan), and a ProfilerStep#1 at 9.2e18 ns"""
    import sqlite3
    t = os.path.join(d, "t_big.json")
    with open(t, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
             "ts": 9200000000000000, "dur": 23372036854775},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
             "ts": 9200000000000001, "dur": 10}]}, f)
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    p = run([t, t], env=env)
    C.check(p.returncode in (0, 6) and b"runtime error" not in p.stderr,
            "ProfilerStep#1 at 9.2e18 ns: no overflow", p.stderr.decode()[-300:])
    for label, start, end in (("end at INT64_MAX", 9200000000000000000, 2 ** 63 - 1),
                              ("start at INT64_MIN", -2 ** 63, 2 ** 63 - 1)):
        a = os.path.join(d, "t_flat.json")
        with open(a, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm",
                                        "pid": 1, "tid": 1, "ts": 10, "dur": 5}]}, f)
        db = os.path.join(d, "t_%d.db" % (start < 0))
        subprocess.run([TOOL, "ingest", "-q", db, a], check=True)
        con = sqlite3.connect(db)
        con.execute("UPDATE traces SET start_ns = ?, end_ns = ?", (start, end))
        con.execute("UPDATE slices SET ts = ?", (start,))
        con.commit()
        con.close()
        p = run(["--format", "json", db, db], env=env)
        C.check(p.returncode == 0 and b"runtime error" not in p.stderr,
                "a trace without steps, %s: no overflow, exit 0" % label,
                (p.returncode, p.stderr.decode()[-300:]))


# ---- issue 22: defects and regressions that passed ----

def synthetic_gpu(path, steps, ops, kernels, rank=None, world=None):
    """A GPU trace: ProfilerStep#1..steps, each with CPU ops [(name, dur_us)]
    and kernels [(name, dur_us)], each kernel launched by a cudaLaunchKernel
    (same correlation) inside the step and run right after it on stream 7."""
    evs, t, corr = [], 1000, 1
    for s in range(1, steps + 1):
        span = sum(d for _, d in ops) + 20 * len(kernels) + 10
        evs.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1,
                    "tid": 1, "ts": t, "dur": span})
        u = t + 5
        for name, dur in ops:
            evs.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": u,
                        "dur": dur})
            u += dur
        g = t + span + 5
        for name, dur in kernels:
            evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                        "tid": 1, "ts": u, "dur": 10, "args": {"correlation": corr}})
            evs.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": g,
                        "dur": dur, "args": {"correlation": corr, "device": 0, "stream": 7}})
            u += 20
            g += dur
            corr += 1
        t = max(t + span, g) + 50
    doc = {"schemaVersion": 1, "traceEvents": evs}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank, "world_size": world}
    with open(path, "w") as f:
        json.dump(doc, f)


def visible(s):
    """a name as the text report shows it: C0 and DEL as \\n \\r \\t \\xNN"""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif o < 0x20 or o == 0x7f:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out)


NASTY = ['q"uote<lt>&amp', "cdata]]>end", "new\nline", "gh::error title=x::forged",
         "pct%0Aliteral", "esc\x1b[31mred\x1b[0m", "ctl\x01soh", "cr\rtab\t"]
CONTROL = {chr(c) for c in range(0x20) if chr(c) not in "\n"} | {"\x7f"}


def check_formats_valid(d):
    """names holding quotes, <, ]]>, newlines, ::, %0A, ESC, \\x01 in op and
    kernel names: every format stays valid (JSON parses, JUnit parses and its
    names round-trip, one GitHub command per line with no raw control
    character, CSV parses with the JSON keys as header)"""
    ops = [("aten::mm", 1000)] + [("op " + n, 100) for n in NASTY]
    kern = [("gemm_kernel", 50)] + [("k " + n, 20) for n in NASTY]
    base, new = os.path.join(d, "v_b.json"), os.path.join(d, "v_n.json")
    synthetic_gpu(base, 8, ops, kern)
    synthetic_gpu(new, 8, [(n, d_ * 3 if n != "aten::mm" else d_) for n, d_ in ops],
                  [(n, d_ * 3 if n != "gemm_kernel" else d_) for n, d_ in kern])
    args = ["--gate", "+ops,kernels", "--match", "name", "--no-stats", base, new]
    outs = {}
    for fmt in ("text", "table", "markdown", "json", "junit", "github", "csv"):
        p = run(["--format", fmt] + args)
        outs[fmt] = p.stdout
        C.check(p.returncode == 1 and p.stderr == b"", "nasty names, %s: exit 1" % fmt,
                (p.returncode, p.stderr.decode()[-300:]))
    doc = json.loads(outs["json"])
    keys = {(r["kind"], r["key"]) for r in doc["rows"]}
    want = {("op", "op " + n) for n in NASTY} | {("kernel", "k " + n) for n in NASTY}
    C.check(want <= keys, "json: every nasty name is a row, whole", sorted(want - keys)[:3])
    gated = {(r["kind"], r["key"]) for r in doc["rows"] if r["verdict"] == "regressed"}
    C.check(want <= gated, "every nasty row regressed (gated)", sorted(want - gated)[:3])
    root = ET.fromstring(outs["junit"])
    names = {(tc.get("classname"), tc.get("name")) for tc in root.iter("testcase")}
    want_xml = {(k, n if not (set(n) & CONTROL - {"\r", "\t"}) else visible(n).replace("\\r", "\r")
                 .replace("\\t", "\t")) for k, n in want}
    C.check(want_xml <= names, "junit: the names round-trip (line ends and tabs exactly; ESC,"
            " \\x01 as the text report shows them)", sorted(want_xml - names)[:4])
    C.check(not any(c in outs["junit"].decode() for c in CONTROL - {"\r", "\t"}) and
            b"new\nline" not in outs["junit"], "junit: no raw control character, no raw newline"
            " in an attribute")
    gh = outs["github"].decode()
    lines = gh.split("\n")
    C.check(lines[-1] == "" and all(l.startswith(("::error title=tracetool diff::",
                                                  "::warning title=tracetool diff::",
                                                  "::notice title=tracetool diff::"))
                                    for l in lines[:-1]),
            "github: one workflow command per line", [l[:60] for l in lines[:-1]
                                                      if not l.startswith("::")][:3])
    C.check(not any(c in gh for c in CONTROL), "github: no raw control character",
            [l for l in lines if any(c in l for c in CONTROL)][:2])
    C.check("op esc\\x1b[31mred\\x1b[0m regressed" in gh and "op ctl\\x01soh regressed" in gh,
            "github: ESC and \\x01 shown as the text report does", gh[:300])
    C.check("op new%0Aline regressed" in gh and "op pct%250Aliteral regressed" in gh and
            "op cr%0Dtab\\t regressed" in gh, "github: % CR LF escaped as %25 %0D %0A")
    import csv as csvmod
    import io
    rows = list(csvmod.DictReader(io.StringIO(outs["csv"].decode())))
    C.eq(len(rows), 1 + len(doc["metrics"]) + len(doc["rows"]),
         "csv: one row for the result, per metric and per key row")
    ck = {(r["kind"], r["key"]) for r in rows}
    C.check({(k, visible(n)) for k, n in want} <= ck,
            "csv: the names, one line each (control characters shown as in text)")
    C.eq(outs["table"], outs["text"], "--format table is the text report")
    text = outs["text"].decode() + outs["markdown"].decode()
    C.check(not any(c in text for c in CONTROL - {"\n"} | {"\r"}), "text, markdown: no raw control"
            " character")


def check_formats_table_csv(d):
    """--format table and csv, which every other command takes"""
    doc = json.loads(run(["--allow-env-mismatch", "--format", "json", CTRL, TEST]).stdout)
    p = run(["--allow-env-mismatch", "--format", "csv", CTRL, TEST])
    C.eq(p.returncode, 1, "--format csv: accepted, the diff's exit code")
    import csv as csvmod
    import io
    rd = csvmod.reader(io.StringIO(p.stdout.decode()))
    head = next(rd)
    rest = list(rd)
    C.eq(head, ["kind", "key", "status", "unit", "gated", "base_n", "base", "new_n", "new", "ratio",
                "hl_shift", "base_count", "new_count", "base_ns", "new_ns", "delta_ns", "share",
                "p", "q", "test", "verdict", "note"], "csv: the header (the JSON keys)")
    C.eq(len(rest), 1 + len(doc["metrics"]) + len(doc["rows"]), "csv: a row per metric and key row")
    m = [r for r in rest if r[0] == "metric" and r[1] == "device_step_time"]
    jm = metric(doc, "device_step_time")
    C.check(m and float(m[0][6]) == jm["base"]["value"] and m[0][20] == "regressed",
            "csv: the step time as in JSON", m[:1])
    C.eq((rest[0][0], rest[0][20]), ("result", "regressed"), "csv: the result row first")
    t = run(["--allow-env-mismatch", "--format", "table", CTRL, TEST])
    x = run(["--allow-env-mismatch", "--format", "text", CTRL, TEST])
    C.check(t.returncode == 1 and t.stdout == x.stdout, "--format table: the text report")


def check_share_small(d):
    """A row's share is the change of its share of the step (new - base), not
    a part of the step time change: bounded, never 8452% (issue 22)"""
    base, new = os.path.join(d, "h_b.json"), os.path.join(d, "h_n.json")
    synthetic(base, 6, [("aten::mm", 10000), ("aten::add", 1000)])
    synthetic(new, 6, [("aten::mm", 10030), ("aten::add", 980)])
    p = run(["--format", "json", base, new])
    doc = json.loads(p.stdout)
    r = row(doc, "op", "aten::mm")
    C.check(r is not None and r["new_ns"] - r["base_ns"] == 30000 and abs(r["share"]) < 0.01,
            "a +10 us step change (0.09%): a share change under a point", r)
    t = run(["--format", "csv", base, new]).stdout.decode()
    C.check("aten::mm,matched" in t and [l for l in t.splitlines() if l.startswith("op,aten::mm,")][0]
            .split(",")[16] != "" and abs(float([l for l in t.splitlines()
                                                 if l.startswith("op,aten::mm,")][0]
                                                .split(",")[16])) < 0.01,
            "csv: the share field as in JSON")
    txt = run([base, new]).stdout.decode()
    C.check("8452" not in txt and "300.0" not in txt, "text: no share of a change of almost nothing")


def check_long_kernel_names(d):
    """--match name keeps a kernel name whole: two 1,646-byte names that differ
    only in their last byte are two rows (they were cut at 511 bytes)"""
    stem = "void at::native::elementwise_kernel<" + "x" * 1602
    k1, k2 = stem + "_A>(int)", stem + "_B>(int)"
    C.eq((len(k1), len(k2)), (1646, 1646), "the names are 1,646 bytes")
    base, new = os.path.join(d, "n_b.json"), os.path.join(d, "n_n.json")
    synthetic_gpu(base, 6, [("aten::mm", 100)], [(k1, 50), (k2, 50)])
    synthetic_gpu(new, 6, [("aten::mm", 100)], [(k1, 50), (k2, 80)])
    doc = json.loads(run(["--match", "name", "--format", "json", base, new]).stdout)
    ks = {r["key"]: r for r in doc["rows"] if r["kind"] == "kernel"}
    C.check(k1 in ks and k2 in ks and len(ks) == 2, "--match name: two kernel rows, whole names",
            [len(k) for k in ks])
    grew = {k: r["new_ns"] - r["base_ns"] for k, r in ks.items()}
    C.check(grew.get(k2) == 30000 and grew.get(k1) == 0,
            "only the second one grew", [(len(k), g) for k, g in grew.items()])


def check_device_straggler(d):
    """hta/trace_compare: one 4 us kernel launched at the end of step 1010 is
    missing from the test trace; it ran 52 ms later and moved "the end of the
    last GPU activity" by 110 ms (-94%). The device end is where 99% of the
    step's busy time is done: the step time does not hinge on it."""
    base = os.path.join(SHARED, "testdata", "hta", "trace_compare", "base")
    test = os.path.join(SHARED, "testdata", "hta", "trace_compare", "test")
    if not os.path.isdir(base):
        C.skip("hta/trace_compare", "missing")
        return
    p = run(["--format", "json", base, test])
    doc = json.loads(p.stdout)
    m = metric(doc, "device_step_time")
    C.check(m is not None and abs(m["ratio"] - 1) < 0.01 and m["verdict"] != "regressed"
            and m["verdict"] != "improved", "trace_compare: device step time within 1%",
            m and (m["base"]["value"], m["new"]["value"], m["ratio"]))
    C.check(m is not None and close(m["base"]["value"] / 1e6, 118.1, 0.05),
            "trace_compare: 118.1 ms a side", m and m["base"]["value"])
    for f in (base, test):
        dev, _, _ = expected(os.path.join(f, os.path.basename(f) + ".json.gz"))
        C.eq(doc["metrics"][0]["base" if f == base else "new"]["samples"], dev,
             "trace_compare %s: the device step time computed here" % os.path.basename(f))


def scaled_rank(src, dst, factor):
    """a copy of a trace with its ProfilerStep and everything after its start
    slowed by factor (timestamps and durations scaled from the step's start)"""
    doc = json.loads(te.read_bytes(src))
    evs = doc["traceEvents"]
    t0 = min(e["ts"] for e in evs if str(e.get("name", "")).startswith("ProfilerStep#"))
    for e in evs:
        if isinstance(e.get("ts"), (int, float)) and e["ts"] >= t0:
            e["ts"] = t0 + (e["ts"] - t0) * factor
            if isinstance(e.get("dur"), (int, float)):
                e["dur"] = e["dur"] * factor
    with open(dst, "w") as f:
        json.dump(doc, f)


def check_slowest_rank_single_step(d):
    """param/dlrm_8rank (one ProfilerStep#10 per rank): the step time of the
    job is its slowest rank's (rank 1, 19.9 ms; it said rank 0's 14.5 ms), and
    rank 3 slowed 1.5x is a regression with --no-stats (it said NO CHANGE)"""
    k = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
    files = sorted(os.listdir(k)) if os.path.isdir(k) else []
    w = {int(f.split("_")[0][6:]): os.path.join(k, f) for f in files if f.startswith("worker")}
    if len(w) != 8:
        C.skip("dlrm_8rank", "missing")
        return
    slow = os.path.join(d, "dlrm_new")
    os.mkdir(slow)
    for r, f in w.items():
        dst = os.path.join(slow, os.path.basename(f)[:-3])
        if r == 3:
            scaled_rank(f, dst, 1.5)
        else:
            with open(dst, "wb") as o:
                o.write(te.read_bytes(f))
    doc = json.loads(run(["--format", "json", "--no-stats", k, k]).stdout)
    C.check(close(doc["metrics"][0]["base"]["value"] / 1e6, 19.901, 0.001),
            "dlrm self-diff: the slowest rank's step (19.9 ms)", doc["metrics"][0]["base"]["value"])
    p = run(["--format", "json", "--no-stats", k, slow])
    doc = json.loads(p.stdout)
    m = doc["metrics"][0]
    C.check(p.returncode == 1 and m["verdict"] == "regressed" and
            close(m["new"]["value"] / 1e6, 19.313 * 1.5, 0.01),
            "rank 3 slowed 1.5x, --no-stats: regression (exit 1), 19.9 -> 29.0 ms",
            (p.returncode, doc["summary"]))
    p = run([k, slow])
    C.check(not p.stdout.decode().startswith("NO CHANGE"), "rank 3 slowed 1.5x: not NO CHANGE",
            p.stdout.decode()[:120])


def check_no_steps_side(d):
    """a side without any ProfilerStep#N against one with: not comparable
    (exit 6; it compared the whole trace with one step, +1286.9%); both
    without: the whole traces are compared"""
    steps, flat, flat2 = (os.path.join(d, n) for n in ("w_s.json", "w_f.json", "w_f2.json"))
    synthetic(steps, 6, [("aten::mm", 100)])
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1000 + 200 * i,
           "dur": 100} for i in range(6)]
    for f in (flat, flat2):
        with open(f, "w") as o:
            json.dump({"traceEvents": ev}, o)
    for a, b, side in ((steps, flat, "NEW"), (flat, steps, "BASE")):
        for fmt in ("text", "json"):
            p = run(["--format", fmt, a, b])
            out = p.stdout.decode()
            C.check(p.returncode == 6 and ("NOT COMPARABLE: no ProfilerStep#N in %s" % side) in out,
                    "no ProfilerStep in %s (%s): not comparable, exit 6" % (side, fmt),
                    (p.returncode, out[:200]))
    p = run(["--no-stats", flat, flat2])
    C.check(p.returncode == 0 and p.stdout.decode().startswith("NO CHANGE: CPU step time +0.0%"),
            "neither side has steps: the whole traces compared", (p.returncode, p.stdout[:100]))


def expected_shift(base_runs, new_runs, key):
    """The change of key's time beyond its runs' speed (docs/DIFF.md),
    computed here from the op lists: per run, the log of its share of the
    step and its log time over the median log time of the run's keys holding
    a point of the step, the key itself left out; a side's median over its
    runs; the smaller change."""
    def levels(ops):
        span = sum(d for _, d in ops) + 10
        t = dict(ops)
        logs = sorted(math.log(v) for k, v in t.items() if v / span >= 0.01 and k != key)
        m = len(logs)
        ref = logs[m // 2] if m % 2 else (logs[m // 2 - 1] + logs[m // 2]) / 2
        return math.log(t[key] / span), math.log(t[key]) - ref

    def side(runs):
        ls = sorted(levels(r)[0] for r in runs)
        lm = sorted(levels(r)[1] for r in runs)
        med = lambda v: v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
        return med(ls), med(lm)
    (sb, mb), (sn, mn) = side(base_runs), side(new_runs)
    up = sn >= sb
    return min(sn - sb, mn - mb) if up else max(sn - sb, mn - mb)


def check_shift(d):
    """A row gates on its change beyond the runs' speed (issue 22): an op
    slower at the same call count regresses with one run a side; the same
    grown share from a dominant op that got faster does not; a smaller one
    is inconclusive with one run and regressed with five (the thresholds
    fall with the runs a side)"""
    base = [("aten::mm", 8000), ("aten::conv2d", 500), ("aten::bmm", 400), ("aten::gelu", 100)]
    def variant(**kw):
        return [(n, kw.get(n.split("::")[1], v)) for n, v in base]
    cases = [
        ("slower op, 1 run", [base], [variant(bmm=2400)], "regressed", 1, 6),
        ("dominant op faster, 1 run", [base], [variant(mm=5000)], "unchanged", 0, 6),
        ("smaller change, 1 run", [base], [variant(bmm=700)], "inconclusive", 0, 6),
        ("smaller change, 5 runs", [base] * 5, [variant(bmm=700)] * 5, "regressed", 1, 6),
        # 2 steps a side cannot show that the steps agree (p >= 1/6)
        ("slower op, 2 steps", [base], [variant(bmm=2400)], "inconclusive", 0, 2),
    ]
    for name, bruns, nruns, verdict, rc, nsteps in cases:
        args = ["--format", "json"]
        for side, runs in (("-b", bruns), ("-n", nruns)):
            for i, ops in enumerate(runs):
                # each run at its own speed: a factor on every op of the run
                f = 0.7 + 0.2 * i
                path = os.path.join(d, "shift_%s_%d.json" % (side[1], i))
                synthetic(path, nsteps, [(o, int(v * f)) for o, v in ops])
                args += [side, path]
        p = run(args)
        doc = json.loads(p.stdout)
        r = row(doc, "op", "aten::bmm")
        want = expected_shift([[(o, int(v * (0.7 + 0.2 * i))) for o, v in ops] for i, ops in enumerate(bruns)],
                              [[(o, int(v * (0.7 + 0.2 * i))) for o, v in ops] for i, ops in enumerate(nruns)],
                              "aten::bmm")
        C.check(r is not None and abs(r["shift"] - want) < 1e-6,
                "%s: shift %.6f as computed here" % (name, want), r and r["shift"])
        C.eq((r and r["verdict"], p.returncode), (verdict, rc), "%s: row verdict, exit code" % name)
        if verdict == "inconclusive":
            C.eq(run(args + ["--fail-on-inconclusive"]).returncode, 6,
                 "%s: --fail-on-inconclusive exits 6" % name)


def read_ways(args):
    """(process, the TT_DEBUG_DIFF lines): which way diff read each file"""
    p = subprocess.run([TOOL, "diff"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, TT_DEBUG_DIFF="1"))
    return p, [ln for ln in p.stderr.decode().splitlines() if ln.startswith("diff: ")]


def result_of(p):
    """a JSON report without the inputs' names"""
    doc = json.loads(p.stdout)
    return [doc["metrics"], doc["rows"], doc["exit_code"]]


def check_no_temp_db(d):
    """issue 24: a trace file, and each file of a rank directory, is read as
    the ingest's rows, never through a temporary database (TT_DEBUG_DIFF
    says which way each file went); a database hands the same rows; a file
    whose rows need the SQL passes (runtime calls to relink: its events in
    reverse order) is read twice and gives what the file in order gives"""
    p, ways = read_ways(["--format", "json", TEST, TEST])
    C.eq(p.returncode, 0, "diff TEST TEST: exit 0")
    C.eq(ways, ["diff: %s: read without a database" % TEST] * 2,
         "diff TEST TEST: both sides read without a database")
    ranks = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
    if os.path.isdir(ranks):
        files = sorted(os.listdir(ranks))
        pr, ways = read_ways(["--format", "json", ranks, ranks])
        C.eq(pr.returncode, 0, "diff of a rank directory: exit 0")
        C.eq(sorted(ways), sorted(["diff: %s: read without a database" % os.path.join(ranks, f)
                                   for f in files] * 2),
             "a rank directory: every file read without a database")
    db = os.path.join(d, "nt_test.db")
    subprocess.run([TOOL, "ingest", "-q", db, TEST], check=True)
    p2, ways = read_ways(["--format", "json", db, db])
    C.eq(ways, [], "a database: no file read")
    C.check(p2.returncode == 0 and result_of(p2) == result_of(p),
            "a database gives what the file gives", p2.stderr.decode()[-300:])
    sums = []
    for src in (TEST, db):  # keys in the same order too (the rows' order)
        out = os.path.join(d, "nt_sum.json")
        subprocess.run([TOOL, "diff", "--save-summary", out, src], check=True)
        with open(out) as f:
            doc = json.load(f)
        sums.append([t["diff"] for t in doc["traces"]])
    C.check(sums[0] == sums[1] and len(sums[0][0]["keys"]) > 50,
            "a database's saved summary has the file's diff section, keys in the same order")
    a, b = os.path.join(d, "nt_order.json"), os.path.join(d, "nt_reversed.json")
    evs = []
    for s in range(6):  # aten::mm launches gemm_kernel, then aten::add
        t = 1000 + 300 * s
        evs += [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1,
                 "tid": 1, "ts": t, "dur": 200},
                {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + 5,
                 "dur": 100},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                 "ts": t + 10, "dur": 10, "args": {"correlation": s + 1}},
                {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
                 "ts": t + 110, "dur": 30},
                {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
                 "ts": t + 120, "dur": 80 + s,
                 "args": {"correlation": s + 1, "device": 0, "stream": 7}}]
    for path, order in ((a, evs), (b, evs[::-1])):
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": order}, f)
    pa, ways_a = read_ways(["--format", "json", "--match", "op", a, a])
    pb, ways_b = read_ways(["--format", "json", "--match", "op", b, b])
    C.eq(ways_a, ["diff: %s: read without a database" % a] * 2, "a trace in order: streamed")
    C.check(len(ways_b) == 2 and all(w.startswith("diff: %s: read twice: " % b)
                                     for w in ways_b),
            "a trace whose rows need the SQL passes: read twice (no database)", ways_b)
    C.check(pa.returncode == 0 and pb.returncode == 0 and result_of(pa) == result_of(pb) and
            any(r["key"] == "launched by aten::mm" for r in json.loads(pa.stdout)["rows"]),
            "the same result either way (kernels by launching op)", (pa.stderr, pb.stderr))


def main():
    for p in (CTRL, TEST):
        if not os.path.exists(p):
            C.skip(p, "missing")
            return C.finish()
    with tempfile.TemporaryDirectory() as d:
        C.section("pair", check_pair, d)
        C.section("aa", check_aa)
        C.section("self", check_self, d)
        C.section("reports", check_reports, d)
        C.section("hta parity", check_hta_parity)
        C.section("torch pairs", check_torch_pairs)
        C.section("summary", check_summary, d)
        C.section("matching", check_matching, d)
        C.section("ranks", check_ranks, d)
        C.section("scaling", check_scaling, d)
        C.section("bad inputs", check_bad_inputs, d)
        C.section("escaping", check_escaping_and_cut, d)
        C.section("errors", check_errors, d)
        C.section("outputs are never inputs", check_outputs_not_inputs, d)
        C.section("fifo", check_fifo, d)
        C.section("rename bounds", check_rename_bounds, d)
        C.section("rank pairs", check_rank_pairs, d)
        C.section("summary parsing", check_summary_parse, d)
        C.section("low", check_low, d)
        C.section("time overflow", check_time_overflow, d)
        C.section("formats stay valid", check_formats_valid, d)
        C.section("format table, csv", check_formats_table_csv, d)
        C.section("share of a tiny change", check_share_small, d)
        C.section("long kernel names", check_long_kernel_names, d)
        C.section("device step straggler", check_device_straggler, d)
        C.section("slowest rank, single step", check_slowest_rank_single_step, d)
        C.section("side without steps", check_no_steps_side, d)
        C.section("shift beyond the runs' speed", check_shift, d)
        C.section("no temporary database for a file", check_no_temp_db, d)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
