#!/usr/bin/env python3
"""`tracetool collectives`: each collective call's sizes, time and bandwidths,
the calls matched across ranks, the straggler and the skew.

Expected values:
- the shared traces with collectives (param/dlrm_8rank's 8 ranks,
  hta/nccl_parser_config, hta/trace_filter's 2 ranks, and five more): from
  tests/fixtures/collectives/expected.json, which
  tests/fixtures/collectives/make_expected.py computes from the raw JSON with
  the Python standard library (its own links: correlation, then the
  innermost op holding the call); every call's values, or for a long list
  the first and last rows and the sums of every integer column, and each
  rank's summary;
- a hand-made 3-rank job (written here) whose straggler and skews are known
  by construction, matched by "Seq" (rank 1 has a call the others lack);
- the same from a database as from the files, and from the files with their
  events shuffled (read twice: the links and nesting made as an ingest's SQL
  passes make them); a trace without a collective (exit 4, one line), a file
  that is no trace (exit 3);
- --name and --under (docs/FILTERS.md): make_expected.py's calls of the raw
  JSON, kept here by their collective and name (re.search) and by the ops
  that enclose them (whole-name match, same pid/tid, read here from the
  JSON), after they are numbered, so the matching across ranks holds.
"""

import gzip
import json
import os
import random
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "collectives"))
import make_expected as mx  # noqa: E402

C = te.Checker("collectives")
FIXTURE = os.path.join(HERE, "..", "fixtures", "collectives", "expected.json")
SUMMARY_KEYS = ("rank", "trace_id", "calls", "matched", "last", "skew_total_ns", "skew_max_ns",
                "late_total_ns", "comm_ns", "bytes", "algbw_gbps", "busbw_gbps")


def run_json(args):
    p = te.run_tool(["collectives", "--format", "json"] + args)
    C.check(p.returncode == 0, "collectives %s: exit 0" % " ".join(args[-2:]),
            p.stderr.decode()[-300:])
    return json.loads(p.stdout.decode()) if p.returncode == 0 else None


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) <= 1e-6 + 1e-6 * abs(b)
    return a == b


def same_row(got, want, label):
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not same(g, w)]
    return C.check(not bad, label, bad[:4])


def check_dataset(name, exp, args=()):
    inp = os.path.join(te.shared_dir(), exp["input"])
    if not os.path.exists(inp):
        C.skip(name, "missing " + inp)
        return
    doc = run_json(list(args) + ["--per-call", inp])
    if doc is None:
        return
    cols = exp["columns"]
    rows = sorted(([c.get(k) for k in cols] for c in doc["collectives"]),
                  key=lambda r: (r[0], r[cols.index("cpu_start_ns")]))
    C.eq(len(rows), exp["calls_total"], "%s: calls" % name)
    C.eq(doc["calls"], exp["calls_total"], "%s: \"calls\"" % name)
    C.eq(doc["instances"], exp["instances"], "%s: instances across ranks" % name)
    for k, v in sorted(exp["sums"].items()):
        i = cols.index(k)
        C.eq(sum(r[i] or 0 for r in rows), v, "%s: %s summed over every call" % (name, k))
    keep = exp["calls"]
    if exp["trimmed"]:
        half = len(keep) // 2
        rows = rows[:half] + rows[-half:]
    for n, (g, w) in enumerate(zip(rows, keep)):
        same_row(g, w, "%s: call %d (%s)" % (name, n, dict(zip(cols, w))))
    C.eq(len(doc["ranks"]), len(exp["ranks"]), "%s: ranks" % name)
    for g, w in zip(doc["ranks"], exp["ranks"]):
        same_row([g.get(k) for k in SUMMARY_KEYS], [w.get(k) for k in SUMMARY_KEYS],
                 "%s: rank %s summary" % (name, w["rank"]))


# ---- a hand-made job: 3 ranks, known straggler ----

# kernel starts (us) of the allreduces Seq 1..4 per rank; every kernel of a
# call ends at the same time (NCCL waits for the last rank)
STARTS = {0: [100, 300, 500, 700], 1: [110, 340, 505, 700], 2: [150, 320, 560, 790]}
ENDS = [250, 440, 660, 890]
NELEMS = 1048576  # Float: 4 MiB


def write_rank(path, r):
    ev = []
    corr = [1000 * (r + 1)]

    def call(seq, kstart, kend, op_ts):
        corr[0] += 1
        args = {"Collective name": "allreduce", "In msg nelems": NELEMS, "Out msg nelems": NELEMS,
                "Group size": 3, "dtype": "Float", "Process Group Name": "0",
                "Process Group Ranks": "[0, 1, 2]", "Seq": seq}
        ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
                   "ts": op_ts, "dur": 15, "args": args})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1,
                   "tid": 1, "ts": op_ts + 2, "dur": 10})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": op_ts + 4, "dur": 5, "args": {"correlation": corr[0]}})
        ev.append({"ph": "X", "cat": "kernel",
                   "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0,
                   "tid": 7, "ts": kstart, "dur": kend - kstart,
                   "args": {"device": 0, "stream": 7, "correlation": corr[0]}})

    if r == 1:  # a call the others lack: matched by Seq, it stands alone
        call(0, 40, 60, 20)
    for i, k in enumerate(STARTS[r]):
        call(i + 1, k, ENDS[i], k - 30 - 10 * r)
    # a wait: a record_param_comms that is no collective
    ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
               "ts": 950, "dur": 3, "args": {"Collective name": "wait", "Group size": 3}})
    doc = {"distributedInfo": {"backend": "nccl", "rank": r, "world_size": 3},
           "traceEvents": ev}
    with open(path, "w") as f:
        json.dump(doc, f)


def check_job(tmp):
    job = os.path.join(tmp, "job")
    os.mkdir(job)
    for r in range(3):
        write_rank(os.path.join(job, "rank_%d.json" % r), r)
    shuffled = os.path.join(tmp, "shuffled")
    os.mkdir(shuffled)
    for r in range(3):
        with open(os.path.join(job, "rank_%d.json" % r)) as f:
            doc = json.load(f)
        random.Random(r).shuffle(doc["traceEvents"])
        with open(os.path.join(shuffled, "rank_%d.json" % r), "w") as f:
            json.dump(doc, f)
    db = os.path.join(tmp, "job.db")
    C.eq(te.run_tool(["ingest", "-q", db, job]).returncode, 0, "job: ingest")
    docs = [run_json(["--per-call", job]), run_json(["--per-call", db]),
            run_json(["--per-call", shuffled])]
    if None in docs:
        return
    for d in docs:
        for c in d["collectives"]:
            c.pop("trace_id", None)
        for r in d["ranks"]:
            r.pop("path", None)
    C.eq(docs[1], docs[0], "job: a database gives what the files give")
    C.eq(docs[2], docs[0], "job: the files with their events shuffled give the same")
    doc = docs[0]
    calls = doc["collectives"]
    C.eq(len(calls), 13, "job: 4 allreduces x 3 ranks and rank 1's extra one (no wait)")
    C.eq(doc["instances"], 5, "job: 5 instances")
    by = {(c["rank"], c["seq"]): c for c in calls}
    C.check(all(c["seq_from"] == "seq" for c in calls), "job: matched by Seq")
    C.eq(by[(1, 0)]["ranks"], 1, "job: Seq 0 is rank 1's alone")
    C.eq(by[(1, 0)].get("skew_ns"), None, "job: no skew for a call alone")
    size = NELEMS * 4
    for i in range(4):
        starts = {r: STARTS[r][i] for r in range(3)}
        last = max(starts.values())
        strag = min(r for r in range(3) if starts[r] == last)
        for r in range(3):
            c = by[(r, i + 1)]
            dur = (ENDS[i] - starts[r]) * 1000
            C.eq((c["ranks"], c["straggler_rank"], c["skew_ns"], c["late_ns"]),
                 (3, strag, (last - min(starts.values())) * 1000,
                  (starts[r] - min(starts.values())) * 1000),
                 "job: Seq %d rank %d: ranks, straggler, skew, late" % (i + 1, r))
            C.eq((c["dur_ns"], c["size_bytes"], c["group_size"], c["dtype"], c["collective"]),
                 (dur, size, 3, "Float", "allreduce"), "job: Seq %d rank %d: call" % (i + 1, r))
            C.check(same(c["algbw_gbps"], size / dur) and
                    same(c["busbw_gbps"], size / dur * 4 / 3),
                    "job: Seq %d rank %d: algbw, busbw = algbw x 2(n-1)/n" % (i + 1, r),
                    (c["algbw_gbps"], c["busbw_gbps"], size / dur))
    ranks = {r["rank"]: r for r in doc["ranks"]}
    C.eq([(ranks[r]["last"], ranks[r]["skew_total_ns"], ranks[r]["skew_max_ns"])
          for r in range(3)], [(0, 0, 0), (1, 40000, 40000), (3, 200000, 90000)],
         "job: per rank: times last, skew caused (total, max)")
    # --arrival cpu: the ops' starts (k - 30 - 10 r): rank 2 is last every time
    cpu = run_json(["--per-call", "--arrival", "cpu", job])
    if cpu:
        got = sorted((c["seq"], c["straggler_rank"], c["skew_ns"]) for c in cpu["collectives"]
                     if c["rank"] == 0)
        want = []
        for i in range(4):
            arr = {r: STARTS[r][i] - 30 - 10 * r for r in range(3)}
            last = max(arr.values())
            want.append((i + 1, min(r for r in arr if arr[r] == last),
                         (last - min(arr.values())) * 1000))
        C.eq(got, want, "job: --arrival cpu: straggler and skew by the ops' starts")
    one = run_json(["--rank", "2", job])
    if one:
        C.eq([(r["rank"], r["calls"], r["matched"], r["last"]) for r in one["ranks"]],
             [(2, 4, 0, 0)], "job: --rank 2: one rank, nothing to match")
    rng = run_json(["--per-call", "--time-range", "260:600", job])
    if rng:
        C.eq(sorted({c["seq"] for c in rng["collectives"]}), [2, 3],
             "job: --time-range 260:600 us: the calls whose op started there, same Seq")
    for fmt in ("table", "csv", "markdown"):
        p = te.run_tool(["collectives", "--per-call", "--format", fmt, job])
        C.check(p.returncode == 0 and b"allreduce" in p.stdout, "job: --format %s" % fmt,
                p.stderr.decode()[-200:])


def check_bad(tmp):
    none = os.path.join(tmp, "none.json")
    with open(none, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0,
                                    "tid": 7, "ts": 1, "dur": 2}]}, f)
    p = te.run_tool(["collectives", none])
    err = p.stderr.decode().strip().splitlines()
    C.eq(p.returncode, 4, "no collective: exit 4 (nothing found, as kernels --by runtime)")
    C.check(len(err) == 1 and "no collective" in err[0] and p.stdout == b"",
            "no collective: one line, nothing on stdout", err)
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write("not json")
    C.eq(te.run_tool(["collectives", bad]).returncode, 3, "not a trace: exit 3")
    C.eq(te.run_tool(["collectives", "--arrival", "late", none]).returncode, 2,
         "a bad --arrival: usage error")


# ---- --name and --under ----

def under_ops(path, rx):
    """(thread, ts, end) of the slices of a trace whose whole name matches rx"""
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=mx.Decimal)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in ev:
        if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e and \
                e.get("cat") not in mx.GPU_CATS | mx.RUNTIME and re.fullmatch(rx, e.get("name", "")):
            ts = mx.ns(e["ts"])
            out.append(((e.get("pid"), e.get("tid")), ts, ts + max(0, mx.ns(e.get("dur", 0)))))
    return out


def keep_filtered(name=None, under=None):
    """make_expected's keep(): --name on the collective or the name, --under
    by the call's op, annotation or a kernel's runtime call (any of them)"""
    def keep(path, calls):
        ops = under_ops(path, under) if under else None
        out = []
        for c in calls:
            if name and not (re.search(name, c["collective"] or "") or
                             re.search(name, c["name"] or "")):
                continue
            if ops is not None and not any(t == th and a <= ts and end <= b
                                           for th, ts, end in c["at"] for t, a, b in ops):
                continue
            out.append(c)
        return out
    return keep


def check_filters(tmp):
    cases = [
        ("dlrm_8rank", ["--name", "all_to_all"], {"name": "all_to_all"}),
        ("dlrm_8rank", ["--name", "^allreduce$"], {"name": "^allreduce$"}),
        ("dlrm_8rank", ["--under", "## sparse_data_dist ##"], {"under": "## sparse_data_dist ##"}),
        ("dlrm_8rank", ["--under", "ProfilerStep#.*", "--name", "all"],
         {"under": "ProfilerStep#.*", "name": "all"}),
        ("nccl_parser_config", ["--under", "ProfilerStep#[0-9]*[02468]"],
         {"under": "ProfilerStep#[0-9]*[02468]"}),
        ("nccl_parser_config", ["--name", "^broad"], {"name": "^broad"}),
    ]
    for ds, args, f in cases:
        rel = dict(mx.DATASETS)[ds]
        inp = os.path.join(te.shared_dir(), rel)
        if not os.path.exists(inp):
            C.skip(ds, "missing " + inp)
            continue
        exp = mx.dataset(inp, keep_filtered(**f))
        exp["input"] = rel
        label = "%s %s" % (ds, " ".join(args))
        C.check(0 < exp["calls_total"] < mx.dataset(inp)["calls_total"],
                "%s: keeps some calls, not all" % label, exp["calls_total"])
        check_dataset(label, exp, args)
    # a database: the same calls
    dlrm = os.path.join(te.shared_dir(), dict(mx.DATASETS)["dlrm_8rank"])
    db = os.path.join(tmp, "dlrm_f.db")
    if os.path.isdir(dlrm) and te.run_tool(["ingest", "-q", db, dlrm]).returncode == 0:
        args = ["--per-call", "--under", "## sparse_data_dist ##", "--name", "alltoall"]
        a, b = run_json(args + [dlrm]), run_json(args + [db])
        if a and b:
            for r in a["ranks"] + b["ranks"]:
                r.pop("path")
            C.eq(b, a, "dlrm_8rank --under --name: a database gives what the directory gives")
    p = te.run_tool(["collectives", "--name", "(", dlrm])
    C.check(p.returncode == 2 and len(p.stderr.decode().strip().splitlines()) == 1,
            "--name with a bad regex: usage error, one line")


def main():
    with open(FIXTURE) as f:
        exp = json.load(f)
    for name, d in exp.items():
        C.section(name, check_dataset, name, d)
    with tempfile.TemporaryDirectory() as tmp:
        C.section("job", check_job, tmp)
        C.section("bad input", check_bad, tmp)
        C.section("--name, --under", check_filters, tmp)
        dlrm = os.path.join(te.shared_dir(), exp["dlrm_8rank"]["input"])
        if os.path.isdir(dlrm):
            db = os.path.join(tmp, "dlrm.db")
            C.eq(te.run_tool(["ingest", "-q", db, dlrm]).returncode, 0, "dlrm: ingest")
            a, b = run_json(["--per-call", dlrm]), run_json(["--per-call", db])
            if a and b:
                for r in a["ranks"] + b["ranks"]:
                    r.pop("path")
                C.eq(b, a, "dlrm_8rank: a database gives what the directory gives")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
