#!/usr/bin/env python3
"""Golden checks of bad and messy input, and of the command line itself.

Refused input: exit code, exactly one stderr line "tracetool: FILE: ..." naming
the file, "byte N" with N computed here for syntax errors, and the database
left without a trace. Messy input that real profilers write must be accepted:
control characters and invalid UTF-8 in strings, integers beyond int64, string
timestamps, ns fractions, baseTimeNanoseconds, string tids, "Input dims" vs
"Input Dims", standard input. All inputs are written at run time.

Environment: TRACETOOL (binary). Needs no shared data.
"""

import gzip
import json
import os
import re
import resource
import sqlite3
import sys
import zlib
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("bad_input")


def connect(db):
    return sqlite3.connect("file:%s?mode=ro" % db, uri=True)


def write(tmp, name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def fresh_db(tmp, name):
    db = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".db")
    for ext in ("", "-journal", "-wal"):
        if os.path.exists(db + ext):
            os.remove(db + ext)
    return db


def traces_rows(db):
    if not os.path.exists(db):
        return 0
    con = connect(db)
    try:
        return con.execute("SELECT count(*) FROM traces").fetchone()[0]
    finally:
        con.close()


def minified(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


# ------------------------------------------------------------ refused input

def refused(tmp, label, path, want_rc, want_byte=None, db_name=None):
    """Ingest `path` into a new database and check the refusal."""
    db = fresh_db(tmp, db_name or label.replace(" ", "_"))
    cp = te.run_tool(["ingest", "-q", db, path])
    C.check(cp.returncode >= 0, label + ": no signal", cp.returncode)
    C.eq(cp.returncode, want_rc, label + ": exit code")
    lines = te.stderr_lines(cp)
    C.check(len(lines) == 1, label + ": exactly one stderr line", lines)
    if lines:
        line = lines[0]
        C.check(line.startswith("tracetool: "), label + ": starts with 'tracetool: '", line)
        C.check(line.startswith("tracetool: %s: " % path),
                label + ": names the file ('tracetool: %s: ...')" % path, line)
        if want_byte is not None:
            m = re.match(r"^tracetool: %s: byte (\d+): \S" % re.escape(path), line)
            if C.check(m is not None, label + ": has 'byte N: message'", line):
                C.eq(int(m.group(1)), want_byte, label + ": byte offset")
    C.eq(traces_rows(db), 0, label + ": no trace stored")
    C.eq(cp.stdout, b"", label + ": nothing on stdout")


def check_refused(tmp):
    refused(tmp, "missing file", os.path.join(tmp, "no_such_file.json"), 4)
    refused(tmp, "empty file", write(tmp, "empty.json", b""), 3)
    ws = b"  \n\t \r\n "
    refused(tmp, "whitespace only", write(tmp, "ws.json", ws), 3, len(ws))
    refused(tmp, "not JSON", write(tmp, "hello.json", b"hello"), 3, 0)
    refused(tmp, "a JSON number", write(tmp, "number.json", b"42\n"), 3, 0)
    refused(tmp, "empty object", write(tmp, "obj.json", b"{}"), 3)
    doc = b'{"traceEvents": 5}'
    refused(tmp, "traceEvents not an array", write(tmp, "te5.json", doc), 3, doc.index(b"5"))
    doc = b'{"traceEvents": ['
    refused(tmp, "truncated traceEvents", write(tmp, "open.json", doc), 3, len(doc))
    doc = b'{"traceEvents":[{"ph":X}]}'
    refused(tmp, "invalid token in an event", write(tmp, "badtok.json", doc), 3,
            doc.index(b"X"))
    doc = b'{"traceEvents":[{"ph":"X","name":"a"} {"ph":"i","name":"b"}]}'
    refused(tmp, "missing comma between events", write(tmp, "nocomma.json", doc), 3,
            doc.index(b'{"ph":"i"'))
    doc = b'{"traceEvents":[{"ph":"X","ts":@1}]}'
    refused(tmp, "invalid character in a value", write(tmp, "at.json", doc), 3,
            doc.index(b"@"))
    doc = b'{"traceEvents" []}'
    refused(tmp, "missing colon", write(tmp, "nocolon.json", doc), 3, doc.index(b"["))
    # a raw newline inside a key is accepted (repaired), so the error about the
    # missing ':' after that key must still be one line
    doc = b'{"schema\nVersion" 1, "traceEvents": []}'
    refused(tmp, "missing colon after a key holding a raw newline",
            write(tmp, "nlkey.json", doc), 3, doc.index(b"1"))
    doc = b'{"traceEvents": []}\n  x'
    refused(tmp, "data after the document", write(tmp, "after.json", doc), 3,
            doc.index(b"x"))
    doc = b'{"traceEvents":[{"ph":"X","name":"ok","ts":1,"dur":1},{"ph":"X","ts":1.2.3}]}'
    refused(tmp, "syntax error in gzip input (decompressed offset)",
            write(tmp, "bad_in_gz.json", gzip.compress(doc)), 3, doc.index(b".3"))

    # a syntax error far beyond the first read window (about 3 MB in)
    ev = b'{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 1}'
    body = b'{"traceEvents": [\n' + b",\n".join([ev] * 33000)
    bad = body + b',\n{"ph": "X", "ts": 5, "dur": -}]}'
    for kind, data in (("plain", bad), ("gzip", gzip.compress(bad, compresslevel=1))):
        refused(tmp, "syntax error 3 MB in (%s)" % kind,
                write(tmp, "late_error_%s.json" % kind, data), 3, bad.index(b"-}"))

    # corrupt gzip: flip bytes in the middle of a valid stream
    events = [{"ph": "X", "cat": "cpu_op", "name": "op%d" % i, "pid": 1, "tid": 1,
               "ts": i * 10, "dur": 5, "args": {"External id": i}} for i in range(3000)]
    gz = bytearray(gzip.compress(json.dumps({"traceEvents": events}).encode(), 6))
    mid = len(gz) // 2
    for i in range(mid, mid + 16):
        gz[i] ^= 0x5A
    refused(tmp, "corrupt gzip", write(tmp, "corrupt.json.gz", bytes(gz)), 3)

    # one JSON value over the 256 MiB cap (a 300 MB string in a small gzip):
    # refused at the value's first byte, memory well under the value's size
    head = b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1},\n'
    start = len(head)
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    parts = [z.compress(head + b'{"ph": "X", "name": "')]
    chunk = b"a" * (1 << 20)
    for _ in range(300):
        parts.append(z.compress(chunk))
    parts.append(z.compress(b'", "ts": 2, "dur": 1}]}') + z.flush())
    huge = write(tmp, "huge_value.json.gz", b"".join(parts))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    refused(tmp, "a 300 MB JSON value", huge, 3, start)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ASan's shadow memory and quarantine add about half again
    limit = 1024 if os.environ.get("ASAN_OPTIONS") is not None else 400
    C.check(rss < limit * 1024 or rss <= before,
            "a 300 MB JSON value: peak RSS under %d MB" % limit, rss)

    # a directory without trace files
    d = os.path.join(tmp, "no_traces_here")
    os.mkdir(d)
    write(d, "notes.txt", b"not a trace\n")
    refused(tmp, "directory without trace files", d, 3)


# ------------------------------------------------------------ accepted input

def ingest_ok(tmp, label, path_or_dash, stdin_bytes=None):
    db = fresh_db(tmp, label.replace(" ", "_"))
    cp = te.run_tool(["ingest", "-q", db, path_or_dash], input_bytes=stdin_bytes)
    if not C.eq(cp.returncode, 0, label + ": exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return None
    return db


def one_trace(con, label):
    rows = con.execute("SELECT id FROM traces").fetchall()
    C.eq(len(rows), 1, label + ": one trace")
    return rows[0][0] if rows else None


def counts_match(con, tid, raw, label):
    exp = te.expect_bytes(raw)
    rows = con.execute("SELECT e.ph, c.s, count(*) FROM events e LEFT JOIN strings c"
                       " ON c.id=e.cat WHERE e.trace_id=? GROUP BY 1,2", (tid,)).fetchall()
    got = dict(((ph, cat), n) for ph, cat, n in rows)
    C.eq(got, dict(exp.counter), label + ": per-(ph,cat) counts")
    C.eq(con.execute("SELECT events FROM traces WHERE id=?", (tid,)).fetchone()[0],
         exp.total, label + ": traces.events")


def repaired_count(con, tid):
    r = con.execute("SELECT coalesce(sum(count), 0) FROM import_issues WHERE trace_id=?"
                    " AND kind='repaired'", (tid,)).fetchone()
    return r[0]


def slice_names_bytes(con, tid):
    con.text_factory = bytes
    try:
        return [r[0] for r in con.execute(
            "SELECT n.s FROM slices s JOIN strings n ON n.id=s.name WHERE s.trace_id=?"
            " ORDER BY s.ts", (tid,))]
    finally:
        con.text_factory = str


def check_repairs(tmp):
    # raw control characters inside strings
    raw = (b'{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a\x01b","ts":1,"dur":1,'
           b'"pid":1,"tid":1},{"ph":"X","cat":"cpu_op","name":"tab\there","ts":2,"dur":1,'
           b'"pid":1,"tid":1}]}')
    label = "raw control characters"
    db = ingest_ok(tmp, label, write(tmp, "ctl.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            C.check(repaired_count(con, tid) > 0, label + ": import_issues 'repaired' count > 0",
                    repaired_count(con, tid))
            names = slice_names_bytes(con, tid)
            ok = True
            for b in names:
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError:
                    ok = False
            C.check(ok and len(names) == 2, label + ": stored names are valid UTF-8", names)
            if len(names) == 2:
                n0 = names[0].decode("utf-8", "replace")
                C.check(len(n0) == 3 and n0[0] == "a" and n0[2] == "b",
                        label + ": the name keeps its other characters", n0)
                C.eq(names[1].decode("utf-8", "replace"), "tab\there",
                     label + ": raw tab kept")
            counts_match(con, tid, raw, label)
        finally:
            con.close()

    # invalid UTF-8 inside strings (name, cat, and an arg value)
    raw = (b'{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a\xffb","ts":1,"dur":1,'
           b'"pid":1,"tid":1,"args":{"k":"x\xfey"}},{"ph":"X","cat":"cpu\x80op","name":"ok",'
           b'"ts":2,"dur":1,"pid":1,"tid":1}]}')
    label = "invalid UTF-8"
    db = ingest_ok(tmp, label, write(tmp, "utf8.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            C.check(repaired_count(con, tid) >= 3, label + ": import_issues 'repaired' count",
                    repaired_count(con, tid))
            names = slice_names_bytes(con, tid)
            C.eq(names[:1], ["a\ufffdb".encode("utf-8")],
                 label + ": name stored as valid UTF-8 with U+FFFD for the bad byte")
            con.text_factory = bytes
            try:
                cats = [r[0] for r in con.execute(
                    "SELECT DISTINCT c.s FROM slices s JOIN strings c ON c.id=s.cat"
                    " WHERE s.trace_id=? ORDER BY 1", (tid,))]
                args = [r[0] for r in con.execute(
                    "SELECT args FROM slices WHERE trace_id=? AND args IS NOT NULL", (tid,))]
            finally:
                con.text_factory = str
            C.eq(cats, sorted([b"cpu_op", "cpu\ufffdop".encode("utf-8")]),
                 label + ": cat repaired the same way")
            ok = len(args) == 1
            if ok:
                try:
                    ok = json.loads(args[0].decode("utf-8")) == {"k": "x\ufffdy"}
                except ValueError:
                    ok = False
            C.check(ok, label + ": args stored as valid JSON with U+FFFD", args)
            counts_match(con, tid, raw, label)
        finally:
            con.close()


def check_values(tmp):
    big = "123456789012345678901234567890"
    neg = "-99999999999999999999"
    raw = ('{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"n","pid":1,"tid":1,"ts":1,'
           '"dur":1,"args":{"Comms Id": %s, "neg": %s, "External id": 7}}]}' % (big, neg)).encode()
    label = "integer beyond int64 in args"
    db = ingest_ok(tmp, label, write(tmp, "bigint.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            args, ext = con.execute("SELECT args, external_id FROM slices WHERE trace_id=?",
                                    (tid,)).fetchone()
            C.check(args is not None and big in args and neg in args,
                    label + ": values kept verbatim in slices.args", args)
            try:
                parsed = json.loads(args)
            except (TypeError, ValueError):
                parsed = None
            C.eq(parsed, {"Comms Id": int(big), "neg": int(neg)},
                 label + ": slices.args is the remaining args as JSON")
            C.eq(ext, 7, label + ": External id still decoded")
        finally:
            con.close()

    # timestamps: strings, ns fractions, negative / zero durations
    raw = (b'{"traceEvents":['
           b'{"ph":"X","cat":"cpu_op","name":"str","pid":1,"tid":1,"ts":"123.5","dur":"2"},'
           b'{"ph":"X","cat":"cpu_op","name":"frac","pid":1,"tid":2,"ts":2413669096100.149,'
           b'"dur":0.001},'
           b'{"ph":"X","cat":"cpu_op","name":"int","pid":1,"tid":3,"ts":1700000000000000,'
           b'"dur":12}]}')
    label = "timestamps"
    db = ingest_ok(tmp, label, write(tmp, "ts.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            got = dict((n, (ts, dur)) for n, ts, dur in con.execute(
                "SELECT n.s, s.ts, s.dur FROM slices s JOIN strings n ON n.id=s.name"
                " WHERE s.trace_id=?", (tid,)))
            C.eq(got.get("str"), (123500, 2000), label + ': "ts": "123.5" -> 123500 ns')
            C.eq(got.get("frac"), (2413669096100149, 1),
                 label + ": ts 2413669096100.149 -> 2413669096100149 ns exactly")
            C.eq(got.get("int"), (1700000000000000000, 12000), label + ": integer us -> ns")
            C.eq(con.execute("SELECT start_ns, end_ns FROM traces WHERE id=?", (tid,)).fetchone(),
                 (123500, 1700000000000012000), label + ": traces start_ns/end_ns")
        finally:
            con.close()

    # baseTimeNanoseconds before and after the event array
    base = 1711664646000000000
    for where in ("before", "after"):
        evs = '[{"ph":"X","cat":"cpu_op","name":"rel","pid":1,"tid":1,"ts":4458676.385,"dur":3}]'
        if where == "before":
            doc = '{"baseTimeNanoseconds": %d, "traceEvents": %s}' % (base, evs)
        else:
            doc = '{"schemaVersion": 1, "traceEvents": %s, "displayTimeUnit": "ms",' \
                  ' "baseTimeNanoseconds": %d}' % (evs, base)
        label = "baseTimeNanoseconds %s traceEvents" % where
        db = ingest_ok(tmp, label, write(tmp, "base_%s.json" % where, doc.encode()))
        if db:
            con = connect(db)
            try:
                tid = one_trace(con, label)
                C.eq(con.execute("SELECT base_time_ns FROM traces WHERE id=?",
                                 (tid,)).fetchone()[0], base, label + ": traces.base_time_ns")
                C.eq(con.execute("SELECT ts FROM slices WHERE trace_id=?", (tid,)).fetchone()[0],
                     4458676385, label + ": slices.ts stays relative")
            finally:
                con.close()

    # string tids and pids
    raw = (b'{"traceEvents":['
           b'{"ph":"X","cat":"Operator","name":"a","pid":"1234","tid":"25738","ts":1,"dur":5},'
           b'{"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":2,"dur":1},'
           b'{"ph":"X","cat":"Operator","name":"b","pid":"host","tid":"Spans","ts":3,"dur":1}]}')
    label = "string tids"
    db = ingest_ok(tmp, label, write(tmp, "strtid.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            rows = con.execute("SELECT n.s, s.pid, typeof(s.pid), s.tid, typeof(s.tid)"
                               " FROM events s JOIN strings n ON n.id=s.name"
                               " WHERE s.trace_id=? ORDER BY s.ts", (tid,)).fetchall()
            C.eq(rows, [("a", 1234, "integer", 25738, "integer"),
                        ("k", 0, "integer", "stream 7", "text"),
                        ("b", "host", "text", "Spans", "text")],
                 label + ": numeric strings become integers, others stay text")
            counts_match(con, tid, raw, label)
        finally:
            con.close()

    # "Input dims" (1.8) and "Input Dims" (1.9+)
    dims_a = [[2, 3], [], [4]]
    dims_b = [[128, 64], [64]]
    raw = ('{"traceEvents":['
           '{"ph":"X","cat":"Operator","name":"old","pid":1,"tid":1,"ts":1,"dur":5,'
           '"args":{"Input dims": [ [2, 3], [ ], [4] ]}},'
           '{"ph":"X","cat":"cpu_op","name":"new","pid":1,"tid":1,"ts":10,"dur":5,'
           '"args":{"Input Dims": [[128,  64],\n [64]], "Input type": ["float", "float"]}}]}'
           ).encode()
    label = "Input dims / Input Dims"
    db = ingest_ok(tmp, label, write(tmp, "dims.json", raw))
    if db:
        con = connect(db)
        try:
            tid = one_trace(con, label)
            got = dict(con.execute(
                "SELECT n.s, d.s FROM slices s JOIN strings n ON n.id=s.name"
                " LEFT JOIN strings d ON d.id=s.input_dims WHERE s.trace_id=?", (tid,)))
            C.eq(got, {"old": minified(dims_a), "new": minified(dims_b)},
                 label + ": slices.input_dims holds the minified JSON")
            types = con.execute("SELECT t.s FROM slices s JOIN strings t ON t.id=s.input_types"
                                " WHERE s.trace_id=?", (tid,)).fetchall()
            C.eq(types, [(minified(["float", "float"]),)], label + ": input_types")
        finally:
            con.close()


def check_stdin_and_magic(tmp):
    evs = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": i, "dur": 1}
           for i in range(50)] + [{"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 3,
                                   "s": "t"}]
    raw = json.dumps({"traceEvents": evs}).encode()
    for kind, data in (("plain", raw), ("gzip", gzip.compress(raw))):
        label = "standard input (%s)" % kind
        db = ingest_ok(tmp, label, "-", stdin_bytes=data)
        if db:
            con = connect(db)
            try:
                tid = one_trace(con, label)
                C.eq(con.execute("SELECT path, gzip FROM traces").fetchone(),
                     ("-", 1 if kind == "gzip" else 0), label + ": traces.path and gzip")
                counts_match(con, tid, raw, label)
            finally:
                con.close()

    # gzip is recognised by content, not by name
    for label, name, data in (("gzip named .json", "really_gz.json", gzip.compress(raw)),
                              ("plain named .json.gz", "really_plain.json.gz", raw)):
        db = ingest_ok(tmp, label, write(tmp, name, data))
        if db:
            con = connect(db)
            try:
                tid = one_trace(con, label)
                C.eq(con.execute("SELECT gzip FROM traces").fetchone()[0],
                     1 if te.is_gzip(data) else 0, label + ": traces.gzip")
                counts_match(con, tid, raw, label)
            finally:
                con.close()


def check_multi(tmp):
    """Several inputs: the bad one is refused, the others are still ingested."""
    good1 = write(tmp, "m_good1.json", b'{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}]}')
    bad = write(tmp, "m_bad.json", b'{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1},')
    good2 = write(tmp, "m_good2.json", b'[{"ph":"i","name":"b","ts":2,"s":"t"}]')
    db = fresh_db(tmp, "multi")
    cp = te.run_tool(["ingest", "-q", db, good1, bad, good2])
    C.eq(cp.returncode, 3, "several inputs, one truncated: exit code")
    lines = te.stderr_lines(cp)
    C.check(len(lines) == 1 and lines[0].startswith("tracetool: %s: byte " % bad),
            "several inputs: one stderr line, for the bad file", lines)
    con = connect(db)
    try:
        paths = [r[0] for r in con.execute("SELECT path FROM traces ORDER BY id")]
    finally:
        con.close()
    C.eq(paths, [good1, good2], "several inputs: the good files are ingested")


def check_cli(tmp):
    cp = te.run_tool(["--help"])
    C.eq(cp.returncode, 0, "tracetool --help: exit code")
    C.check(b"usage" in cp.stdout.lower(), "tracetool --help: prints usage", cp.stdout[:200])
    for cmd in ("ingest", "info"):
        cp = te.run_tool([cmd, "--help"])
        C.eq(cp.returncode, 0, "tracetool %s --help: exit code" % cmd)
        C.check(cmd.encode() in cp.stdout, "tracetool %s --help: describes it" % cmd)
        cp = te.run_tool(["help", cmd])
        C.eq(cp.returncode, 0, "tracetool help %s: exit code" % cmd)
    cp = te.run_tool(["--version"])
    C.eq(cp.returncode, 0, "tracetool --version: exit code")
    C.check(cp.stdout.startswith(b"tracetool "), "tracetool --version: output", cp.stdout)

    trace = write(tmp, "cli.json", b'{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}]}')
    db = os.path.join(tmp, "cli.db")
    usage = [
        ("no arguments", []),
        ("unknown command", ["frobnicate"]),
        ("unknown ingest option", ["ingest", "--frobnicate", db, trace]),
        ("unknown info option", ["info", "--frobnicate", trace]),
        ("ingest without a database", ["ingest"]),
        ("info with two inputs", ["info", trace, trace]),
        ("info bad format", ["info", "--format", "xml", trace]),
        ("info bad trace id", ["info", "--trace", "zero", trace]),
    ]
    for label, args in usage:
        cp = te.run_tool(args)
        C.eq(cp.returncode, 2, "usage error (%s): exit code" % label)
        C.check(cp.stderr.strip() != b"" and cp.stdout == b"",
                "usage error (%s): message on stderr, nothing on stdout" % label,
                (cp.stdout[:100], cp.stderr[:200]))
    C.check(not os.path.exists(db), "usage errors create no database")
    # ingest DB alone only opens an existing database (to recover it)
    cp = te.run_tool(["ingest", db])
    C.check(cp.returncode == 4 and not os.path.exists(db),
            "ingest of a missing DB with no input: exit 4, nothing created", cp.returncode)


def main():
    if not os.access(te.tracetool_path(), os.X_OK):
        C.check(False, "tracetool binary exists", te.tracetool_path())
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_bad_") as tmp:
        C.section("refused input", check_refused, tmp)
        C.section("repairs", check_repairs, tmp)
        C.section("values", check_values, tmp)
        C.section("stdin and gzip magic", check_stdin_and_magic, tmp)
        C.section("several inputs", check_multi, tmp)
        C.section("command line", check_cli, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
