#!/usr/bin/env python3
"""diff with per-rank summaries (tracetool.summary/1) as inputs (issue 26).

The expected values are diff's own answers on the traces themselves (the
existing path: trace files and directories): for each pair, the verdict,
the exit code and the --format json report (and the text report once) of
diff against
  (a) the traces,
  (b) a summary written by `tracetool summarize` (and `tracetool merge` of
      per-rank summaries, merged in reverse order),
  (c) the file `diff --save-summary` writes (now a tracetool.summary/1),
are byte-identical. Pairs: HTA's trace_diff control/test (A100 vs V100,
--allow-env-mismatch, a regression: exit 1), param/dlrm_8rank ranks 0-3 vs
4-7 (two directories, per step the slowest rank; and --rank-agg each with
--rank-map), and the small A/B fixtures of tests/fixtures/diff. --rename and
--steps apply to a summary as to the traces; --match name is refused with one
line naming it; a summary without diff sections names the file; an old
tracetool.diff-summary/1 file (tests/fixtures/diff/a2.diff-summary-v1.json,
written by the tracetool of main 01ed10c from a2.trace.json.gz) still gives
the trace's diff. A missing `summarize` / `merge` fails the test.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("summary_diff")
SHARED = te.shared_dir()
TOOL = te.tracetool_path()
CTRL = os.path.join(SHARED, "testdata", "hta", "trace_diff", "control", "control.json.gz")
TEST = os.path.join(SHARED, "testdata", "hta", "trace_diff", "test", "test.json.gz")
DLRM = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
FIX = os.path.join("tests", "fixtures", "diff")  # relative to ROOT: the old file's label


def tool(args):
    return subprocess.run([TOOL] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=ROOT)


def diff(args):
    return tool(["diff"] + args)


def answer(p):
    """what must be the same: exit code, the report's bytes, its verdict"""
    try:
        verdict = json.loads(p.stdout)["verdict"]
    except ValueError:
        verdict = None
    return (p.returncode, verdict, p.stdout)


def summarize(src, out):
    p = tool(["summarize", "-o", out, src])
    C.check(p.returncode == 0 and os.path.exists(out), "summarize %s" % os.path.basename(src),
            p.stderr.decode()[-300:])


def merge(ins, out):
    p = tool(["merge", "-o", out] + ins)
    C.check(p.returncode == 0 and os.path.exists(out), "merge of %d summaries" % len(ins),
            p.stderr.decode()[-300:])


def same(variants, want, label):
    """each (name, args) gives want"""
    for name, args in variants:
        got = answer(diff(args))
        C.check(got == want, "%s: %s gives the traces' verdict, exit code and report"
                % (label, name), (got[0], got[1], want[0], want[1], got[2][:300]))


def check_hta_pair(d):
    """(a) control vs test; (b) summarize, merge; (c) --save-summary"""
    env = ["--allow-env-mismatch", "--format", "json"]
    cs, ts = os.path.join(d, "c.summary.json"), os.path.join(d, "t.summary.json.gz")
    cm = os.path.join(d, "c.merged.json")
    summarize(CTRL, cs)
    summarize(TEST, ts)
    merge([cs, cs], cm)  # the same trace twice: kept once
    sc, st = os.path.join(d, "c.saved.json"), os.path.join(d, "t.saved.json")
    p = diff(["--save-summary", sc, CTRL])
    C.eq((p.returncode, p.stdout), (0, b""), "--save-summary of one side: exit 0, no report")
    p = diff(["--allow-env-mismatch", "--save-summary", st, CTRL, TEST])
    C.eq(p.returncode, 1, "--save-summary beside a diff: the diff's exit code (regressed)")
    with open(sc, encoding="utf-8") as f:
        doc = json.load(f)
    C.check(doc.get("schema") == "tracetool.summary/1" and len(doc.get("traces", [])) == 1
            and "diff" in doc["traces"][0] and "info" in doc["traces"][0],
            "--save-summary writes a tracetool.summary/1 with its sections",
            (doc.get("schema"), list(doc.get("traces", [{}])[0].keys())))
    want = answer(diff(env + [CTRL, TEST]))
    C.eq(want[:2], (1, "regressed"), "control vs test: regressed, exit 1 (the traces)")
    same([("summarize(BASE)", env + [cs, TEST]),
          ("merge(BASE)", env + [cm, TEST]),
          ("--save-summary(BASE)", env + [sc, TEST]),
          ("summaries on both sides", env + [cs, ts]),
          ("saved summaries on both sides", env + [sc, st])], want, "control vs test")
    want_txt = diff(["--allow-env-mismatch", CTRL, TEST])
    got_txt = diff(["--allow-env-mismatch", cs, ts])
    C.check((got_txt.returncode, got_txt.stdout) == (want_txt.returncode, want_txt.stdout),
            "the text report from summaries is the traces' byte for byte",
            got_txt.stdout.decode()[:300])
    for extra in (["--steps", "1012-1014"], ["--skip-first", "2"], ["--step-clock", "cpu"],
                  ["--gate", "step,memory,ops,kernels"]):
        want = answer(diff(env + extra + [CTRL, TEST]))
        same([("summaries " + " ".join(extra), env + extra + [cs, ts])], want, "control vs test")
    rules = os.path.join(d, "rename.txt")
    with open(rules, "w") as f:
        f.write("^aten::(add|mul)_?$ => aten::arith\n^(.*)gemm(.*)$ => GEMM\n")
    want = answer(diff(env + ["--rename", rules, CTRL, TEST]))
    same([("--rename on summaries", env + ["--rename", rules, cs, ts])], want, "control vs test")
    p = diff(env + ["--match", "name", cs, TEST])
    err = p.stderr.decode()
    C.check(p.returncode != 0 and err.count("\n") == 1 and "--match name" in err and
            "c.summary.json" in err, "--match name on a summary: one line naming the option"
            " and the file", err)


def check_dlrm(d):
    """two directories of ranks (0-3, 4-7) and their summaries"""
    files = sorted(f for f in os.listdir(DLRM) if f.startswith("worker"))
    C.eq(len(files), 8, "dlrm_8rank: 8 rank files")
    b, n = os.path.join(d, "base"), os.path.join(d, "new")
    os.mkdir(b)
    os.mkdir(n)
    for i, f in enumerate(files):
        os.symlink(os.path.join(DLRM, f), os.path.join(b if i < 4 else n, f))
    parts = []
    for f in sorted(os.listdir(b)):
        parts.append(os.path.join(d, "b%d.summary.json" % len(parts)))
        summarize(os.path.join(b, f), parts[-1])
    bm, nm = os.path.join(d, "b.merged.json"), os.path.join(d, "n.summary.json")
    merge(parts[::-1], bm)
    summarize(n, nm)
    bs = os.path.join(d, "b.saved.json")
    C.eq(diff(["--save-summary", bs, b]).returncode, 0, "--save-summary of ranks 0-3")
    for extra in ([], ["--rank-agg", "each", "--rank-map", "0:4,1:5,2:6,3:7"]):
        args = ["--format", "json"] + extra
        want = answer(diff(args + [b, n]))
        C.eq(want[0], 0, "dlrm ranks 0-3 vs 4-7 %s: exit 0 (the traces)" % " ".join(extra))
        same([("merge of per-rank summaries", args + [bm, n]),
              ("summaries on both sides", args + [bm, nm]),
              ("--save-summary's file", args + [bs, nm])], want, "dlrm " + " ".join(extra))


def check_fixtures(d):
    """the small A/B fixtures; an old diff-summary/1 file still works"""
    a1, a2 = os.path.join(FIX, "a1.trace.json.gz"), os.path.join(FIX, "a2.trace.json.gz")
    planted = os.path.join(FIX, "planted.trace.json.gz")
    old = os.path.join(FIX, "a2.diff-summary-v1.json")
    with open(os.path.join(ROOT, old), encoding="utf-8") as f:
        C.eq(json.load(f)["schema"], "tracetool.diff-summary/1", "the old fixture's schema")
    s2 = os.path.join(d, "a2.summary.json")
    summarize(a2, s2)  # relative to ROOT, as the traces are named: the same label
    for b, n, code in ((a1, a2, 0), (a2, planted, 1)):
        want = answer(diff(["--format", "json", b, n]))
        C.eq(want[0], code, "%s vs %s: exit %d (the traces)" % (b, n, code))
        sub = (lambda p: old if p == a2 else p)
        sub2 = (lambda p: s2 if p == a2 else p)
        same([("the old diff-summary/1 for a2", ["--format", "json", sub(b), sub(n)])], want,
             "%s vs %s" % (os.path.basename(b), os.path.basename(n)))
        same([("a summary of a2", ["--format", "json", sub2(b), sub2(n)])], want,
             "%s vs %s" % (os.path.basename(b), os.path.basename(n)))
    p = diff(["--save-summary", os.path.join(d, "x.json"), a1, old])
    err = p.stderr.decode()
    C.check(p.returncode != 0 and err.count("\n") == 1 and "a2.diff-summary-v1.json" in err and
            not os.path.exists(os.path.join(d, "x.json")),
            "--save-summary of an old diff-summary: one line naming it, nothing written", err)
    # a summary whose traces lack the diff section (a build without it)
    with open(s2, encoding="utf-8") as f:
        doc = json.load(f)
    for t in doc["traces"]:
        t.pop("diff", None)
    nodiff = os.path.join(d, "nodiff.summary.json")
    with open(nodiff, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    p = diff([a1, nodiff])
    err = p.stderr.decode()
    C.check(p.returncode not in (0, 1) and err.count("\n") == 1 and "nodiff.summary.json" in err,
            "a summary without diff sections: one line naming it", err)


def main():
    for p in (CTRL, TEST, DLRM):
        if not os.path.exists(p):
            C.skip(p, "missing")
            return C.finish()
    with tempfile.TemporaryDirectory() as d:
        C.section("hta pair", check_hta_pair, d)
        C.section("dlrm ranks", check_dlrm, d)
        C.section("fixtures", check_fixtures, d)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
