#!/usr/bin/env python3
"""`tracetool averages` against real torch output and an independent
re-implementation of torch's key_averages() (tests/tools/torch_averages.py).

  a. torch 1.13 fixtures (tests/fixtures/torch113, made by a real PyTorch):
     the table sorted by self CPU time (all rows) and by count (10 rows) byte
     for byte; --format json numbers and row order against torch's own
     key_averages() numbers (NAME.averages.json); the Python reference too.
  b. shared GPU traces (Kineto 2022-2024, legacy 1.9 categories, float ts):
     every (name, device) row of --format json against the Python reference
     (count, CPU / device times, the four memory figures), row order, the
     table footers; --group-by-shape on a trace with Input Dims; the same
     through an ingested database (identical rows).
  c. options: --top-level-only, --row-limit, --steps, --sort-by (order and
     device_* aliases), --format csv, exit codes, a database with two traces.
  d. small synthetic traces for torch semantics the real data rarely hits
     (memory at an op's end, partial overlaps, the same-name collapse, kernel
     attribution, gpu_user_annotation, standalone [memory] records, shapes).

Environment: TRACETOOL (binary), TT_SHARED (shared folder with testdata/).
"""

import csv
import glob
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402
import torch_averages as ta  # noqa: E402

C = te.Checker("averages")

FIXTURES = os.path.join(HERE, "..", "fixtures", "torch113")
FIXTURE_NAMES = ["matmul", "conv", "mlp"]

GPU_TRACES = [
    "hta/df_index_resolver/df_index_resolver.json.gz",
    "param/dlrm_8rank/kineto/worker0_*.json.gz",
    "hta/trace_diff/control/control.json.gz",
    "kineto/tb_plugin_2021-06/*.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
]
SHAPE_TRACE = "param/dlrm_8rank/kineto/worker0_*.json.gz"
STEPS_TRACE = "hta/df_index_resolver/df_index_resolver.json.gz"

TIME_TOL = 0.0015   # us, per row (tracetool prints %.3f of a double sum)
TIME_FIELDS = [("count", "count"),
               ("cpu_time_total_us", "cpu_time_total"),
               ("self_cpu_time_total_us", "self_cpu_time_total"),
               ("device_time_total_us", "device_time_total"),
               ("self_device_time_total_us", "self_device_time_total")]
MEM_FIELDS = ["cpu_memory_usage", "self_cpu_memory_usage",
              "device_memory_usage", "self_device_memory_usage"]

_raw_cache = {}


def raw_events(path):
    if path not in _raw_cache:
        _raw_cache[path] = ta.load_events(path)
    return _raw_cache[path]


def shared_files(root, pattern):
    return sorted(glob.glob(os.path.join(root, pattern)))


# ------------------------------------------------------------------ running

def run_ok(args, label):
    cp = te.run_tool(args)
    if not C.eq(cp.returncode, 0, label + ": exit code"):
        print("  stderr: %s" % cp.stderr.decode("utf-8", "replace").strip())
        return None
    return cp.stdout.decode("utf-8")


def run_json(args, label):
    out = run_ok(["averages", "--format", "json"] + args, label)
    if out is None:
        return None
    try:
        doc = json.loads(out)
    except ValueError as e:
        C.check(False, label + ": output is JSON", e)
        return None
    return doc


def json_rows(args, label):
    """Rows of the single trace of `averages --format json ARGS`."""
    doc = run_json(args, label)
    if doc is None:
        return None
    traces = doc.get("traces", [])
    if not C.eq(len(traces), 1, label + ": one trace in the JSON"):
        return None
    return traces[0].get("rows", [])


def table_parts(text):
    """(banner lines, header_sep, header line, row lines, footer lines) of a table."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    seps = [i for i, l in enumerate(lines) if l.startswith("-") and set(l) <= set("- ")]
    if len(seps) < 3:
        return None
    a, b, c = seps[0], seps[1], seps[-1]
    return (lines[:a], lines[a], lines[a + 1:b], lines[b + 1:c], lines[c + 1:])


def table_names(text):
    """Names of the printed rows (the right-aligned first column)."""
    p = table_parts(text)
    if p is None:
        return None
    width = len(p[1].split("  ")[0])
    return [l[:width].strip() for l in p[3]]


def shown_name(name):
    """The name as the table prints it (max_name_column_width 55)."""
    return name[:52] + "..." if len(name) >= 52 else name


def footer_value(text, what):
    m = re.search(r"^%s time total: (.*)$" % re.escape(what), text, re.M)
    return m.group(1) if m else None


# ------------------------------------------------------------------ comparing

def rkey(r, shapes=False):
    return (r["name"], r["device"], r.get("input_shapes") if shapes else None)


def compare_rows(label, crows, prows, shapes=False, check_order=True):
    """tracetool JSON rows vs reference rows: same keys, same numbers."""
    if crows is None:
        return
    ckeys = [rkey(r, shapes) for r in crows]
    C.check(len(set(ckeys)) == len(ckeys), label + ": every key is one row",
            sorted(k for k in set(ckeys) if ckeys.count(k) > 1)[:5])
    cmap = dict((k, r) for k, r in zip(ckeys, crows))
    pmap = dict((p.key if shapes else (p.name, p.device, None), p) for p in prows)
    only_c = sorted(set(cmap) - set(pmap), key=repr)
    only_p = sorted(set(pmap) - set(cmap), key=repr)
    C.check(not only_c and not only_p,
            label + ": same (name, device%s) rows (%d expected)" % (
                ", shapes" if shapes else "", len(pmap)),
            "only in tracetool: %s; only in reference: %s" % (only_c[:5], only_p[:5]))
    common = [k for k in ckeys if k in pmap]
    for cf, pf in TIME_FIELDS:
        bad = []
        for k in common:
            got, want = cmap[k].get(cf), getattr(pmap[k], pf)
            if not isinstance(got, (int, float)) or abs(got - want) > (
                    0 if cf == "count" else TIME_TOL):
                bad.append("%r: got %r, expected %r" % (k[:2] if not shapes else k, got, want))
        C.check(not bad, label + ": %s per row" % pf,
                "%d rows differ: %s" % (len(bad), "; ".join(bad[:4])))
    for f in MEM_FIELDS:
        bad = ["%r: got %r, expected %r" % (k, cmap[k].get(f), getattr(pmap[k], f))
               for k in common if cmap[k].get(f) != getattr(pmap[k], f)]
        C.check(not bad, label + ": %s per row" % f,
                "%d rows differ: %s" % (len(bad), "; ".join(bad[:4])))
    if check_order:
        # key_averages order: first occurrence in the (start, -end) sorted list
        firsts = [pmap[k].first for k in ckeys if k in pmap]
        bad = [i for i in range(1, len(firsts)) if firsts[i] < firsts[i - 1]]
        C.check(not bad, label + ": rows in first-occurrence order",
                "%d inversions, first at row %s" % (len(bad), bad[:1]))


def check_footers(label, text, prows):
    want_cpu = ta.format_time(ta.self_cpu_total_ns(prows) / 1000.0)
    C.eq(footer_value(text, "Self CPU"), want_cpu, label + ": 'Self CPU time total' footer")
    has_dev = any(p.self_dev_ns > 0 for p in prows)
    want_dev = ta.format_time(ta.self_device_total_ns(prows) / 1000.0) if has_dev else None
    C.eq(footer_value(text, "Self CUDA"), want_dev,
         label + ": 'Self CUDA time total' footer (device rows, no gpu_user_annotation)")


# ------------------------------------------------------------------ a. fixtures

def check_fixture(name):
    trace = os.path.join(FIXTURES, name + ".trace.json")
    label = "torch113/" + name
    for args, want_file in ((["--sort-by", "self_cpu_time_total", "--row-limit", "-1"],
                             ".table.txt"),
                            (["--sort-by", "count", "--row-limit", "10"], ".count.txt")):
        with open(os.path.join(FIXTURES, name + want_file), "r") as f:
            want = f.read()
        got = run_ok(["averages"] + args + [trace], label + " " + " ".join(args))
        if got is not None and not C.check(got == want, label + ": %s equals torch's %s%s"
                                           % (" ".join(args), name, want_file)):
            gl, wl = got.split("\n"), want.split("\n")
            for i in range(max(len(gl), len(wl))):
                g = gl[i] if i < len(gl) else None
                w = wl[i] if i < len(wl) else None
                if g != w:
                    print("  line %d:\n    got:  %r\n    want: %r" % (i + 1, g, w))
                    break
    with open(os.path.join(FIXTURES, name + ".averages.json")) as f:
        torch_rows = json.load(f)["by_name"]
    prows = ta.key_averages(raw_events(trace))
    crows = json_rows(["--row-limit", "-1", trace], label + " json")

    def against_torch(what, rows):
        if rows is None:
            return
        C.eq([r["name"] for r in rows], [t["name"] for t in torch_rows],
             label + ": %s rows in torch's key_averages order" % what)
        by = dict((r["name"], r) for r in rows)
        bad = []
        for t in torch_rows:
            r = by.get(t["name"])
            if r is None:
                bad.append("%s missing" % t["name"])
                continue
            if r["count"] != t["count"] or float(r["cpu_time_total"]) != float(
                    t["cpu_time_total"]) or abs(r["self_cpu_time_total"] -
                                                t["self_cpu_time_total"]) > 0.0005:
                bad.append("%s: got (%r, %r, %r), torch (%r, %r, %r)" % (
                    t["name"], r["count"], r["cpu_time_total"], r["self_cpu_time_total"],
                    t["count"], t["cpu_time_total"], t["self_cpu_time_total"]))
            for m in ("cpu_memory_usage", "self_cpu_memory_usage"):
                if m in t and r.get(m) != t[m]:
                    bad.append("%s: %s %r, torch %r" % (t["name"], m, r.get(m), t[m]))
        C.check(not bad, label + ": %s count / cpu_time_total / self_cpu_time_total"
                " equal torch's" % what, "; ".join(bad[:5]))

    against_torch("python reference", [
        {"name": p.name, "count": p.count, "cpu_time_total": p.cpu_time_total,
         "self_cpu_time_total": p.self_cpu_time_total,
         "cpu_memory_usage": p.cpu_memory_usage,
         "self_cpu_memory_usage": p.self_cpu_memory_usage} for p in prows])
    if crows is not None:
        against_torch("tracetool json", [
            {"name": r["name"], "count": r["count"], "cpu_time_total": r["cpu_time_total_us"],
             "self_cpu_time_total": r["self_cpu_time_total_us"],
             "cpu_memory_usage": r["cpu_memory_usage"],
             "self_cpu_memory_usage": r["self_cpu_memory_usage"]} for r in crows])
        compare_rows(label + " json vs reference", crows, prows)


# ------------------------------------------------------------------ b. GPU traces

def check_gpu_trace(tmp, idx, path, rel, shapes):
    label = rel
    raw = raw_events(path)
    prows = ta.key_averages(raw)
    C.check(any(p.device == ta.CUDA for p in prows) and any(p.self_dev_ns > 0 for p in prows),
            label + ": reference has device rows with device time", len(prows))
    crows = json_rows(["--row-limit", "-1", path], label + " json")
    compare_rows(label + " json", crows, prows)

    text = run_ok(["averages", "--row-limit", "1", path], label + " table")
    if text is not None:
        check_footers(label + " table", text, prows)

    db = os.path.join(tmp, "g%d.db" % idx)
    cp = te.run_tool(["ingest", "-q", db, path])
    if C.eq(cp.returncode, 0, label + ": ingest exit code"):
        drows = json_rows(["--row-limit", "-1", db], label + " json from DB")
        C.check(drows is not None and drows == crows,
                label + ": DB mode rows identical to file mode",
                None if drows is None or crows is None else
                "%d vs %d rows" % (len(drows), len(crows)))
        # the pass sorts its events in runs that spill to a file once full
        # (256k records): tiny runs make every trace take the merge path
        cp = te.run_tool(["averages", "--format", "json", "--row-limit", "-1", db],
                         env={"TT_AVG_RUN_RECS": "5"})
        mrows = None
        if C.eq(cp.returncode, 0, label + ": 5-record runs: exit code"):
            mrows = json.loads(cp.stdout.decode("utf-8"))["traces"][0]["rows"]
            compare_rows(label + " 5-record runs", mrows, prows)
        C.check(mrows is not None and mrows == drows,
                label + ": 5-record runs give the same rows")
        if shapes:
            sp = ta.key_averages(raw, group_by_shape=True)
            C.check(any(p.input_shapes not in ("[]", None) for p in sp),
                    label + ": trace has Input Dims (python)")
            srows = json_rows(["--group-by-shape", "--row-limit", "-1", path],
                              label + " --group-by-shape")
            compare_rows(label + " --group-by-shape", srows, sp, shapes=True)
            sdb = json_rows(["--group-by-shape", "--row-limit", "-1", db],
                            label + " --group-by-shape from DB")
            C.check(sdb is not None and sdb == srows,
                    label + ": --group-by-shape DB mode rows identical to file mode")
            stext = run_ok(["averages", "--group-by-shape", "--row-limit", "3", path],
                           label + " --group-by-shape table")
            if stext is not None:
                p = table_parts(stext)
                C.check(p is not None and "Input Shapes" in p[2][0],
                        label + ": --group-by-shape table has an Input Shapes column")
    for ext in ("", "-journal", "-wal"):
        if os.path.exists(db + ext):
            os.remove(db + ext)


# ------------------------------------------------------------------ c. options

def check_top_level(trace, label, must_vanish):
    prows = ta.key_averages(raw_events(trace))
    base = ["averages", "--row-limit", "-1", "--sort-by", "self_cpu_time_total"]
    full = run_ok(base + [trace], label + " table")
    top = run_ok(base + ["--top-level-only", trace], label + " --top-level-only")
    if full is None or top is None:
        return
    names = table_names(top)
    want = set(shown_name(p.name) for p in prows if not p.has_parent)
    C.check(names is not None and set(names) == want,
            label + ": --top-level-only prints exactly the rows whose first event has no"
            " parent", None if names is None else "extra %s, missing %s" % (
                sorted(set(names) - want), sorted(want - set(names))))
    C.check(must_vanish in table_names(full) and names is not None and
            must_vanish not in names,
            label + ": nested %s disappears with --top-level-only" % must_vanish)
    # torch prints a banner line pair before the header for top_level_events_only
    tp = table_parts(top)
    if tp is not None:
        width = len(tp[1].rstrip())
        C.eq(tp[0], ["=" * width, "This report only display top-level ops statistics"],
             label + ": --top-level-only banner (torch's _build_table)")
        C.eq(footer_value(top, "Self CPU"), footer_value(full, "Self CPU"),
             label + ": --top-level-only footer sums all events")
    jr = json_rows(["--top-level-only", "--row-limit", "-1", trace],
                   label + " --top-level-only json")
    if jr is not None and names is not None:
        C.eq(sorted(shown_name(r["name"]) for r in jr), sorted(names),
             label + ": --top-level-only json = table rows")


def check_row_limit(trace, label):
    text = run_ok(["averages", "--row-limit", "3", trace], label + " --row-limit 3")
    if text is not None:
        names = table_names(text)
        C.check(names is not None and len(names) == 3, label + ": --row-limit 3 prints 3 rows",
                names)
    jr = json_rows(["--row-limit", "3", trace], label + " --row-limit 3 json")
    if jr is not None:
        C.eq(len(jr), 3, label + ": --row-limit 3 json has 3 rows")


def check_steps(trace, label, step=2):
    raw = raw_events(trace)
    steps = [e for e in raw if isinstance(e, dict) and e.get("ph") == "X" and
             e.get("name") == "ProfilerStep#%d" % step]
    if not C.eq(len(steps), 1, label + ": one ProfilerStep#%d (python)" % step):
        return
    want_us = ta.to_ns(steps[0]["dur"]) / 1000.0
    crows = json_rows(["--steps", "%d-%d" % (step, step), "--row-limit", "-1", trace],
                      label + " --steps")
    if crows is None:
        return
    ps = [r for r in crows if r["name"] == "ProfilerStep*"]
    C.check(len(ps) == 1 and ps[0]["count"] == 1, label + ": --steps %d-%d: ProfilerStep*"
            " counted once" % (step, step), ps)
    if ps:
        C.check(abs(ps[0]["cpu_time_total_us"] - want_us) <= TIME_TOL,
                label + ": ProfilerStep* CPU total = the step's duration",
                (ps[0]["cpu_time_total_us"], want_us))
    prows = ta.key_averages(raw, steps=(step, step))
    compare_rows(label + " --steps %d-%d" % (step, step), crows, prows)
    full = ta.key_averages(raw)
    C.check(sum(p.count for p in prows) < sum(p.count for p in full),
            label + ": --steps keeps fewer events than the whole trace (python)")


def check_sort(trace, label):
    for key, field in (("cpu_time_total", "cpu_time_total_us"), ("count", "count"),
                       ("self_cuda_time_total", "self_device_time_total_us")):
        jr = json_rows(["--sort-by", key, "--row-limit", "-1", trace],
                       label + " --sort-by " + key)
        if jr is None:
            continue
        vals = [r[field] for r in jr]
        C.check(len(vals) >= 2 and all(vals[i] >= vals[i + 1] for i in range(len(vals) - 1)),
                label + ": --sort-by %s is descending (2 rows or more)" % key, len(vals))
    a = run_ok(["averages", "--sort-by", "self_device_time_total", trace], label + " alias")
    b = run_ok(["averages", "--sort-by", "self_cuda_time_total", trace], label + " cuda")
    C.check(a is not None and a == b,
            label + ": --sort-by self_device_time_total = self_cuda_time_total")


def check_csv(trace, label):
    text = run_ok(["averages", "--format", "csv", "--row-limit", "-1", trace], label + " csv")
    jr = json_rows(["--row-limit", "-1", trace], label + " json")
    if text is None or jr is None:
        return
    rows = list(csv.DictReader(io.StringIO(text)))
    if not C.eq(len(rows), len(jr), label + ": csv rows = json rows"):
        return
    bad = []
    # one naming: the CSV header holds the JSON keys
    pairs = [(k, k) for k in ("count", "self_cpu_time_total_us", "cpu_time_total_us",
                              "self_device_time_total_us", "device_time_total_us",
                              "cpu_memory_usage", "self_cpu_memory_usage",
                              "device_memory_usage", "self_device_memory_usage")]
    for c, j in zip(rows, jr):
        if c.get("name") != j["name"] or c.get("device") != j["device"]:
            bad.append("name/device %r/%r vs %r/%r" % (c.get("name"), c.get("device"),
                                                       j["name"], j["device"]))
            continue
        for cf, jf in pairs:
            try:
                v = float(c[cf])
            except (KeyError, TypeError, ValueError):
                bad.append("%s: %s unreadable %r" % (j["name"], cf, c.get(cf)))
                continue
            if v != float(j[jf]):
                bad.append("%s: %s %r vs json %r" % (j["name"], cf, c[cf], j[jf]))
        try:
            if abs(float(c["cpu_time_us"]) - j["cpu_time_total_us"] / j["count"]) > TIME_TOL:
                bad.append("%s: cpu_time_us %r" % (j["name"], c["cpu_time_us"]))
        except (KeyError, ValueError, ZeroDivisionError):
            bad.append("%s: cpu_time_us unreadable" % j["name"])
    C.check(not bad, label + ": csv numbers equal json numbers", "; ".join(bad[:5]))


def check_exit_codes(tmp):
    trace = os.path.join(FIXTURES, "matmul.trace.json")
    cp = te.run_tool(["averages", "--sort-by", "no_such_key", trace])
    C.eq(cp.returncode, 2, "unknown --sort-by: exit code 2")
    for nm, data in (("empty.json", b""), ("garbage.json", b"garbage\n"),
                     ("truncated.json", b'{"traceEvents": [{"ph": "X", "name": "a"')):
        p = os.path.join(tmp, nm)
        with open(p, "wb") as f:
            f.write(data)
        cp = te.run_tool(["averages", p])
        C.eq(cp.returncode, 3, "averages on %s: exit code 3" % nm)
        lines = te.stderr_lines(cp)
        C.check(len(lines) == 1 and lines[0].startswith("tracetool: "),
                "averages on %s: one 'tracetool: ' stderr line" % nm, lines)
        C.eq(cp.stdout, b"", "averages on %s: nothing on stdout" % nm)
    # an Execution Trace is read fine but holds no Chrome/Kineto events: the
    # message names the file
    et = os.path.normpath(os.path.join(HERE, "..", "..", "testdata", "et", "simple_add_et.json.gz"))
    for cmd in (["averages"], ["kernels"]):
        cp = te.run_tool(cmd + [et])
        C.eq(cp.returncode, 3, "%s on an ET (the wrong kind of input): exit code 3" % cmd[0])
        lines = te.stderr_lines(cp)
        C.check(len(lines) == 1 and lines[0] == "tracetool: %s: no Chrome/Kineto trace in this"
                " file (read as execution-trace)" % et, "%s on an ET: the message" % cmd[0],
                lines)


def db_traces(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT id, path, rank FROM traces ORDER BY rank, id").fetchall()
    finally:
        con.close()


def split_sections(text):
    """[(header line, body)] for a multi-trace table output."""
    out = []
    cur = None
    for line in text.split("\n"):
        if re.match(r"^trace [0-9]+( \(rank [0-9]+\))?: ", line):
            cur = [line, []]
            out.append(cur)
        elif cur is not None:
            cur[1].append(line)
    res = []
    for head, body in out:
        b = "\n".join(body)
        if b.endswith("\n\n"):
            b = b[:-1]  # the blank line between traces
        res.append((head, b))
    return res


def check_two_traces(tmp, shared_root):
    db = os.path.join(tmp, "two.db")
    fx = [os.path.join(FIXTURES, n + ".trace.json") for n in ("matmul", "conv")]
    cp = te.run_tool(["ingest", "-q", db] + fx)
    if not C.eq(cp.returncode, 0, "two fixtures: ingest exit code"):
        return
    text = run_ok(["averages", "--sort-by", "self_cpu_time_total", "--row-limit", "-1", db],
                  "two fixtures: averages DB")
    if text is None:
        return
    trs = db_traces(db)
    secs = split_sections(text)
    C.eq([h for h, _ in secs], ["trace %d: %s" % (i, p) for i, p, _ in trs],
         "two fixtures: one 'trace N: path' header per trace")
    C.check(text.startswith("trace "), "two fixtures: output starts with a trace header")
    for (h, body), (i, p, _) in zip(secs, trs):
        base = os.path.basename(p).replace(".trace.json", "")
        with open(os.path.join(FIXTURES, base + ".table.txt")) as f:
            want = f.read()
        C.check(body == want, "two fixtures: table of %s equals torch's" % base,
                None if body == want else (body[:200], want[:200]))
    # --trace picks one; then no header
    one = run_ok(["averages", "--trace", str(trs[1][0]), "--sort-by", "self_cpu_time_total",
                  "--row-limit", "-1", db], "two fixtures: --trace")
    if one is not None:
        with open(os.path.join(FIXTURES, "conv.table.txt")) as f:
            C.check(one == f.read(), "two fixtures: --trace %d prints only that table"
                    % trs[1][0])

    # ranked traces
    files = shared_files(shared_root, "param/dlrm_8rank/kineto/worker[01]_*.json.gz")
    if not C.eq(len(files), 2, "dlrm workers 0, 1 exist (python)"):
        return
    db2 = os.path.join(tmp, "ranks.db")
    cp = te.run_tool(["ingest", "-q", db2] + files)
    if not C.eq(cp.returncode, 0, "two ranks: ingest exit code"):
        return
    text = run_ok(["averages", "--row-limit", "2", db2], "two ranks: averages DB")
    if text is None:
        return
    trs = db_traces(db2)
    secs = split_sections(text)
    C.eq([h for h, _ in secs], ["trace %d (rank %d): %s" % (i, r, p) for i, p, r in trs],
         "two ranks: one 'trace N (rank R): path' header per trace")
    C.eq(sorted(r for _, _, r in trs), [0, 1], "two ranks: ranks 0 and 1")
    for (h, body), (i, p, r) in zip(secs, trs):
        prows = ta.key_averages(raw_events(p))
        names = table_names(body)
        C.check(names is not None and len(names) == 2, "two ranks: rank %d table has 2 rows"
                % r, names)
        check_footers("two ranks: rank %d" % r, body, prows)
    jd = run_json(["--row-limit", "-1", db2], "two ranks json")
    if jd is not None:
        C.eq([(t.get("trace_id"), t.get("rank")) for t in jd.get("traces", [])],
             [(i, r) for i, _, r in trs], "two ranks: json traces with ids and ranks")
        for t, (i, p, r) in zip(jd.get("traces", []), trs):
            compare_rows("two ranks json rank %d" % r, t.get("rows"),
                         ta.key_averages(raw_events(p)))


# ------------------------------------------------------------------ d. synthetic

def X(name, ts, dur, cat="cpu_op", tid=1, pid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def MEM(ts, nbytes, dtype=0, tid=1):
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1,
            "tid": tid, "ts": ts, "args": {"Device Type": dtype, "Device Id": 0,
                                           "Bytes": nbytes}}


SYNTH = {
    # a [memory] record exactly at an op's end, when the next op of the same
    # thread starts there: inclusive for both (start <= t <= end)
    "mem_at_end": ([X("opA", 0, 10), X("opB", 10, 10), MEM(10, 100)],
                   {("opA", "CPU"): dict(count=1, cpu_memory_usage=100),
                    ("opB", "CPU"): dict(count=1, cpu_memory_usage=100)}),
    # partial overlap: opB starts inside opA and ends after it; a record in
    # both intervals counts for both
    "mem_partial_overlap": ([X("opA", 0, 10), X("opB", 5, 10), MEM(7, 100)],
                            {("opA", "CPU"): dict(count=1, cpu_memory_usage=100,
                                                  self_cpu_memory_usage=100),
                             ("opB", "CPU"): dict(count=1, cpu_memory_usage=100,
                                                  self_cpu_memory_usage=100)}),
    # the first event of X (in start order) is top-level; a later X is nested
    "top_level_first": ([X("X", 0, 100), X("X", 10, 10), X("Y", 30, 10)],
                        {("X", "CPU"): dict(count=2, cpu_time_total=110,
                                            self_cpu_time_total=90),
                         ("Y", "CPU"): dict(count=1)}),
    # GPU: collapse with kernel replacement, runtime under a user annotation
    # only, gpu_user_annotation row, cross-thread memory, standalone records
    "gpu": ([
        X("UA", 0, 200, cat="user_annotation"),
        X("blk", 10, 50),
        X("blk", 20, 30),                       # same-name single child: removed
        X("mm", 25, 15),
        X("cudaLaunchKernel", 30, 2, cat="cuda_runtime", correlation=1),
        X("cudaLaunchKernel", 60, 0, cat="cuda_runtime", correlation=2),  # at blk's end
        X("cudaMemcpyAsync", 70, 5, cat="cuda_runtime", correlation=3),   # under UA only
        X("aten::empty", 150, 1),
        X("gemm", 100, 5, cat="kernel", pid=0, tid=7, correlation=1),
        X("gemm", 110, 7, cat="kernel", pid=0, tid=7, correlation=2),
        X("Memcpy HtoD (Pageable -> Device)", 120, 11, cat="gpu_memcpy", pid=0, tid=7,
          correlation=3),
        X("UA", 99, 34, cat="gpu_user_annotation", pid=0, tid=7),
        MEM(30, 512, dtype=1, tid=2),           # another thread, inside blk/mm/launch
        MEM(31, 1000, dtype=7, tid=2),          # unknown device type: ignored
        MEM(300, 64), MEM(301, 32),             # inside no CPU event
        X("aten::is_leaf", 151, 1),             # filtered name
        X("f", 160, 1, cat="python_function"),  # not an op
    ], {
        ("UA", "CPU"): dict(count=1, cpu_time_total=200, self_cpu_time_total=144,
                            device_time_total=5, self_device_time_total=0,
                            device_memory_usage=512, self_device_memory_usage=0),
        ("blk", "CPU"): dict(count=1, cpu_time_total=50, self_cpu_time_total=35,
                             device_time_total=5, self_device_time_total=0,
                             device_memory_usage=512, self_device_memory_usage=0),
        ("mm", "CPU"): dict(count=1, cpu_time_total=15, self_cpu_time_total=13,
                            device_time_total=5, self_device_time_total=5,
                            device_memory_usage=512, self_device_memory_usage=0),
        ("cudaLaunchKernel", "CPU"): dict(count=2, cpu_time_total=2, self_cpu_time_total=2,
                                          device_memory_usage=512,
                                          self_device_memory_usage=512),
        ("cudaMemcpyAsync", "CPU"): dict(count=1, cpu_time_total=5),
        ("aten::empty", "CPU"): dict(count=1, cpu_time_total=1),
        ("gemm", "CUDA"): dict(count=2, device_time_total=12, self_device_time_total=12,
                               cpu_time_total=0),
        ("Memcpy HtoD (Pageable -> Device)", "CUDA"): dict(count=1, device_time_total=11),
        ("UA", "CUDA"): dict(count=1, device_time_total=34, self_device_time_total=34),
        ("[memory]", "CPU"): dict(count=2, cpu_memory_usage=96, self_cpu_memory_usage=96,
                                  cpu_time_total=0),
    }),
}
SYNTH_TOP = {"top_level_first": ["X"],
             "gpu": ["Memcpy HtoD (Pageable -> Device)", "UA", "[memory]", "gemm"]}
SYNTH_FOOTER = {"gpu": ("200.000us", "23.000us")}


def averages_path(path, args=()):
    """How `averages` read a file (TT_DEBUG_AVG): 'stream', or why it was read
    twice (the rows needed an ingest's passes: store/ingest_fix.c)."""
    cp = te.run_tool(["averages", "--format", "json", "--row-limit", "-1"] + list(args) +
                     [path], env={"TT_DEBUG_AVG": "1"})
    how = [ln for ln in te.stderr_lines(cp) if ln.startswith("averages: ")]
    rows = None
    if cp.returncode == 0:
        rows = json.loads(cp.stdout.decode("utf-8"))["traces"][0]["rows"]
    if how == ["averages: read without a database"]:
        return "stream", rows
    prefix = "averages: read twice: "
    if how and how[0].startswith(prefix):
        return how[0][len(prefix):], rows
    return (how[0] if how else None), rows


def check_file_paths(tmp, root):
    """A file is read straight into the pass when the in-stream links are
    complete, read twice otherwise (store/ingest_fix.c): both give the rows
    that the database gives. (The Python reference reads only 'X' events, so
    the B/E cases are checked against the database alone.)"""
    def same_as_db(label, path, rows, args=()):
        db = os.path.join(tmp, "paths.db")
        if os.path.exists(db):
            os.remove(db)
        cp = te.run_tool(["ingest", "-q", db, path])
        if C.eq(cp.returncode, 0, label + ": ingest"):
            C.check(rows is not None and rows == json_rows(["--row-limit", "-1"] + list(args) +
                                                            [db], label + " from DB"),
                    label + ": rows equal the database's")
        os.remove(db)

    # ops, runtime calls and kernels in the usual Kineto order: streamed
    f = os.path.join(root, "hta/df_index_resolver/df_index_resolver.json.gz")
    if os.path.exists(f):
        how, rows = averages_path(f)
        C.eq(how, "stream", "df_index_resolver: read without a database")
        same_as_db("df_index_resolver streamed", f, rows)
        how, rows = averages_path(f, ["--group-by-stack", "3"])
        C.eq(how, "stream", "--group-by-stack: read without a database (args and all)")
        same_as_db("df_index_resolver --group-by-stack", f, rows, ["--group-by-stack", "3"])
    # a parent op written after its children of the same start (and a tie
    # group across a block of the op spool): linked in the stream
    f = os.path.join(root, "hta/trace_diff/control/control.json.gz")
    if os.path.exists(f):
        how, rows = averages_path(f)
        C.eq(how, "stream", "control: read without a database")
        same_as_db("control", f, rows)
        compare_rows("control streamed", rows, ta.key_averages(raw_events(f)))
    # CUDA-graph launches (many kernels a correlation) and kernels whose
    # runtime call is not in the trace: linked in the stream
    f = os.path.join(root, "hta/trace_diff/test/test.json.gz")
    if os.path.exists(f):
        how, rows = averages_path(f)
        C.eq(how, "stream", "trace_diff test: read without a database")
        compare_rows("trace_diff test streamed", rows, ta.key_averages(raw_events(f)))
    # ops written at their end (old profilers: parents after their subtree)
    for rel in ("kineto/tb_plugin_2021-02/worker0.pt.trace.json.gz",
                "kineto/tb_plugin_2020-12_array_format/worker0.pt.trace.json.gz"):
        f = os.path.join(root, rel)
        if os.path.exists(f):
            how, rows = averages_path(f)
            C.eq(how, "stream", rel + ": read without a database")
            same_as_db(rel, f, rows)
        # standard input, read once: from a spill copy, without a database
        with open(f, "rb") as fh:
            data = fh.read()
        cp = subprocess.run([te.tracetool_path(), "averages", "--format", "json",
                             "--row-limit", "-1", "-"], input=data, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, TT_DEBUG_AVG="1"))
        C.eq(cp.returncode, 0, "control from stdin: exit code")
        C.eq([ln for ln in cp.stderr.decode().splitlines() if ln.startswith("averages: ")],
             ["averages: read without a database"],
             "control from stdin: from a spill copy, without a database")
        C.check(cp.returncode == 0 and
                json.loads(cp.stdout.decode("utf-8"))["traces"][0]["rows"] == rows,
                "control from stdin: the same rows")
    # a 'B' closed by its 'E' after more than a batch of rows
    far = ([{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}] +
           [X("k%d" % (i % 7), 10 + 3 * i, 2) for i in range(300)] +
           [{"ph": "E", "pid": 1, "tid": 1, "ts": 1000}])
    near = [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}, X("k", 10, 2),
            {"ph": "E", "pid": 1, "tid": 1, "ts": 100}]
    for name, ev, want in (("B/E far apart", far,
                            "'B' slices closed after their row was handed over"),
                           ("B/E nearby", near, "stream")):
        f = os.path.join(tmp, "be.json")
        with open(f, "w") as fh:
            json.dump({"traceEvents": ev}, fh)
        how, rows = averages_path(f)
        C.eq(how, want, name + ": how the file was read")
        same_as_db(name, f, rows)
    # an op with a negative dur that launched a kernel: its device records
    # cannot sort beside it, so its device time is summed in a first reading
    # and the file read again, still without a database
    neg = [X("aten::mm", 10, -5), RT(10, 7, dur=0), K(13, 7, dur=4), X("aten::add", 20, 5),
           RT(21, 8), K(30, 8, dur=6)]
    f = os.path.join(tmp, "neg.json")
    with open(f, "w") as fh:
        json.dump({"traceEvents": neg}, fh)
    cp = te.run_tool(["averages", "--format", "json", "--row-limit", "-1", f],
                     env={"TT_DEBUG_AVG": "1"})
    C.eq([ln for ln in te.stderr_lines(cp) if ln.startswith("averages: ")],
         ["averages: ops with a negative dur: read three times",
          "averages: read without a database"], "negative dur: how the file was read")
    rows = json.loads(cp.stdout.decode("utf-8"))["traces"][0]["rows"] if cp.returncode == 0 else None
    same_as_db("negative dur", f, rows)
    dev = {r["name"]: r["self_device_time_total_us"] for r in rows or []}
    C.check(dev.get("aten::mm") == 4.0 and dev.get("aten::add") == 6.0,
            "negative dur: each op keeps its own kernel's time: %r" % (dev,))


def RT(ts, corr, name="cudaLaunchKernel", dur=2):
    return X(name, ts, dur, cat="cuda_runtime", correlation=corr)


def K(ts, corr, dur=5, name="gemm"):
    return X(name, ts, dur, cat="kernel", pid=0, tid=7, correlation=corr)


def link_order_traces():
    """{name: (events, how averages must read it)}: the orders in which
    profilers write ops, runtime calls and kernels, each linked in the
    stream where the links can be known there"""
    ties = [X("lead", 0, 5)]  # shifts the tie groups across a spool block
    for i in range(700):
        t = 1000 * (i + 1)
        # children before their parent of the same start (Kineto sorts by start only)
        ties += [X("aten::add", t, 10), X("aten::mid", t, 20), X("aten::outer", t, 50),
                 K(t + 200, 2 * i), RT(t + 2, 2 * i), K(t + 300, 2 * i + 1),
                 RT(t + 30, 2 * i + 1)]
    graph = [X("replay", 0, 100), X("other", 200, 50)]
    graph += [K(300 + 10 * j, 7) for j in range(5)] + [RT(10, 7, "cudaGraphLaunch")]
    graph += [K(400, 8), RT(210, 8)]
    graph += [K(500, 99), K(520, 98)]  # calls made before the trace began
    rocm = [X("op", 0, 100), RT(10, 11, "hipLaunchKernel"), K(200, 11),
            RT(50, 12, "hipLaunchKernel"), K(300, 12)]
    # more kernels waiting for their calls than the ring holds: the first
    # ones are stored before their call comes, and linked after the load
    late = [X("big", 0, 10 ** 6)]
    late += [K(2 * 10 ** 6 + j, 1000 + j, 1) for j in range(4200)]
    late += [RT(10 + j, 1000 + j) for j in range(4200)]
    # each op written at its end: children before their parent
    at_end = []
    for i in range(300):
        t = 1000 * i
        at_end += [X("aten::leaf", t + 20, 10), X("aten::inner", t + 10, 40),
                   X("aten::step", t, 900), K(10 ** 6 + t, 2 * i), RT(t + 22, 2 * i),
                   K(10 ** 6 + t + 500, 2 * i + 1), RT(t + 100, 2 * i + 1)]
    # a runtime call written before an op that encloses it
    before = [RT(10, 1), X("op", 0, 100), K(500, 1)]
    return {"ties": (ties, "stream"), "graph": (graph, "stream"), "rocm": (rocm, "stream"),
            "late": (late, "GPU activities whose runtime call was not near them"),
            "at_end": (at_end, "stream"),
            "call_before_op": (before, "runtime calls to relink (ops out of order on a thread)")}


def check_link_orders(tmp):
    """Device time lands on the op that launched it whatever the order of the
    file (against the Python reference, which links without regard to
    order), read without a database when the stream can link it."""
    for name, (events, want) in link_order_traces().items():
        path = os.path.join(tmp, "order_%s.json" % name)
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": events}, f)
        label = "link order " + name
        how, rows = averages_path(path)
        C.eq(how, want, label + ": how the file was read")
        prows = ta.key_averages(ta.load_events(path))
        compare_rows(label, rows, prows)
        dev = sum(p.self_device_time_total for p in prows)
        C.check(dev > 0, label + ": the reference gives device time", dev)
        db = os.path.join(tmp, "order.db")
        if os.path.exists(db):
            os.remove(db)
        cp = te.run_tool(["ingest", "-q", db, path])
        if C.eq(cp.returncode, 0, label + ": ingest"):
            compare_rows(label + " from DB", json_rows(["--row-limit", "-1", db], label), prows)
            os.remove(db)


def check_synthetic(tmp, name):
    events, want = SYNTH[name]
    path = os.path.join(tmp, "syn_%s.json" % name)
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
    label = "synthetic " + name
    prows = ta.key_averages(ta.load_events(path))
    pmap = dict(((p.name, p.device), p) for p in prows)
    # the reference itself against hand-computed torch semantics
    bad = []
    for k, fields in want.items():
        p = pmap.get(k)
        if p is None:
            bad.append("%r missing" % (k,))
            continue
        for f, v in fields.items():
            if getattr(p, f) != v:
                bad.append("%r %s: %r, expected %r" % (k, f, getattr(p, f), v))
    C.check(not bad and set(pmap) == set(want), label + ": reference = hand-computed values",
            "; ".join(bad) or sorted(set(pmap) ^ set(want)))
    crows = json_rows(["--row-limit", "-1", path], label)
    compare_rows(label, crows, prows)
    if name in SYNTH_TOP:
        text = run_ok(["averages", "--top-level-only", "--row-limit", "-1", path],
                      label + " --top-level-only")
        if text is not None:
            names = table_names(text)
            C.eq(sorted(set(names or [])), sorted(SYNTH_TOP[name]),
                 label + ": --top-level-only rows (first event without a parent)")
    if name in SYNTH_FOOTER:
        text = run_ok(["averages", path], label + " table")
        if text is not None:
            C.eq((footer_value(text, "Self CPU"), footer_value(text, "Self CUDA")),
                 SYNTH_FOOTER[name], label + ": footers")


def check_synthetic_shapes(tmp):
    """Input Dims [] and no Input Dims are the same key: torch's str([])."""
    evs = [X("aten::foo", 0, 5, **{"Input Dims": []}), X("aten::foo", 10, 5),
           X("aten::foo", 20, 5, **{"Input Dims": [[2, 3], []]}),
           X("aten::foo", 30, 5, **{"Input dims": [[2, 3], []]})]
    path = os.path.join(tmp, "syn_shapes.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": evs}, f)
    label = "synthetic shapes"
    prows = ta.key_averages(ta.load_events(path), group_by_shape=True)
    C.eq(sorted((p.input_shapes, p.count) for p in prows), [("[[2, 3], []]", 2), ("[]", 2)],
         label + ": reference groups [] with missing shapes")
    crows = json_rows(["--group-by-shape", "--row-limit", "-1", path], label)
    compare_rows(label, crows, prows, shapes=True)


# ------------------------------------------------------------------ main

def check_gpu_annotations(tmp):
    """torch's parity on GPU user annotations, explained and hideable: a
    gpu_user_annotation spanning two kernels shows a Self CUDA % over 100%,
    a note under the table says why, --no-gpu-annotations leaves the row out"""
    ev = [{"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 0,
           "dur": 100, "args": {"External id": 7}},
          {"ph": "X", "cat": "gpu_user_annotation", "name": "step", "pid": 0, "tid": 7,
           "ts": 10, "dur": 80, "args": {"External id": 7}}]
    for i in range(2):
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                   "ts": 5 + 40 * i, "dur": 30, "args": {"External id": 10 + i}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": 10 + 40 * i, "dur": 5, "args": {"correlation": 20 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                   "ts": 20 + 40 * i, "dur": 20, "args": {"correlation": 20 + i}})
    path = os.path.join(tmp, "annot.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    cp = te.run_tool(["averages", path])
    text = cp.stdout.decode()
    C.eq(cp.returncode, 0, "annotations: exit 0")
    C.check("Note: 1 row of GPU user annotations" in text, "annotations: the note", text[-400:])
    rows = json.loads(te.run_tool(["averages", "--format", "json", path]).stdout)
    names = [(r["name"], r["device"]) for r in rows["traces"][0]["rows"]]
    C.check(("step", "CUDA") in names, "annotations: the CUDA row is there by default", names)
    cp = te.run_tool(["averages", "--no-gpu-annotations", "--format", "json", path])
    names = [(r["name"], r["device"]) for r in json.loads(cp.stdout)["traces"][0]["rows"]]
    C.check(("step", "CUDA") not in names and ("step", "CPU") in names and
            ("gemm", "CUDA") in names, "--no-gpu-annotations: only that row is gone", names)
    text = te.run_tool(["averages", "--no-gpu-annotations", path]).stdout.decode()
    C.check("Note:" not in text, "--no-gpu-annotations: no note")


def main():
    shared = te.shared_dir()
    root = os.path.join(shared, "testdata")
    if not os.access(te.tracetool_path(), os.X_OK):
        C.check(False, "tracetool binary exists", te.tracetool_path())
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_avg_") as tmp:
        for name in FIXTURE_NAMES:
            C.section("fixture " + name, check_fixture, name)
        matmul = os.path.join(FIXTURES, "matmul.trace.json")
        C.section("top-level matmul", check_top_level, matmul, "torch113/matmul",
                  "aten::empty")
        C.section("row-limit", check_row_limit, matmul, "torch113/matmul")
        C.section("steps matmul", check_steps, matmul, "torch113/matmul")
        C.section("csv matmul", check_csv, matmul, "torch113/matmul")
        C.section("exit codes", check_exit_codes, tmp)
        for name in SYNTH:
            C.section("synthetic " + name, check_synthetic, tmp, name)
        C.section("synthetic shapes", check_synthetic_shapes, tmp)
        C.section("gpu annotations", check_gpu_annotations, tmp)
        C.section("link orders", check_link_orders, tmp)

        if not os.path.isdir(root):
            C.skip("shared traces", "no test data at %s" % root)
            return C.finish()
        for i, pat in enumerate(GPU_TRACES):
            files = shared_files(root, pat)
            if not C.check(files, "shared trace %s exists" % pat):
                continue
            for j, f in enumerate(files):
                rel = os.path.relpath(f, root)
                C.section(rel, check_gpu_trace, tmp, i * 10 + j, f, rel, pat == SHAPE_TRACE)
        steps_files = shared_files(root, STEPS_TRACE)
        if steps_files:
            C.section("steps " + STEPS_TRACE, check_steps, steps_files[0], STEPS_TRACE)
        dlrm = shared_files(root, SHAPE_TRACE)
        if dlrm:
            rel = os.path.relpath(dlrm[0], root)
            C.section("top-level dlrm", check_top_level, dlrm[0], rel, "aten::mm")
            C.section("sort dlrm", check_sort, dlrm[0], rel)
            C.section("csv dlrm", check_csv, dlrm[0], rel)
        C.section("two traces", check_two_traces, tmp, root)
        C.section("file paths", check_file_paths, tmp, root)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
