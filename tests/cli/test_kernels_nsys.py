#!/usr/bin/env python3
"""tracetool kernels --by runtime|memsize|activity (the rest of nsys stats:
cuda_api_sum, cuda_gpu_mem_size_sum, cuda_gpu_trace) against an independent
standard-library computation straight from the trace JSON
(tests/fixtures/kernels_nsys_expect.py: statistics.median and
statistics.stdev).

On shared GPU traces (legacy Runtime/Memcpy categories, CUDA, ROCm):
  --by runtime: per call name, calls, total, min, max exact; mean, median
    (the mean of the two middle values for an even count), sample stddev and
    Time % to their printed precision; the grand total; largest total first,
    then name; JSON and CSV agree;
  --by memsize: per memcpy/memset kind with a size, count, total, min, max
    bytes exact, mean/median/stddev to their precision; most bytes first;
  --by activity: CSV has one row per kernel/memcpy/memset with the file's
    start, duration, correlation, grid, block, registers, shared memory,
    bytes, kinds, device, context and stream, by start; JSON (written in
    parts of 1024 rows) parses and holds the same rows; text and markdown
    have one line per activity; --only and --row-limit select;
  a database of two traces gives each trace's rows, --trace one of them;
  memory stays flat: 4x the activities in a database, not 4x the memory
    (not checked under a sanitizer, whose quarantine grows with the work);
  no runtime call / no sized memcpy / no activity: one line, exit 4;
  --only kernels --by runtime: a usage error (exit 2); truncated: exit 3.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import trace_expect as te  # noqa: E402
import kernels_nsys_expect as kx  # noqa: E402

C = te.Checker("kernels_nsys")
TRACES = ("hta/trace_diff/control/control.json.gz",
          "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz",
          "hta/nccl_parser_config/nccl_data.json.gz",
          "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
          "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json.gz")
ACT_KEYS = ("start_ns", "dur_ns", "correlation", "kind", "grid_x", "grid_y", "grid_z",
            "block_x", "block_y", "block_z", "registers", "shared_mem", "bytes", "copy_kind",
            "src_kind", "dst_kind", "device", "context", "stream", "name")
TEXT_KEYS = ("kind", "copy_kind", "src_kind", "dst_kind", "name")


def run(*args):
    p = te.run_tool(list(args))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def near(got, want, prec):
    """equal to the printed precision (prec digits after the point)"""
    return got is not None and abs(float(got) - want) <= 0.5 * 10 ** -prec + abs(want) * 1e-12


def check_stats(rel, what, row, values, keys):
    n, total, lo, hi, med, sd = kx.stats(values)
    cnt, tot, mn, mx, avg, md, dev = keys
    ok = (int(row[cnt]) == n and int(row[tot]) == total and int(row[mn]) == lo and
          int(row[mx]) == hi and near(row[avg], total / n, 3) and near(row[md], med, 1) and
          near(row[dev], sd, 3))
    C.check(ok, "%s: %s %s" % (rel, what, row.get("name", "")[:50]),
            (row, (n, total, lo, hi, med, sd)))


def check_runtime(rel, path, evs):
    want = kx.runtime_groups(evs)
    rc, out, err = run("kernels", "--by", "runtime", "--format", "json", path)
    C.eq(rc, 0, "%s: --by runtime exits 0 (%s)" % (rel, err.strip()))
    if rc:
        return
    s = json.loads(out)["summaries"]
    C.eq(len(s), 1, "%s: one runtime summary" % rel)
    s = s[0]
    grand = sum(sum(v) for v in want.values())
    C.eq((s["what"], s["group_by"], s["total_ns"]), ("runtime", "name", grand),
         "%s: runtime summary head" % rel)
    C.eq(sorted(r["name"] for r in s["rows"]), sorted(want), "%s: runtime call names" % rel)
    for r in s["rows"]:
        if r["name"] in want:
            check_stats(rel, "runtime", r, want[r["name"]],
                        ("count", "total_ns", "min_ns", "max_ns", "avg_ns", "med_ns",
                         "stddev_ns"))
            C.check(near(r["time_pct"], 100.0 * sum(want[r["name"]]) / grand, 4),
                    "%s: %s Time %%" % (rel, r["name"]), r["time_pct"])
    order = [(-r["total_ns"], r["name"]) for r in s["rows"]]
    C.eq(order, sorted(order), "%s: runtime rows by total time, then name" % rel)
    rc, out, _ = run("kernels", "--by", "runtime", "--format", "csv", path)
    rows = list(csv.DictReader(io.StringIO(out)))
    C.eq([(r["name"], int(r["count"]), int(r["total_ns"]), r["what"]) for r in rows],
         [(r["name"], r["count"], r["total_ns"], "runtime") for r in s["rows"]],
         "%s: runtime CSV == JSON" % rel)
    rc, out, _ = run("kernels", "--by", "runtime", path)
    C.check(rc == 0 and "Num Calls" in out and "StdDev (ns)" in out and
            out.startswith("CUDA/HIP runtime call summary, trace 1: "),
            "%s: runtime table heading" % rel, out[:200])


def check_memsize(rel, path, evs):
    want = kx.memsize_groups(evs)
    rc, out, err = run("kernels", "--by", "memsize", "--format", "csv", path)
    if not want:
        C.check(rc == 4 and err.count("\n") == 1 and "no memcpy or memset with a size" in err,
                "%s: --by memsize without sizes: one line, exit 4" % rel, (rc, err))
        return
    C.eq(rc, 0, "%s: --by memsize exits 0 (%s)" % (rel, err.strip()))
    rows = list(csv.DictReader(io.StringIO(out)))
    C.eq(sorted(r["name"] for r in rows), sorted(want), "%s: memsize kinds" % rel)
    for r in rows:
        if r["name"] in want:
            check_stats(rel, "memsize", r, want[r["name"]],
                        ("count", "bytes", "min_bytes", "max_bytes", "avg_bytes", "med_bytes",
                         "stddev_bytes"))
    order = [(-int(r["bytes"]), r["name"]) for r in rows]
    C.eq(order, sorted(order), "%s: memsize rows by bytes, then name" % rel)
    C.check(all(r["what"] == "memory_size" for r in rows), "%s: memsize what" % rel)
    doc = json.loads(run("kernels", "--by", "memsize", "--format", "json", path)[1])
    C.eq(doc["summaries"][0]["total_bytes"], sum(sum(v) for v in want.values()),
         "%s: memsize total_bytes" % rel)


def csv_activity(r):
    out = {}
    for k in ACT_KEYS:
        v = r[k]
        out[k] = (v or None) if k in TEXT_KEYS else (int(v) if v != "" else None)
    return out


def key(a):
    return tuple((v is None, v if v is not None else 0) if not isinstance(v, str) else (False, v)
                 for v in (a[k] for k in ACT_KEYS))


def check_activities(rel, path, evs):
    want = kx.activities(evs)
    C.check(len(want) > 0, "%s: the trace has activities" % rel)
    rc, out, err = run("kernels", "--by", "activity", "--format", "csv", path)
    C.eq(rc, 0, "%s: --by activity exits 0 (%s)" % (rel, err.strip()))
    if rc:
        return
    rows = [csv_activity(r) for r in csv.DictReader(io.StringIO(out))]
    C.eq(len(rows), len(want), "%s: one CSV row per activity" % rel)
    starts = [r["start_ns"] for r in rows]
    C.eq(starts, sorted(starts), "%s: activities by start" % rel)
    C.eq(starts, [a["start_ns"] for a in want], "%s: the file's start times" % rel)
    got, exp = sorted(rows, key=key), sorted(want, key=key)
    bad = [(g, w) for g, w in zip(got, exp) if g != w]
    C.check(not bad and len(got) == len(exp), "%s: every activity's cells" % rel,
            bad[:1])
    # JSON: parts of 1024 rows make one array
    rc, out, _ = run("kernels", "--by", "activity", "--format", "json", path)
    try:
        doc = json.loads(out)
    except ValueError as e:
        C.check(False, "%s: activity JSON parses" % rel, e)
        return
    t = doc["traces"]
    C.check(len(t) == 1 and t[0]["what"] == "activities" and t[0]["trace_id"] == 1,
            "%s: one trace of activities" % rel, [(x["trace_id"], x["what"]) for x in t])
    C.eq([{k: a[k] for k in ACT_KEYS} for a in t[0]["rows"]], rows,
         "%s: JSON rows == CSV rows" % rel)
    C.check(all(a["gb_per_s"] is None or a["dur_ns"] <= 0 or
                near(a["gb_per_s"], a["bytes"] / a["dur_ns"], 3) for a in t[0]["rows"]),
            "%s: GB/s = bytes / duration" % rel)
    # text: the heading, titles, a rule, one line per activity
    for fmt, skip in (("table", 4), ("markdown", 4)):
        rc, out, _ = run("kernels", "--by", "activity", "--format", fmt, path)
        lines = out.splitlines()
        C.eq(len(lines) - skip, len(want), "%s: %s lines per activity" % (rel, fmt))
    for only, kinds in (("kernels", {"kernel"}), ("memory", {"memcpy", "memset"})):
        rc, out, _ = run("kernels", "--by", "activity", "--only", only, "--format", "csv", path)
        n = sum(1 for a in want if a["kind"] in kinds)
        if n == 0:
            C.eq(rc, 4, "%s: --only %s without any: exit 4" % (rel, only))
            continue
        sel = [csv_activity(r) for r in csv.DictReader(io.StringIO(out))]
        C.check(len(sel) == n and {a["kind"] for a in sel} <= kinds, "%s: --only %s" % (rel, only),
                (len(sel), n, {a["kind"] for a in sel}))
    rc, out, _ = run("kernels", "--by", "activity", "--row-limit", "3", "--format", "csv", path)
    C.eq([csv_activity(r) for r in csv.DictReader(io.StringIO(out))], rows[:3],
         "%s: --row-limit 3: the first 3 by start" % rel)


def check_trace(rel):
    path = os.path.join(te.shared_dir(), "testdata", rel)
    if not os.path.exists(path):
        C.skip(rel, "shared trace missing")
        return
    evs = kx.events(path)
    C.section(rel + " runtime", check_runtime, rel, path, evs)
    C.section(rel + " memsize", check_memsize, rel, path, evs)
    C.section(rel + " activity", check_activities, rel, path, evs)


def check_database(tmp):
    a = os.path.join(te.shared_dir(), "testdata", TRACES[3])
    b = os.path.join(te.shared_dir(), "testdata", TRACES[4])
    if not (os.path.exists(a) and os.path.exists(b)):
        C.skip("database", "shared traces missing")
        return
    db = os.path.join(tmp, "two.db")
    p = te.run_tool(["ingest", "--quiet", db, a, b])
    C.eq(p.returncode, 0, "ingest two traces")
    rc, out, _ = run("kernels", "--by", "runtime", "--format", "json", db)
    got = [(s["trace_id"], s["total_ns"]) for s in json.loads(out)["summaries"]]
    want = [(i + 1, json.loads(run("kernels", "--by", "runtime", "--format", "json", f)[1])
             ["summaries"][0]["total_ns"]) for i, f in enumerate((a, b))]
    C.eq(sorted(got), want, "database: a runtime summary per trace")
    rc, out, _ = run("kernels", "--by", "activity", "--format", "csv", db)
    ids = [int(r["trace_id"]) for r in csv.DictReader(io.StringIO(out))]
    n = [len(kx.activities(kx.events(f))) for f in (a, b)]
    C.eq((ids.count(1), ids.count(2)), tuple(n), "database: each trace's activities")
    rc, out, _ = run("kernels", "--by", "activity", "--trace", "2", "--format", "json", db)
    t = json.loads(out)["traces"]
    C.eq([(x["trace_id"], len(x["rows"])) for x in t], [(2, n[1])], "database: --trace 2")


def write_big(path, n):
    """n kernels with their runtime calls, a memcpy every 10th"""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        for i in range(n):
            ts = 1000 + i * 10
            f.write('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                    '"ts":%d,"dur":2,"args":{"correlation":%d}},\n' % (ts, i + 1))
            cat = "gpu_memcpy" if i % 10 == 0 else "kernel"
            nm = "Memcpy HtoD (Pinned -> Device)" if i % 10 == 0 else "k%d" % (i % 7)
            f.write('{"ph":"X","cat":"%s","name":"%s","pid":0,"tid":7,"ts":%d,"dur":3,'
                    '"args":{"correlation":%d,"device":0,"stream":7,"bytes":%d,'
                    '"grid":[%d,1,1],"block":[128,1,1]}}%s\n'
                    % (cat, nm, ts + 5, i + 1, 64 + i, i % 97 + 1, "," if i + 1 < n else ""))
        f.write("]}\n")


def peak_mb(args):
    """exit code and peak RSS (MB) of tracetool ARGS, measured by a fresh
    Python (a child's ru_maxrss starts at its parent's size at fork)"""
    code = ("import os, resource, subprocess, sys\n"
            "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL,"
            " stderr=subprocess.DEVNULL)\n"
            "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, te.tracetool_path()] + args,
                         stdout=subprocess.PIPE, check=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024.0


def check_memory(tmp):
    """the rows stream out of the database: 4x the activities, not 4x the
    memory (printing them all at once would take ~60 MB more for 120k)"""
    peaks = []
    for n in (30000, 120000):
        path, db = os.path.join(tmp, "big_%d.json" % n), os.path.join(tmp, "big_%d.db" % n)
        write_big(path, n)
        C.eq(te.run_tool(["ingest", "--quiet", db, path]).returncode, 0, "ingest %d kernels" % n)
        os.unlink(path)
        for fmt in ("json", "csv"):
            rc, mb = peak_mb(["kernels", "--by", "activity", "--format", fmt, db])
            C.eq(rc, 0, "--by activity --format %s on %d kernels exits 0" % (fmt, n))
            peaks.append(mb)
        os.unlink(db)
    if os.environ.get("TT_SANITIZED"):  # ASan's quarantine grows with the work
        return
    C.check(peaks[2] < peaks[0] + 16 and peaks[3] < peaks[1] + 16,
            "memory flat: 4x the rows, json %.1f MB -> %.1f MB, csv %.1f MB -> %.1f MB"
            % (peaks[0], peaks[2], peaks[1], peaks[3]), peaks)


def check_errors(tmp):
    cpu = os.path.join(te.shared_dir(), "testdata", "hta/rank_non_gpu/rank_non_gpu.json.gz")
    if os.path.exists(cpu):
        for by, msg in (("runtime", "no CUDA/HIP runtime or driver call"),
                        ("memsize", "no memcpy or memset with a size"),
                        ("activity", "no GPU activity (kernel, memcpy, memset)")):
            rc, out, err = run("kernels", "--by", by, cpu)
            C.check(rc == 4 and out == "" and err.count("\n") == 1 and
                    err.startswith("tracetool: ") and msg in err and "in this trace" in err,
                    "CPU-only trace, --by %s: one line, exit 4" % by, (rc, err))
    else:
        C.skip("errors", "shared trace missing")
    for args in (["--by", "runtime", "--only", "kernels"], ["--by", "memsize", "--only", "kernels"],
                 ["--by", "everything"]):
        rc, out, err = run("kernels", *args, "x.json")
        C.check(rc == 2 and out == "" and err.count("\n") == 1 and "--help" in err,
                "kernels %s: a usage error" % " ".join(args), (rc, err))
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1},')
    for by in ("runtime", "memsize", "activity"):
        rc, _, err = run("kernels", "--by", by, bad)
        C.check(rc == 3 and err.count("\n") == 1, "truncated, --by %s: exit 3" % by, (rc, err))


def main():
    for rel in TRACES:
        check_trace(rel)
    with tempfile.TemporaryDirectory() as tmp:
        C.section("database", check_database, tmp)
        C.section("errors", check_errors, tmp)
        C.section("memory", check_memory, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
