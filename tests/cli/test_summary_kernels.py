#!/usr/bin/env python3
"""`tracetool kernels` on a summary prints byte for byte what it prints on the
database of the same traces (issue 26).

Each rank file of param/dlrm_8rank/kineto is summarised on its own
(`tracetool summarize -o`), the eight summaries are merged in a tree and in
one step; `kernels` of the merged summary (table, CSV, Markdown and JSON;
every --by a summary answers; --only kernels/memory; --row-limit; --trace;
--rank) equals `kernels` of `tracetool ingest DB DIR` - the database path is
the independent answer. Two more real traces with memcpys and memsets
(hta/nccl_parser_config, kineto/tb_plugin_2021-06) likewise, one file each.
What a summary cannot answer (--by activity, --sequences, --steps, the
filters) is refused with one line naming the summary and a non-zero exit.
Fails (does not skip) when summarize or merge is missing; skips when the
shared data is missing.
"""
import os, shutil, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import trace_expect  # noqa: E402
from trace_expect import run_tool  # noqa: E402

C = trace_expect.Checker("summary_kernels")
DATA = os.path.join(trace_expect.shared_dir(), "testdata")
DLRM = os.path.join(DATA, "param", "dlrm_8rank", "kineto")
EXTRA = ["hta/nccl_parser_config/nccl_data.json.gz",
         "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz"]

BYS = ["name", "launch", "stream", "op", "runtime", "memsize"]


def variants():
    """every option set a summary answers, as argument lists"""
    out = []
    for by in BYS:
        onlys = [None] if by == "runtime" else [None, "memory"] if by == "memsize" else \
            [None, "kernels", "memory"]
        for only in onlys:
            for fmt in ("table", "json"):
                a = ["--by", by, "--format", fmt]
                if only:
                    a += ["--only", only]
                out.append(a)
    out += [["--format", "csv"], ["--format", "markdown"], ["--by", "op", "--format", "csv"],
            ["--by", "memsize", "--format", "markdown"], ["--row-limit", "3"],
            ["--top", "2", "--by", "launch", "--format", "json"], ["--trace", "2"],
            ["--rank", "5", "--by", "stream"], ["--by", "runtime", "--rank", "0"]]
    return out


def ok(cp, label):
    return C.check(cp.returncode == 0, label,
                   "exit %d: %s" % (cp.returncode, cp.stderr.decode(errors="replace").strip()))


def same_output(summary, db, args, label):
    a = run_tool(["kernels"] + args + [summary])
    b = run_tool(["kernels"] + args + [db])
    if not ok(b, label + ": on the database") or not ok(a, label + ": on the summary"):
        return
    C.check(len(b.stdout) > 200, label + ": the output is not empty", len(b.stdout))
    C.check(a.stdout == b.stdout, label + ": byte-identical to the database's",
            first_diff(a.stdout, b.stdout))


def first_diff(a, b):
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x, y)
    return "lengths %d vs %d lines" % (len(la), len(lb))


def summarize(path, out, label):
    cp = run_tool(["summarize", "-o", out, path])
    return ok(cp, label + ": summarize " + os.path.basename(path)) and os.path.exists(out)


def merge(inputs, out, label):
    cp = run_tool(["merge", "-o", out] + inputs)
    return ok(cp, label + ": merge") and os.path.exists(out)


def dlrm(tmp):
    files = sorted(f for f in os.listdir(DLRM) if f.endswith(".json.gz"))
    C.check(len(files) == 8, "dlrm_8rank: 8 rank files", len(files))
    sums = []
    for f in files:
        out = os.path.join(tmp, f + ".summary.json")
        if not summarize(os.path.join(DLRM, f), out, "dlrm"):
            return
        sums.append(out)
    a, b, tree, flat = (os.path.join(tmp, n) for n in ("a.json", "b.json", "tree.json",
                                                       "flat.json.gz"))
    if not (merge(sums[:3], a, "dlrm 0-2") and merge(sums[3:][::-1], b, "dlrm 3-7") and
            merge([b, a], tree, "dlrm tree") and merge(sums[::-1], flat, "dlrm flat")):
        return
    db = os.path.join(tmp, "dlrm.db")
    if not ok(run_tool(["ingest", "--quiet", db, DLRM]), "dlrm: ingest"):
        return
    for args in variants():
        same_output(tree, db, args, "dlrm tree merge, kernels " + " ".join(args))
    for args in (["--format", "json"], ["--by", "op"], ["--by", "memsize", "--format", "json"]):
        same_output(flat, db, args, "dlrm flat merge (gzip), kernels " + " ".join(args))
    refusals(tree)


def refusals(summary):
    for args, word in ((["--by", "activity"], "--by activity"),
                       (["--sequences", "2"], "--sequences"), (["--steps", "12"], "--steps"),
                       (["--name", "gemm"], "--name"), (["--under", "aten::mm"], "--under"),
                       (["--time-range", "0:"], "--time-range")):
        cp = run_tool(["kernels"] + args + [summary])
        err = trace_expect.stderr_lines(cp)
        C.check(cp.returncode not in (0, 2) and len(err) == 1 and summary in err[0] and
                word in err[0] and not cp.stdout,
                "kernels %s on a summary: refused in one line naming it and the option" %
                " ".join(args), (cp.returncode, err, cp.stdout[:80]))


def extra(tmp, rel):
    path = os.path.join(DATA, rel)
    if not os.path.exists(path):
        C.skip(rel, "shared trace missing")
        return
    out = os.path.join(tmp, os.path.basename(rel) + ".summary.json")
    db = os.path.join(tmp, os.path.basename(rel) + ".db")
    if not summarize(path, out, rel) or not ok(run_tool(["ingest", "--quiet", db, path]),
                                              rel + ": ingest"):
        return
    for by in BYS:
        for fmt in ("table", "json"):
            same_output(out, db, ["--by", by, "--format", fmt],
                        "%s: kernels --by %s --format %s" % (rel, by, fmt))
    mem = run_tool(["kernels", "--only", "memory", "--format", "json", out])
    C.check(mem.returncode == 0 and b'"memcpy' in mem.stdout,
            rel + ": the memory summary has memcpy rows (not vacuous)")


def main():
    if not os.path.isdir(DLRM):
        C.skip("dlrm_8rank", "shared data missing: " + DLRM)
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt_sumkern_")
    try:
        C.section("dlrm_8rank", dlrm, tmp)
        for rel in EXTRA:
            C.section(rel, extra, tmp, rel)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
