#!/usr/bin/env python3
"""Ingest every shared test trace and compare what the database holds with
counts computed independently in Python (tests/tools/trace_expect.py).

Per file: exit code 0, per-(ph, cat) event counts, ET nodes, memory-timeline
rows, traces.events / format / gzip, duplicate refusal (exit 5, nothing
changed), --replace (one copy left), and `info --format json` on the file and
on the database. Then the dlrm_8rank directory in one call (16 traces, ranks),
and the runtime/kernel links of hta/df_index_resolver.

Environment: TRACETOOL (binary), TT_SHARED (shared folder with testdata/).
"""

import bisect
import collections
import json
import os
import re
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("ingest_counts")

FORMAT_NAME = {"chrome": "kineto-json", "chrome-array": "chrome-array",
               "et": "execution-trace", "memtl": "memory-timeline-raw"}

TABLES = ["strings", "traces", "slices", "runtime", "gpu_ops", "memory", "flows",
          "instants", "metadata_events", "et_nodes", "memory_timeline", "import_issues"]

LINK_TRACE = os.path.join("hta", "df_index_resolver", "df_index_resolver.json.gz")


def connect(db):
    return sqlite3.connect("file:%s?mode=ro" % db, uri=True)


def table_counts(db):
    con = connect(db)
    try:
        return dict((t, con.execute("SELECT count(*) FROM %s" % t).fetchone()[0])
                    for t in TABLES)
    finally:
        con.close()


def db_counter(con, trace_id):
    rows = con.execute(
        "SELECT e.ph, c.s, count(*) FROM events e LEFT JOIN strings c ON c.id=e.cat"
        " WHERE e.trace_id=? GROUP BY 1,2", (trace_id,)).fetchall()
    return collections.Counter(dict(((ph, cat), n) for ph, cat, n in rows))


def info_counter(trace):
    out = collections.Counter()
    for c in trace.get("categories", []):
        out[(c["ph"], c["cat"])] += c["count"]
    return out


def counter_diff(got, want, limit=6):
    keys = sorted(set(got) | set(want), key=lambda k: (str(k[0]), str(k[1])))
    diffs = ["%r: got %d, expected %d" % (k, got.get(k, 0), want.get(k, 0))
             for k in keys if got.get(k, 0) != want.get(k, 0)]
    more = " (+%d more)" % (len(diffs) - limit) if len(diffs) > limit else ""
    return "; ".join(diffs[:limit]) + more


def one_error_line(cp, path, label):
    lines = te.stderr_lines(cp)
    C.check(len(lines) == 1, label + ": exactly one stderr line", lines)
    if lines:
        C.check(lines[0].startswith("tracetool: ") and path in lines[0],
                label + ": stderr line starts with 'tracetool: ' and names the file",
                lines[0])


def check_info(args, exp, label, path_in_label=None):
    cp = te.run_tool(["info", "--format", "json"] + args)
    if not C.eq(cp.returncode, 0, label + ": exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return
    try:
        doc = json.loads(cp.stdout.decode("utf-8"))
    except ValueError as e:
        C.check(False, label + ": output is JSON", e)
        return
    traces = doc.get("traces", [])
    if not C.eq(len(traces), 1, label + ": one trace in the output"):
        return
    t = traces[0]
    got = info_counter(t)
    C.check(got == exp.counter, label + ": per-(ph,cat) counts",
            counter_diff(got, exp.counter))
    C.eq(t.get("events"), exp.total, label + ": events")
    C.eq(t.get("format"), FORMAT_NAME[exp.kind], label + ": format")
    feats = t.get("features", {})
    if exp.kind == "et":
        C.eq(feats.get("et_nodes"), exp.et_nodes, label + ": features.et_nodes")
    if exp.kind == "memtl":
        C.eq(feats.get("memory_timeline_rows"), exp.memtl_rows,
             label + ": features.memory_timeline_rows")


# ------------------------------------------------------------ runtime / kernel links

def norm_id(v):
    """pid/tid as tracetool keys them: numeric strings become integers."""
    if isinstance(v, str) and re.match(r"^-?[0-9]+$", v):
        return int(v)
    return v


def innermost(ops, starts, pmax, rts, rend):
    """The innermost op of one thread enclosing [rts, rend]: the latest ts,
    ties broken by the smallest dur. Returns (ts, dur, {names}) or None."""
    i = bisect.bisect_right(starts, rts) - 1
    while i >= 0 and pmax[i] >= rend:
        ts, dur, name = ops[i]
        if ts + dur >= rend:
            # ops are sorted by (ts, dur descending): scanning back from the
            # highest index, the first enclosing op of this ts has the
            # smallest enclosing dur; collect exact (ts, dur) ties.
            names = {name}
            j = i - 1
            while j >= 0 and ops[j][0] == ts and ops[j][1] == dur:
                names.add(ops[j][2])
                j -= 1
            return (ts, dur, names)
        i -= 1
    return None


def check_links(db, trace_id, events):
    label = "links %s" % LINK_TRACE
    xs = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]
    rts = [e for e in xs if e.get("cat") == "cuda_runtime"]
    kernels = [e for e in xs if e.get("cat") == "kernel"]
    ops = [e for e in xs if e.get("cat") == "cpu_op"]
    C.check(len(rts) > 1000 and len(kernels) > 1000 and len(ops) > 1000,
            label + ": trace has runtime calls, kernels and cpu ops",
            (len(rts), len(kernels), len(ops)))
    ints = all(isinstance(e.get("ts"), int) and isinstance(e.get("dur"), int)
               for e in rts + ops)
    C.check(ints, label + ": ts/dur of runtime calls and cpu ops are integers (us)")

    def corr(e):
        a = e.get("args")
        v = a.get("correlation") if isinstance(a, dict) else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    rt_corrs = set(c for c in (corr(e) for e in rts) if c is not None)
    want_k = sum(1 for k in kernels if corr(k) in rt_corrs)
    con = connect(db)
    try:
        got_k = con.execute("SELECT count(*) FROM gpu_ops WHERE trace_id=? AND kind='kernel'"
                            " AND runtime_id IS NOT NULL", (trace_id,)).fetchone()[0]
        C.eq(got_k, want_k, label + ": kernels linked to a runtime call (by correlation)")

        by_thread = collections.defaultdict(list)
        for o in ops:
            by_thread[(norm_id(o.get("pid")), norm_id(o.get("tid")))].append(
                (o["ts"], o["dur"], o.get("name", "")))
        index = {}
        for k, lst in by_thread.items():
            lst.sort(key=lambda x: (x[0], -x[1]))
            starts = [x[0] for x in lst]
            pmax, m = [], None
            for x in lst:
                end = x[0] + x[1]
                m = end if m is None or end > m else m
                pmax.append(m)
            index[k] = (lst, starts, pmax)

        choice = []  # (runtime event, innermost op or None)
        for r in rts:
            k = (norm_id(r.get("pid")), norm_id(r.get("tid")))
            res = None
            if k in index:
                lst, starts, pmax = index[k]
                res = innermost(lst, starts, pmax, r["ts"], r["ts"] + r["dur"])
            choice.append((r, res))
        want_rt = sum(1 for _, res in choice if res is not None)
        got_rt = con.execute(
            "SELECT count(*) FROM runtime r JOIN strings c ON c.id=r.cat WHERE r.trace_id=?"
            " AND c.s='cuda_runtime' AND r.op_id IS NOT NULL", (trace_id,)).fetchone()[0]
        C.eq(got_rt, want_rt, label + ": cuda_runtime calls linked to an enclosing cpu_op")
        C.check(0 < want_rt < len(rts) + 1, label + ": expectation is non-trivial",
                (want_rt, len(rts)))

        # innermost op for a deterministic sample of calls with a unique correlation
        ccount = collections.Counter(corr(r) for r in rts)
        uniq = sorted(((corr(r), r, res) for r, res in choice
                       if corr(r) is not None and ccount[corr(r)] == 1),
                      key=lambda x: x[0])
        n = min(500, len(uniq))
        sample = [uniq[(i * len(uniq)) // n] for i in range(n)] if n else []
        db_rows = {}
        for c, ts, dur, name in con.execute(
                "SELECT r.correlation, s.ts, s.dur, n.s FROM runtime r"
                " JOIN strings c ON c.id=r.cat LEFT JOIN slices s ON s.id=r.op_id"
                " LEFT JOIN strings n ON n.id=s.name"
                " WHERE r.trace_id=? AND c.s='cuda_runtime'", (trace_id,)):
            db_rows.setdefault(c, []).append((ts, dur, name))
        bad = []
        linked_in_sample = 0
        for c, r, res in sample:
            rows = db_rows.get(c, [])
            if len(rows) != 1:
                bad.append("correlation %d: %d runtime rows" % (c, len(rows)))
                continue
            ts, dur, name = rows[0]
            if res is None:
                if ts is not None:
                    bad.append("correlation %d: linked to (%r, %r, %r), expected no op"
                               % (c, ts, dur, name))
                continue
            linked_in_sample += 1
            ets, edur, names = res
            if ts != ets * 1000 or dur != edur * 1000 or name not in names:
                bad.append("correlation %d: op (%r, %r, %r), expected (%d, %d, %s)"
                           % (c, ts, dur, name, ets * 1000, edur * 1000, sorted(names)))
        C.check(n == min(500, len(rts)) and linked_in_sample > n // 2,
                label + ": sample of %d calls, most of them linked" % n, (n, linked_in_sample))
        C.check(not bad, label + ": innermost enclosing cpu_op for %d sampled calls" % n,
                "%d mismatches: %s" % (len(bad), "; ".join(bad[:5])))
    finally:
        con.close()


# ------------------------------------------------------------ per file

def check_file(tmp, idx, path, rel):
    label = rel
    exp = te.expect_file(path)
    if not C.check(exp.kind is not None, label + ": test data is a trace (python)"):
        return
    C.check(exp.total > 0, label + ": test data has elements (python)", exp)
    with open(path, "rb") as f:
        gz = te.is_gzip(f.read(2))
    db = os.path.join(tmp, "f%02d.db" % idx)

    cp = te.run_tool(["ingest", "-q", db, path])
    if not C.eq(cp.returncode, 0, label + ": ingest exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return
    C.eq(te.stderr_lines(cp), [], label + ": ingest -q prints nothing on stderr")

    con = connect(db)
    try:
        rows = con.execute("SELECT id, events, format, gzip, truncated FROM traces").fetchall()
        if not C.eq(len(rows), 1, label + ": one traces row"):
            return
        tid, events, fmt, gzip_flag, truncated = rows[0]
        C.eq(events, exp.total, label + ": traces.events")
        C.eq(fmt, FORMAT_NAME[exp.kind], label + ": traces.format")
        C.eq(gzip_flag, 1 if gz else 0, label + ": traces.gzip")
        C.eq(truncated, 0, label + ": traces.truncated")
        got = db_counter(con, tid)
        C.check(got == exp.counter, label + ": per-(ph,cat) event counts",
                counter_diff(got, exp.counter))
        n_et = con.execute("SELECT count(*) FROM et_nodes WHERE trace_id=?", (tid,)).fetchone()[0]
        n_mt = con.execute("SELECT count(*) FROM memory_timeline WHERE trace_id=?",
                           (tid,)).fetchone()[0]
        C.eq(n_et, exp.et_nodes, label + ": et_nodes rows")
        C.eq(n_mt, exp.memtl_rows, label + ": memory_timeline rows")
    finally:
        con.close()
    before = table_counts(db)

    # duplicate: refused with exit 5, database unchanged
    cp = te.run_tool(["ingest", "-q", db, path])
    C.eq(cp.returncode, 5, label + ": second ingest exit code")
    one_error_line(cp, path, label + ": second ingest")
    C.eq(table_counts(db), before, label + ": second ingest leaves the database unchanged")

    # --replace: exactly one copy, same rows
    cp = te.run_tool(["ingest", "-q", "--replace", db, path])
    C.eq(cp.returncode, 0, label + ": --replace exit code")
    after = table_counts(db)
    C.eq(after, before, label + ": --replace keeps exactly one copy (same row counts)")
    con = connect(db)
    try:
        ids = [r[0] for r in con.execute("SELECT id FROM traces")]
        C.check(len(ids) == 1 and ids[0] != tid, label + ": --replace made a new trace row",
                (ids, tid))
        if len(ids) == 1:
            got = db_counter(con, ids[0])
            C.check(got == exp.counter, label + ": per-(ph,cat) counts after --replace",
                    counter_diff(got, exp.counter))
            tid = ids[0]
    finally:
        con.close()

    check_info([path], exp, label + ": info FILE")
    check_info([db], exp, label + ": info DB")

    if rel == LINK_TRACE:
        C.section(label + ": links", check_links, db, tid, exp.events)


def check_dlrm_dir(tmp, root):
    d = os.path.join(root, "param", "dlrm_8rank")
    label = "dlrm_8rank directory"
    files = te.trace_files(d)
    C.eq(len(files), 16, label + ": 16 files (python)")
    db = os.path.join(tmp, "dlrm.db")
    cp = te.run_tool(["ingest", "-q", db, d])
    if not C.eq(cp.returncode, 0, label + ": ingest exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return
    con = connect(db)
    try:
        rows = con.execute("SELECT path, rank, events, format FROM traces").fetchall()
    finally:
        con.close()
    C.eq(len(rows), 16, label + ": 16 traces")
    by_name = dict((os.path.basename(p), (rank, events, fmt)) for p, rank, events, fmt in rows)
    ranks = []
    for f in files:
        name = os.path.basename(f)
        exp = te.expect_file(f)
        got = by_name.get(name)
        if not C.check(got is not None, label + ": %s is in traces" % name):
            continue
        C.eq(got[1], exp.total, label + ": %s events" % name)
        C.eq(got[2], FORMAT_NAME[exp.kind], label + ": %s format" % name)
        m = re.match(r"^worker([0-9]+)_", name)
        if m:
            want = int(m.group(1))
            di = (exp.top or {}).get("distributedInfo")
            if isinstance(di, dict) and isinstance(di.get("rank"), int):
                C.eq(di["rank"], want, label + ": %s distributedInfo.rank = name rank (python)"
                     % name)
                want = di["rank"]
            C.eq(got[0], want, label + ": %s traces.rank" % name)
            ranks.append(got[0])
    C.eq(sorted(ranks), list(range(8)), label + ": kineto ranks are 0..7")


def main():
    shared = te.shared_dir()
    root = os.path.join(shared, "testdata")
    if not os.path.isdir(root):
        C.skip("all", "no test data at %s" % root)
        return C.finish()
    if not os.access(te.tracetool_path(), os.X_OK):
        C.check(False, "tracetool binary exists", te.tracetool_path())
        return C.finish()
    files = te.trace_files(root)
    C.check(len(files) >= 40, "shared test data: at least 40 trace files", len(files))
    with tempfile.TemporaryDirectory(prefix="tt_counts_") as tmp:
        for i, f in enumerate(files):
            rel = os.path.relpath(f, root)
            C.section(rel, check_file, tmp, i, f, rel)
            for ext in ("", "-journal", "-wal"):
                p = os.path.join(tmp, "f%02d.db%s" % (i, ext))
                if os.path.exists(p):
                    os.remove(p)
        C.section("dlrm_8rank", check_dlrm_dir, tmp, root)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
