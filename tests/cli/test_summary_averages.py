#!/usr/bin/env python3
"""tracetool averages on a summary (issue 26) against the database path.

Each kineto file of param/dlrm_8rank is summarised on its own (`tracetool
summarize -o S FILE`), the eight summaries merged in a tree and in another
order; `tracetool averages` of the merged summary must print byte for byte
what it prints for `tracetool ingest DB DIR` (table, CSV, JSON, Markdown,
--group-by-shape, --sort-by, --rank, --trace, --top-level-only,
--no-gpu-annotations, --row-limit). The same for two more real traces, one
with Input Dims and [memory] events (kineto/tb_plugin_2021-06) and one with
Input Dims (hta/trace_filter). What a summary cannot answer (--group-by-stack,
--stacks, --steps, --name, --under, --time-range) is a one-line error naming
the option, nothing on stdout, exit non-zero.

The reference is the database's output (`tracetool ingest` then `averages
DB`), the issue's definition of the right answer; it needs `summarize` and
`merge` (helper "sum"): without them the test fails, never passes.
"""
import os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
SHARED = os.environ.get("TT_SHARED", "../shared")
C = te.Checker("test_summary_averages")


check = C.check


def run(*args):
    p = subprocess.run([TRACETOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def ok(what, *args):
    rc, out, err = run(*args)
    check(rc == 0, f"{what}: exit {rc}: {err.strip()[:300]}")
    return rc == 0


VARIANTS = [
    [],
    ["--format", "json"],
    ["--format", "csv"],
    ["--format", "markdown"],
    ["--group-by-shape"],
    ["--group-by-shape", "--format", "json"],
    ["--sort-by", "self_cpu_time_total"],
    ["--sort-by", "self_cpu_time_total", "--format", "json"],
    ["--group-by-shape", "--sort-by", "cuda_time_total", "--row-limit", "-1", "--format", "csv"],
    ["--sort-by", "count", "--top-level-only", "--no-gpu-annotations", "--row-limit", "5"],
    ["--sort-by", "self_cpu_memory_usage", "--group-by-shape", "--format", "markdown"],
]


def same_as_db(what, db, summary, extra=()):
    for v in VARIANTS + [list(extra)] if extra else VARIANTS:
        a = run("averages", *v, db)
        b = run("averages", *v, summary)
        check(a[0] == 0 and a[1], f"{what} {v}: database exit {a[0]}: {a[2].strip()[:200]}")
        check(b == a, f"{what} {v}: summary prints the database's bytes "
              f"(exit {b[0]} vs {a[0]}; {len(b[1])} vs {len(a[1])} bytes; {b[2].strip()[:200]})")


def refusals(summary):
    for opt in (["--group-by-stack", "2"], ["--steps", "12"], ["--name", "aten"],
                ["--under", "ProfilerStep.*"], ["--time-range", "0:"]):
        rc, out, err = run("averages", *opt, summary)
        check(rc != 0 and out == "" and err.count("\n") == 1 and opt[0] in err,
              f"averages {opt} on a summary: one line naming the option ({rc}, {err!r})")
    with tempfile.TemporaryDirectory() as d:
        out_path = os.path.join(d, "st.txt")
        rc, out, err = run("averages", "--stacks", out_path, summary)
        check(rc != 0 and "--stacks" in err and not os.path.exists(out_path),
              f"averages --stacks on a summary: refused, nothing written ({rc}, {err!r})")


def dlrm(d):
    kdir = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
    if not os.path.isdir(kdir):
        C.skip("dlrm_8rank", "missing " + kdir)
        return
    files = sorted(os.path.join(kdir, f) for f in os.listdir(kdir) if f.endswith(".json.gz"))
    check(len(files) == 8, f"dlrm_8rank has 8 kineto files ({len(files)})")
    db = os.path.join(d, "dlrm.db")
    if not ok("ingest dlrm_8rank", "ingest", "--quiet", db, kdir):
        return
    sums = []
    for i, f in enumerate(files):
        s = os.path.join(d, f"rank{i}.summary.json")
        if not ok(f"summarize {f}", "summarize", "-o", s, f):
            return
        sums.append(s)
    # a tree (((0 1) (2 3)) ((4 5) (6 7))), and all at once in reverse order
    level = sums
    k = 0
    while len(level) > 1:
        nxt = []
        for j in range(0, len(level), 2):
            m = os.path.join(d, f"m{k}.json")
            k += 1
            if not ok("merge", "merge", "-o", m, *level[j:j + 2]):
                return
            nxt.append(m)
        level = nxt
    tree = level[0]
    flat = os.path.join(d, "flat.json.gz")
    if not ok("merge reversed", "merge", "-o", flat, *reversed(sums)):
        return
    for name, s in (("tree-merged", tree), ("reverse-merged", flat)):
        same_as_db(f"dlrm_8rank {name}", db, s,
                   extra=["--rank", "3", "--format", "json", "--group-by-shape"])
        for sel in (["--rank", "5"], ["--trace", "2"], ["--trace", "7", "--format", "json"]):
            check(run("averages", *sel, s) == run("averages", *sel, db),
                  f"dlrm_8rank {name} {sel}: the database's bytes")
    # no such rank: the database's error, exit code alike
    a, b = run("averages", "--rank", "99", db), run("averages", "--rank", "99", tree)
    check(b[0] == a[0] != 0 and b[1] == "", f"--rank 99: exit {b[0]} as the database's {a[0]}")
    refusals(tree)
    # one rank's summary is that rank's trace alone (trace 1 of its own)
    one_db = os.path.join(d, "one.db")
    if ok("ingest one", "ingest", "--quiet", one_db, files[0]):
        same_as_db("dlrm rank 0 alone", one_db, sums[0])


def single(d, rel, tag):
    path = os.path.join(SHARED, "testdata", rel)
    if not os.path.exists(path):
        C.skip(tag, "missing " + path)
        return
    db = os.path.join(d, f"{tag}.db")
    s = os.path.join(d, f"{tag}.summary.json")
    if ok(f"ingest {rel}", "ingest", "--quiet", db, path) and \
            ok(f"summarize {rel}", "summarize", "-o", s, path):
        same_as_db(rel, db, s)
        # the shapes and memory columns are there to compare
        rc, out, _ = run("averages", "--group-by-shape", "--format", "csv", s)
        check(rc == 0 and "[[" in out, f"{rel}: shapes in the summary's rows")
        if tag == "resnet":
            rc, out, _ = run("averages", s)
            check(rc == 0 and "CPU Mem" in out, f"{rel}: memory columns from the summary")


def main():
    with tempfile.TemporaryDirectory() as d:
        dlrm(d)
        single(d, "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz", "resnet")
        single(d, "hta/trace_filter/sampled_rank-0.json.gz", "sampled")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
