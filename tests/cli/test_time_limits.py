#!/usr/bin/env python3
"""Times near the int64 limits (issue 28, issue 29 D9).

Every command that reads a trace is run on hand-made GPU traces whose times
reach the edges of int64 nanoseconds:

- times that do not fit (ts 9.2e15 us = 9.2e18 ns, dur 9.2e18 ns, -2^63,
  2^70, 1e308) are refused where they are read: the event has no time, the
  database's import_issues counts them ("unstorable_time", with the byte
  offset of the first), and no command computes with them;
- times inside the range (TT_TIME_MIN_NS < ts < TT_TIME_MAX_NS, |dur| <
  TT_DUR_MAX_NS, see tracetool/formats.h) give the numbers Python computes
  here with its unbounded integers: breakdown's window, busy and idle, the
  step time diff sees, export's process start;
- totals that pass int64 (many events of 2^61 - 1 ns each) stick at the
  int64 maximum instead of wrapping negative.

Under the ASan+UBSan build (UBSAN_OPTIONS=halt_on_error=1, as
scripts/test.sh runs it) a signed overflow anywhere aborts the command, so
its exit code is not in the documented set and the check fails; the
release build checks the numbers.

Environment: TRACETOOL. Needs no shared data.
"""

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("time_limits")
TT = os.path.abspath(os.environ.get("TRACETOOL", "build/tracetool"))

TIME_MAX = 1 << 62       # TT_TIME_MAX_NS (exclusive)
TIME_MIN = -(1 << 61)    # TT_TIME_MIN_NS (exclusive)
DUR_MAX = 1 << 61        # TT_DUR_MAX_NS (exclusive)
I64_MAX = (1 << 63) - 1


def us(ns):
    """An exact microsecond literal for a time in ns."""
    sign = "-" if ns < 0 else ""
    a = abs(ns)
    return "%s%d.%03d" % (sign, a // 1000, a % 1000)


def ev(ph, cat, name, ts, dur=None, pid=1, tid=1, args=None, raw_ts=None, raw_dur=None):
    """One event as JSON text; raw_ts / raw_dur are written as given."""
    parts = ['"ph":"%s"' % ph, '"name":%s' % json.dumps(name), '"pid":%d' % pid,
             '"tid":%d' % tid, '"ts":%s' % (raw_ts if raw_ts is not None else us(ts))]
    if cat:
        parts.append('"cat":"%s"' % cat)
    if raw_dur is not None:
        parts.append('"dur":%s' % raw_dur)
    elif dur is not None:
        parts.append('"dur":%s' % us(dur))
    if args:
        parts.append('"args":%s' % json.dumps(args))
    return "{" + ",".join(parts) + "}"


def gpu_job(t0, kdur, n=3, gap=1000, step=True, extra=()):
    """A step of n launches: cpu op, cudaLaunchKernel, kernel on stream 7."""
    evs = []
    span = n * (kdur + gap) + 10 * gap
    if step:
        evs.append(ev("X", "user_annotation", "ProfilerStep#1", t0, span))
    for i in range(n):
        ts = t0 + gap + i * (kdur + gap)
        corr, ext = 100 + i, 10 + i
        evs.append(ev("X", "cpu_op", "aten::mm", ts, 50, args={"External id": ext}))
        evs.append(ev("X", "cuda_runtime", "cudaLaunchKernel", ts + 10, 20,
                      args={"correlation": corr, "External id": ext}))
        evs.append(ev("X", "kernel", "gemm_kernel", ts + 100, kdur, pid=0, tid=7,
                      args={"device": 0, "stream": 7, "correlation": corr, "External id": ext}))
        evs.append(ev("X", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", ts + 100, kdur,
                      pid=0, tid=8, args={"device": 0, "stream": 8, "correlation": corr + 50,
                                          "bytes": 1024}))
    evs.extend(extra)
    return evs


def trace(evs, meta=""):
    return ('{"schemaVersion":1,%s"traceEvents":[\n' % meta + ",\n".join(evs) + "\n]}\n")


def run(args, tmp):
    env = dict(os.environ)
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    p = subprocess.run([TT] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp,
                       env=env, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def clean(label, rc, err, allowed=(0,)):
    """No sanitizer report and an exit code in the documented set."""
    sane = "runtime error" not in err and "Sanitizer" not in err
    C.check(rc in allowed and sane, label, "exit %d, stderr %s" % (rc, err.strip()[:400]))


def every_command(tmp, path, label, allowed=(0,)):
    """Every command that reads a trace: none may overflow or crash."""
    db = os.path.join(tmp, label + ".db")
    if os.path.exists(db):
        os.remove(db)
    cmds = [["info", path], ["averages", path], ["averages", "--group-by-shape", path],
            ["kernels", path], ["kernels", "--by", "op", path], ["breakdown", path],
            ["breakdown", "--by", "step", "--format", "json", path],
            ["memtimeline", "--device", "cuda:0", path, os.path.join(tmp, label + ".html")],
            ["diff", path, path], ["export", path, os.path.join(tmp, label + ".out.json")],
            ["ingest", "-q", db, path]]
    for c in cmds:
        rc, _, err = run(c, tmp)
        # a trace without memory events or GPU activities: memtimeline and
        # breakdown exit 4 (README); diff: 0 or 6
        ok = tuple(allowed) + ((4,) if c[0] in ("memtimeline", "breakdown") else ()) + \
            ((6,) if c[0] == "diff" else ())
        clean("%s: %s" % (label, " ".join(c[:-1] if c[0] != "memtimeline" else c[:1])), rc, err, ok)
    if os.path.exists(db):
        for c in (["info", db], ["averages", db], ["kernels", db], ["breakdown", db],
                  ["diff", db, db], ["export", db, os.path.join(tmp, label + ".db.json")]):
            rc, _, err = run(c, tmp)
            clean("%s: %s DB" % (label, c[0]), rc, err, tuple(allowed) + (4, 6))
    return db


def write(tmp, name, text):
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def issues(db, kind):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        rows = con.execute("SELECT count, first_offset FROM import_issues WHERE kind=?",
                           (kind,)).fetchall()
    finally:
        con.close()
    return rows[0] if rows else (0, None)


def breakdown_json(tmp, path):
    rc, out, err = run(["breakdown", "--format", "json", path], tmp)
    clean("breakdown json " + os.path.basename(path), rc, err)
    return json.loads(out) if rc == 0 else None


def first_row(bd):
    for k in ("ranks", "rows", "devices"):
        if isinstance(bd.get(k), list) and bd[k]:
            return bd[k][0]
    raise KeyError("no row list in %r" % list(bd))


def union_len(iv):
    iv = sorted(iv)
    total, lo, hi = 0, None, None
    for a, b in iv:
        if lo is None or a > hi:
            if lo is not None:
                total += hi - lo
            lo, hi = a, b
        elif b > hi:
            hi = b
    return total + (hi - lo if lo is not None else 0)


def test_refused(tmp):
    """D9's trace and the issue's extreme values: refused at read time."""
    d9 = '[{"ph":"X","name":"a","ts":9200000000000000,"dur":9200000000000000,"pid":1,"tid":1}]'
    p = write(tmp, "d9.json", d9)
    db = every_command(tmp, p, "d9", allowed=(0, 3, 4))
    if os.path.exists(db):
        n, off = issues(db, "unstorable_time")
        C.eq((n, off), (2, d9.index("9200")), "d9: both times counted as unstorable, at the first")
    bad = ["9223372036854775807", "-9223372036854775808", "9223372036854775808",
           "1180591620717411303424", "1e308", "-1e308", "4611686018427387.904"]
    evs = gpu_job(10**15, 5000)
    for i, b in enumerate(bad):
        evs.append(ev("X", "cpu_op", "bad_ts_%d" % i, 0, 10, raw_ts=b))
        evs.append(ev("X", "cpu_op", "bad_dur_%d" % i, 10**15, None, raw_dur=b))
        evs.append(ev("X", "kernel", "bad_kernel_%d" % i, 0, None, pid=0, tid=7, raw_ts=b,
                      raw_dur=b, args={"device": 0, "stream": 7, "correlation": 100}))
    p = write(tmp, "extremes.json", trace(evs))
    db = every_command(tmp, p, "extremes")
    if os.path.exists(db):
        n, _ = issues(db, "unstorable_time")
        # each bad value once, the kernel's ts and dur both (1e308 etc. were
        # refused before too; 4611686018427387.904 us is exactly 2^62 ns)
        C.eq(n, len(bad) * 4, "extremes: every out-of-range ts and dur counted")
        bd = breakdown_json(tmp, p)
        if bd:
            r = first_row(bd)
            C.eq(r.get("kernels"), 3, "extremes: kernels without a time are not in breakdown")


def test_edges(tmp):
    """In-range times at both ends: numbers equal Python's big integers."""
    kdur = DUR_MAX // 2 - 10**12
    t0 = TIME_MAX - 3 * (kdur + 1000) - 10**13 - 20000
    assert t0 > 0
    evs = gpu_job(t0, kdur, n=3)
    evs.append(ev("X", "kernel", "early_kernel", TIME_MIN + 10**6, 5000, pid=0, tid=7,
                  args={"device": 0, "stream": 7, "correlation": 999}))
    p = write(tmp, "edges.json", trace(evs))
    every_command(tmp, p, "edges")
    # Python's own reading of the kernels and copies of device 0
    iv = []
    for i in range(3):
        ts = t0 + 1000 + i * (kdur + 1000) + 100
        iv.append((ts, ts + kdur))
    C.check(max(b for _, b in iv) > (1 << 62) - 10**14, "edges: the test reaches the top")
    iv.append((TIME_MIN + 10**6, TIME_MIN + 10**6 + 5000))
    start = min(a for a, _ in iv)
    end = max(b for _, b in iv)
    busy = union_len(iv)
    bd = breakdown_json(tmp, p)
    if bd:
        r = first_row(bd)
        C.eq(r.get("window_ns"), end - start, "edges: window = last end - first start")
        C.eq(r.get("busy_ns"), busy, "edges: busy = union of the activities")
        C.eq(r.get("idle_ns"), end - start - busy, "edges: idle = window - busy, not negative")
        C.check(0 <= r.get("busy_pct", -1) <= 100, "edges: busy within 0-100%",
                r.get("busy_pct"))
    # the step's time as diff sees it (device clock: first kernel start to
    # last end of the step's activities; cpu clock: the step's span)
    rc, out, err = run(["diff", "--format", "json", "--step-clock", "cpu", p, p], tmp)
    clean("edges: diff cpu clock", rc, err, (0, 6))
    if rc in (0, 6):
        j = json.loads(out)
        txt = json.dumps(j)
        C.check("-" not in re.findall(r'"base_ns": (-?)', txt) and "nan" not in txt.lower(),
                "edges: diff reports no negative or nan step time", txt[:300])


def test_export_base(tmp):
    """baseTimeNanoseconds near the limit, and one that is not a time."""
    base = TIME_MAX - 10**15
    evs = gpu_job(10**9, 5000)
    a = write(tmp, "base_a.json", trace(evs, '"baseTimeNanoseconds":%d,' % base))
    b = write(tmp, "base_b.json", trace(evs, '"baseTimeNanoseconds":9223372036854775807,'))
    for p, label in ((a, "base_a"), (b, "base_b")):
        every_command(tmp, p, label)
    d = os.path.join(tmp, "ranks")
    os.makedirs(d, exist_ok=True)
    for i, p in enumerate((a, b)):
        with open(p) as f:
            txt = f.read()
        write(d, "rank%d.json" % i, txt.replace('"schemaVersion":1,', '"schemaVersion":1,'
                                               '"distributedInfo":{"rank":%d,"world_size":2},' % i))
    out = os.path.join(tmp, "ranks.out.json")
    rc, _, err = run(["export", d, out], tmp)
    clean("export of two ranks with extreme base times", rc, err)
    if rc == 0:
        with open(out) as f:
            j = json.load(f)
        ts = [e["ts"] for e in j["traceEvents"] if isinstance(e.get("ts"), (int, float))]
        C.check(ts and min(ts) >= 0, "export: no time wrapped negative", min(ts) if ts else None)


def test_sums(tmp):
    """Totals past int64: 12 overlapping kernels and ops of 2^61 - 1 ns."""
    d = DUR_MAX - 1
    evs = [ev("X", "user_annotation", "ProfilerStep#1", 0, d)]
    for i in range(12):
        evs.append(ev("X", "cpu_op", "aten::mm", 10 + i, d - 1000, tid=1 + i,
                      args={"External id": 10 + i}))
        evs.append(ev("X", "cuda_runtime", "cudaLaunchKernel", 20 + i, 10, tid=1 + i,
                      args={"correlation": 100 + i, "External id": 10 + i}))
        evs.append(ev("X", "kernel", "gemm_kernel", 100 + i, d - 1000, pid=0, tid=7 + i,
                      args={"device": 0, "stream": 7 + i, "correlation": 100 + i,
                            "External id": 10 + i}))
    p = write(tmp, "sums.json", trace(evs))
    every_command(tmp, p, "sums")
    rc, out, err = run(["kernels", "--format", "json", p], tmp)
    clean("sums: kernels json", rc, err)
    if rc == 0:
        txt = out
        C.check(not re.search(r'"total_ns": -', txt), "sums: kernel total not wrapped negative",
                txt[:300])
    rc, out, err = run(["averages", "--format", "json", p], tmp)
    clean("sums: averages json", rc, err)
    if rc == 0:
        C.check(not re.search(r'_total_us": -', out), "sums: averages totals not negative",
                out[:300])


def test_memrows(tmp):
    """A memory-timeline export with times and sizes beyond the range."""
    rows = [[1000, 1, 4096, 1], [2000, 1, 1 << 62, 1], [1 << 63, 1, 4096, 1],
            [-(1 << 63), 3, 4096, 1], [3000, 3, 4096, 1]]
    p = write(tmp, "memrows.json", json.dumps(rows))
    rc, _, err = run(["memtimeline", p, os.path.join(tmp, "memrows.html")], tmp)
    clean("memory-timeline export with extreme rows", rc, err, (0, 3))
    db = os.path.join(tmp, "memrows.db")
    rc, _, err = run(["ingest", "-q", db, p], tmp)
    clean("ingest of a memory-timeline export with extreme rows", rc, err, (0, 3))
    if rc == 0:
        # [2000, 1, 2^62] (size), [2^63, ...] and [-2^63, ...] (times)
        C.eq(issues(db, "unstorable_time")[0], 3, "memrows: three rows counted as unstorable")
    big = 1 << 62
    evs = []
    for i in range(4):
        evs.append(ev("i", "cpu_instant_event", "[memory]", 1000 + i, None,
                      args={"Device Type": 1, "Device Id": 0, "Addr": 4096 * (i + 1),
                            "Bytes": big, "Total Allocated": big * (i + 1),
                            "Total Reserved": big}))
    evs.append(ev("X", "cpu_op", "aten::empty", 900, 200))
    p = write(tmp, "membytes.json", trace(evs))
    every_command(tmp, p, "membytes", allowed=(0, 3))


def test_rf_ids(tmp):
    """An Execution Trace whose rf_id is INT64_MAX or INT64_MIN (the offset
    search of crosscheck added them to offsets: found by the mutation fuzzer)"""
    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz",
                         "seeds_structured")
    et, kin = os.path.join(seeds, "simple_add_et.json"), os.path.join(seeds, "simple_add_kineto.json")
    if not (os.path.exists(et) and os.path.exists(kin)):
        C.skip("rf ids", "tests/fuzz/seeds_structured is missing")
        return
    with open(et) as f:
        text = f.read()
    for v in ("9223372036854775807", "-9223372036854775808"):
        m = re.sub(r'"rf_id": ?4,', '"rf_id":%s,' % v, text, count=1)
        C.check(m != text, "rf_id %s planted" % v)
        p = write(tmp, "et_%s.json" % v.strip("-"), m)
        rc, _, err = run(["crosscheck", p, kin], tmp)
        clean("crosscheck with an ET rf_id of %s" % v, rc, err, (0, 1, 3))
        db = os.path.join(tmp, "et_%s.db" % v.strip("-"))
        rc, _, err = run(["ingest", "-q", db, kin, p], tmp)
        clean("ingest of the pair with an ET rf_id of %s" % v, rc, err)


def main():
    if not os.path.exists(TT):
        C.skip("all", "no tracetool binary at %s" % TT)
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        C.section("refused", test_refused, tmp)
        C.section("edges", test_edges, tmp)
        C.section("export base", test_export_base, tmp)
        C.section("sums", test_sums, tmp)
        C.section("memory rows", test_memrows, tmp)
        C.section("rf ids", test_rf_ids, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
