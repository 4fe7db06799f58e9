#!/usr/bin/env python3
"""Truncated inputs: five real traces cut at 20 points each.

For every cut prefix (plain, and gzip-compressed for 5 of the 20):
  - `ingest DB cut` exits 3, prints exactly one stderr line
    "tracetool: <path>: byte N: ..." with N = the cut length, and leaves the
    database exactly as it was (a database holding another trace keeps it);
  - `ingest --salvage` exits 0 and stores exactly the elements that are
    complete before the cut (computed with trace_expect.array_layout), with
    traces.truncated = 1.
Plus the full gzip file cut at the compressed-byte level (middle, and inside
the 8-byte trailer). No run may end with a signal.

Environment: TRACETOOL (binary), TT_SHARED (shared folder with testdata/).
"""

import gzip
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("truncation")

TRACES = [
    os.path.join("hta", "df_index_resolver", "df_index_resolver.json.gz"),
    os.path.join("kineto", "tb_plugin_2020-12_array_format", "worker0.pt.trace.json.gz"),
    os.path.join("hta", "nccl_parser_config", "nccl_data.json.gz"),
    os.path.join("param", "resnet_pair", "resnet_kineto.json.gz"),
    os.path.join("param", "et_only", "resnet_2gpu_et.json.gz"),
]

NCUTS = 20
GZ_CUTS = 5

TABLES = ["strings", "traces", "slices", "runtime", "gpu_ops", "memory", "flows",
          "instants", "metadata_events", "et_nodes", "memory_timeline", "import_issues"]
PER_TRACE = ["slices", "runtime", "gpu_ops", "memory", "flows", "instants",
             "metadata_events", "et_nodes", "memory_timeline", "import_issues"]

OTHER_TRACE = (b'{"schemaVersion": 1, "traceEvents": ['
               b'{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7,'
               b' "ts": 100, "dur": 50, "args": {"External id": 1}},'
               b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7,'
               b' "tid": 7, "ts": 110, "dur": 5, "args": {"correlation": 9}},'
               b'{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,'
               b' "ts": 120, "dur": 20, "args": {"correlation": 9, "device": 0, "stream": 7}},'
               b'{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},'
               b'{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7,'
               b' "tid": 7, "ts": 130, "s": "t", "args": {"Bytes": 512, "Addr": 1}}]}\n')


def connect(db):
    return sqlite3.connect("file:%s?mode=ro" % db, uri=True)


def table_counts(db):
    con = connect(db)
    try:
        return dict((t, con.execute("SELECT count(*) FROM %s" % t).fetchone()[0])
                    for t in TABLES)
    finally:
        con.close()


def trace_counts(con, tid):
    return dict((t, con.execute("SELECT count(*) FROM %s WHERE trace_id=?" % t,
                                (tid,)).fetchone()[0]) for t in PER_TRACE)


def error_line_ok(cp, path, label, want_offset=None):
    lines = te.stderr_lines(cp)
    if not C.check(len(lines) == 1, label + ": exactly one stderr line", lines):
        return
    m = re.match(r"^tracetool: %s: byte (\d+): .+" % re.escape(path), lines[0])
    if C.check(m is not None, label + ": stderr is 'tracetool: PATH: byte N: message'",
               lines[0]) and want_offset is not None:
        C.eq(int(m.group(1)), want_offset, label + ": byte offset of the truncation")


def not_crashed(cp, label):
    C.check(cp.returncode >= 0, label + ": no signal", cp.returncode)


def choose_cuts(raw, lay):
    """20 distinct cut lengths L (the prefix raw[:L] is written), all inside
    the JSON document so that every prefix is incomplete (and holds at least
    its first byte: a whitespace-only prefix is an empty input, not a
    truncated one)."""
    doc_len = len(raw.rstrip(b" \t\r\n"))
    starts, ends = lay["starts"], lay["ends"]
    n = len(ends)
    picks = []

    def add(x):
        if 1 <= x < doc_len and x not in picks:
            picks.append(x)

    doc_start = len(raw) - len(raw.lstrip(b" \t\r\n"))
    add(doc_start + 1)                      # 1 byte of the document
    add(starts[0] + 1)                      # just inside the first element
    k = n // 3
    add(ends[k])                            # right after a complete element's '}'
    found = {}
    for j in range(k + 1, min(n, k + 200)):
        seg = raw[starts[j]:ends[j]]
        m = re.search(rb'"\s*:\s*"([^"\\]{2,})"', seg)
        if m and "string" not in found:
            found["string"] = starts[j] + m.start(1) + 1     # inside a string value
        m = re.search(rb'[:\[,]\s*(-?[0-9]{2,})', seg)
        if m and "number" not in found:
            found["number"] = starts[j] + m.start(1) + 1     # inside a number
        if len(found) == 2:
            break
    for what in ("string", "number"):
        if what in found:
            add(found[what])
    add(doc_len // 2)                       # the middle
    add(doc_len - 25)                       # within the last 50 bytes
    add(doc_len - 1)                        # the document minus its last byte
    add(lay["start"] + 1)                   # just after the array's '['
    add(ends[2 * n // 3] + 1)               # just after a ',' between elements
    add(starts[n // 2])                     # just before an element's '{'
    add(ends[-1])                           # after the last element, before ']'
    add(lay["close"])                       # after the array (object not closed)
    i = 1
    while len(picks) < NCUTS:
        add((doc_len * i) // (NCUTS - 5) + 7 * i)
        i += 1
    return sorted(picks[:NCUTS]), found


def complete(lay, L):
    """(objects, phased) among the elements that end at or before byte L."""
    objs = phased = 0
    for end, o, p in zip(lay["ends"], lay["objects"], lay["phased"]):
        if end > L:
            break
        objs += o
        phased += p
    return objs, phased


def first_objects(lay, count):
    """(objects, phased) among the shortest element prefix holding `count` objects."""
    objs = phased = 0
    for o, p in zip(lay["objects"], lay["phased"]):
        if objs >= count:
            break
        objs += o
        phased += p
    return objs, phased


def salvage(tmp, base_db, base_id, base_counts, path, label, is_et):
    """Ingest `path` with --salvage into a copy of the base database; returns
    (events, truncated, stored) of the new trace or None."""
    db = os.path.join(tmp, "salvage.db")
    if os.path.exists(db):
        os.remove(db)
    shutil.copyfile(base_db, db)
    cp = te.run_tool(["ingest", "-q", "--salvage", db, path])
    not_crashed(cp, label + " --salvage")
    if not C.eq(cp.returncode, 0, label + " --salvage: exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return None
    con = connect(db)
    try:
        rows = con.execute("SELECT id, events, truncated FROM traces WHERE id<>?",
                           (base_id,)).fetchall()
        if not C.eq(len(rows), 1, label + " --salvage: one new trace"):
            return None
        tid, events, truncated = rows[0]
        if is_et:
            stored = con.execute("SELECT count(*) FROM et_nodes WHERE trace_id=?",
                                 (tid,)).fetchone()[0]
        else:
            stored = con.execute("SELECT count(*) FROM events WHERE trace_id=?",
                                 (tid,)).fetchone()[0]
        C.eq(trace_counts(con, base_id), base_counts,
             label + " --salvage: the other trace is untouched")
        return events, truncated, stored
    finally:
        con.close()


def check_trace(tmp, root, rel):
    path = os.path.join(root, rel)
    raw = te.read_bytes(path)
    lay = te.array_layout(raw)
    is_et = lay["key"] == "nodes"
    total = sum(lay["objects"])
    exp = te.expect_bytes(raw)
    C.eq(total, exp.total, rel + ": layout and json agree on the element count (python)")
    C.check(total > 100, rel + ": enough elements (python)", total)
    name = os.path.basename(rel).split(".")[0]

    # a database that already holds another trace
    base_db = os.path.join(tmp, "base.db")
    for p in (base_db,):
        if os.path.exists(p):
            os.remove(p)
    other = os.path.join(tmp, "other_trace.json")
    with open(other, "wb") as f:
        f.write(OTHER_TRACE)
    cp = te.run_tool(["ingest", "-q", base_db, other])
    if not C.eq(cp.returncode, 0, rel + ": base database ingest"):
        return
    con = connect(base_db)
    try:
        base_id = con.execute("SELECT id FROM traces").fetchone()[0]
        base_counts = trace_counts(con, base_id)
    finally:
        con.close()
    snapshot = table_counts(base_db)

    cuts, found = choose_cuts(raw, lay)
    C.check("string" in found and "number" in found,
            rel + ": cut points inside a string and inside a number found", found)
    C.eq(len(cuts), NCUTS, rel + ": %d cut points" % NCUTS)
    gz_idx = set((i * (len(cuts) - 1)) // (GZ_CUTS - 1) for i in range(GZ_CUTS))
    for i, L in enumerate(cuts):
        objs, phased = complete(lay, L)
        variants = [("plain", raw[:L])]
        if i in gz_idx:
            variants.append(("gzip", gzip.compress(raw[:L], compresslevel=1)))
        for kind, data in variants:
            label = "%s cut %d/%s" % (rel, L, kind)
            cut = os.path.join(tmp, "%s.cut%d%s" % (name, L, ".json.gz" if kind == "gzip"
                                                    else ".json"))
            with open(cut, "wb") as f:
                f.write(data)
            cp = te.run_tool(["ingest", "-q", base_db, cut])
            not_crashed(cp, label)
            C.eq(cp.returncode, 3, label + ": exit code")
            error_line_ok(cp, cut, label, L)
            C.eq(table_counts(base_db), snapshot, label + ": database unchanged")
            if i == 0 and kind == "plain":
                fresh = os.path.join(tmp, "fresh.db")
                cp = te.run_tool(["ingest", "-q", fresh, cut])
                C.eq(cp.returncode, 3, label + " into a new database: exit code")
                if os.path.exists(fresh):
                    C.eq(table_counts(fresh)["traces"], 0,
                         label + " into a new database: no traces row")
                    os.remove(fresh)
            got = salvage(tmp, base_db, base_id, base_counts, cut, label, is_et)
            if got is not None:
                events, truncated, stored = got
                C.eq(events, objs, label + " --salvage: traces.events = complete elements")
                C.eq(truncated, 1, label + " --salvage: traces.truncated")
                C.eq(stored, objs if is_et else phased,
                     label + " --salvage: stored %s" % ("et_nodes" if is_et else "events"))
            os.remove(cut)

    # the full file's gzip bytes cut short: in the deflate data, and in the trailer
    with open(path, "rb") as f:
        gzdata = f.read()
    C.check(te.is_gzip(gzdata), rel + ": the shared file is gzip")
    for cutname, G in (("middle", len(gzdata) // 2), ("trailer", len(gzdata) - 4)):
        label = "%s gz bytes cut %s (%d of %d)" % (rel, cutname, G, len(gzdata))
        cut = os.path.join(tmp, "%s.gzcut_%s.json.gz" % (name, cutname))
        with open(cut, "wb") as f:
            f.write(gzdata[:G])
        # what zlib itself can still inflate from the cut bytes
        avail = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(gzdata[:G])
        objs, phased = complete(lay, len(avail))
        cp = te.run_tool(["ingest", "-q", base_db, cut])
        not_crashed(cp, label)
        C.eq(cp.returncode, 3, label + ": exit code")
        error_line_ok(cp, cut, label)
        C.eq(table_counts(base_db), snapshot, label + ": database unchanged")
        got = salvage(tmp, base_db, base_id, base_counts, cut, label, is_et)
        if got is not None:
            events, truncated, stored = got
            C.check(0 < events <= total, label + " --salvage: 0 < events <= total",
                    (events, total))
            C.eq(truncated, 1, label + " --salvage: traces.truncated")
            C.eq(stored, first_objects(lay, events)[0 if is_et else 1],
                 label + " --salvage: stored %s match the first traces.events elements"
                 % ("et_nodes" if is_et else "events"))
            C.eq(events, objs, label + " --salvage: keeps every element zlib can inflate "
                 "(%d bytes)" % len(avail))
        os.remove(cut)


def check_helper():
    """element_end_offsets must count UTF-8 bytes, not characters."""
    raw = '{"a": "\u00e9", "traceEvents": [ {"name": "caf\u00e9 \u2713"} ,{"name": "\U0001F600"}]}'
    raw = raw.encode("utf-8")
    ends, member = te.element_end_offsets(raw)
    first = raw.index(b"} ,") + 1
    C.eq((ends, member), ([first, len(raw) - 2], True),
         "element_end_offsets: byte offsets of a UTF-8 document (python)")
    ends, member = te.element_end_offsets(b' [{"x": "\xc3\xa9"}, [1] ]')
    C.eq((ends, member), ([13, 18], False), "element_end_offsets: bare array (python)")


def main():
    check_helper()
    root = os.path.join(te.shared_dir(), "testdata")
    if not os.path.isdir(root):
        C.skip("all", "no test data at %s" % root)
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_trunc_") as tmp:
        for rel in TRACES:
            if not os.path.exists(os.path.join(root, rel)):
                C.check(False, rel + ": shared test file exists")
                continue
            C.section(rel, check_trace, tmp, root, rel)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
