#!/usr/bin/env python3
"""`memtimeline FILE` and `memtimeline DB` give the same timeline.

Both read the trace as rows (analyze/memtimeline/memtimeline_stream.c): a file
through the ingest's rows without SQLite, a database through its stored rows.
Only a 'B' slice closed after its row was handed over makes it read a file
twice (no database: TT_ROWS_RELINK). For each trace below, the JSON timeline of the file (per
option set) must equal the one of the database that `tracetool ingest` made
of it, and the route the file took (TT_DEBUG_MEMTL) must be the one
expected, so every route is covered:

- hta/df_index_resolver (Kineto writes its [memory] events after the ops):
  rows;
- kineto/tb_plugin_2021-06 and the repository's resnet50 trace (ops out of
  time order on a thread): rows, those threads' ops sorted;
- a trace made here with two threads, events before and after the ops of
  their thread and nested ops: rows; the same trace with one op moved out of
  order: the ops sorted; with the threads' [memory] events in two runs of
  time order: rows (the runs merged); in 70 runs: the events sorted; with a
  "Bytes" given as a string: rows;
- a 'B' slice closed 60,000 events later: the file read twice.

No file may open a temporary database: with strace on the
machine, no tracetool-db-*, tracetool-input-* or SQLite etilqs_* file may be
opened (the reader's tracetool-spool-* files are fine).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("memtimeline_paths")
SHARED = te.shared_dir()
TOOL = te.tracetool_path()
FALLBACK = "read twice"
OPS_SORTED = "sorted (out of time order)"
EVENTS_SORTED = "events sorted by time"
ROWS = "read from the file's rows"
TEMP_DB = re.compile(r"tracetool-(db|input|crosscheck)-|etilqs_")


def made_trace(path, disorder, threads=2, mem_order=1, text_bytes=False):
    """threads threads: ProfilerStep#1 > aten::linear > aten::empty with
    allocations inside, a backward op freeing them; [memory] events written
    after every op (as Kineto does), thread by thread (mem_order -1: the
    last thread's first, so the device's events in id order are `threads`
    runs in time order); text_bytes: one "Bytes" written as a string."""
    evs = []
    tids = list(range(1, threads + 1))
    for tid in tids:
        base = 1000 * tid
        evs += [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": tid,
             "ts": base, "dur": 500},
            {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 7, "tid": tid,
             "ts": base + 10, "dur": 100},
            {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": tid,
             "ts": base + 20, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0",
             "pid": 7, "tid": tid, "ts": base + 200, "dur": 100},
        ]
    if disorder:
        evs[1], evs[2] = evs[2], evs[1]
    for tid in tids[::mem_order]:
        base = 1000 * tid
        for i, (dt, b) in enumerate([(5, 4096), (25, 8192), (60, 512), (70, -512),
                                     (250, -8192), (600, 1024)]):
            addr = 0x1000 * tid + (i if b > 0 else {-512: 2, -8192: 1}[b])
            evs.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7,
                        "tid": tid, "ts": base + dt, "s": "t",
                        "args": {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": b,
                                 "Total Allocated": 0, "Total Reserved": 0}})
    if text_bytes:
        evs[-1]["args"]["Bytes"] = "1024"
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": evs}, f)


def late_b_trace(path):
    """a 'B' ProfilerStep closed 60,000 ops later (its row is handed over
    before its end), allocations among the ops"""
    evs = [{"ph": "B", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 1,
            "ts": 0}]
    for i in range(60000):
        evs.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 1,
                    "ts": 10 + 10 * i, "dur": 5})
        if i % 1000 == 0:
            evs.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7,
                        "tid": 1, "ts": 12 + 10 * i, "s": "t",
                        "args": {"Device Type": 1, "Device Id": 0, "Addr": 1000 + i,
                                 "Bytes": 512 if i % 2000 else -512, "Total Allocated": 0,
                                 "Total Reserved": 0}})
    evs.append({"ph": "E", "pid": 7, "tid": 1, "ts": 10 + 10 * 60000})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": evs}, f)


def route(path, out):
    """fallback (the file read twice), ops-sorted, events-sorted or rows"""
    env = dict(os.environ, TT_DEBUG_MEMTL="1")
    p = subprocess.run([TOOL, "memtimeline", path, out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    err = p.stderr.decode()
    if FALLBACK in err:
        return p.returncode, "fallback"
    if ROWS not in err:
        return p.returncode, "unknown: " + err
    if OPS_SORTED in err:
        return p.returncode, "ops-sorted"
    return p.returncode, "events-sorted" if EVENTS_SORTED in err else "rows"


def temp_dbs(path, out, d):
    """the temporary databases `memtimeline path out` opens (strace), None
    without strace"""
    if not shutil.which("strace"):
        return None
    log = os.path.join(d, "strace.log")
    subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", log, TOOL, "memtimeline",
                    path, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   env=te.strace_env())
    with open(log) as f:
        return [ln.strip() for ln in f if TEMP_DB.search(ln)]


def compare(label, path, want_route, opt_sets, d):
    db = os.path.join(d, "t.db")
    if os.path.exists(db):
        os.unlink(db)
    subprocess.run([TOOL, "ingest", "-q", db, path], check=True)
    rc, how = route(path, os.path.join(d, "r.json"))
    C.eq(how, want_route, "%s: route" % label)
    opened = temp_dbs(path, os.path.join(d, "r.json"), d)
    if opened is None:
        C.skip("%s: no temporary database" % label, "no strace")
    else:
        C.eq(opened, [], "%s: no temporary database opened" % label)
    for opts in opt_sets:
        a, b = os.path.join(d, "file.json"), os.path.join(d, "db.json")
        pa = subprocess.run([TOOL, "memtimeline"] + opts + [path, a], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        pb = subprocess.run([TOOL, "memtimeline"] + opts + [db, b], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        lab = "%s %s" % (label, " ".join(opts) or "(defaults)")
        if not C.eq(pa.returncode, pb.returncode, "%s: exit code" % lab) or pa.returncode:
            continue
        with open(a) as fa, open(b) as fb:
            C.check(json.load(fa) == json.load(fb), "%s: same timeline" % lab)


def main():
    sets = [[], ["--no-categories"]]
    with tempfile.TemporaryDirectory() as d:
        for disorder in (0, 1):
            p = os.path.join(d, "made%d.json" % disorder)
            made_trace(p, disorder)
            C.section("made %d" % disorder, compare, "made trace%s" % (" (disorder)" if disorder else ""),
                      p, "ops-sorted" if disorder else "rows", sets + [["--device", "cpu"]], d)
        # the events of a device from the spill of the stream, in 2 runs
        # merged by time, in 70 runs (over 64: from the database), and with
        # a size that is not a number (the reader leaves it null: not an
        # event of the passes, either way)
        for name, kw, want in [("two runs", dict(mem_order=-1), "rows"),
                               ("70 runs", dict(threads=70, mem_order=-1), "events-sorted"),
                               ("text bytes", dict(text_bytes=True), "rows")]:
            p = os.path.join(d, "made_%s.json" % name.replace(" ", "_"))
            made_trace(p, 0, **kw)
            C.section("made " + name, compare, "made trace (%s)" % name, p, want,
                      sets + [["--device", "cpu"]], d)
        p = os.path.join(d, "late_b.json")
        late_b_trace(p)
        C.section("late B", compare, "made trace (B closed late)", p, "fallback", sets, d)
        real = [
            (os.path.join(SHARED, "testdata", "hta", "df_index_resolver", "df_index_resolver.json.gz"),
             "rows"),
            (os.path.join(SHARED, "testdata", "kineto", "tb_plugin_2021-06",
                          "worker0.1623143089861.pt.trace.json.gz"), "ops-sorted"),
            (os.path.join(ROOT, "testdata", "kineto", "resnet50_2021-06_trace.json.gz"), "ops-sorted"),
        ]
        for path, want in real:
            if not os.path.exists(path):
                C.skip(path, "missing")
                continue
            C.section(path, compare, os.path.basename(path), path, want, sets, d)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
