#!/usr/bin/env python3
"""Compare what two tracetool builds print, byte for byte.

    compare_builds.py OLD_TRACETOOL NEW_TRACETOOL [--only CMD[,CMD...]] [--jobs N]
                      [--shared DIR] [--keep DIR] [--list]

Runs every command / option set below on every trace of the shared test data
(and the repository's own testdata/kineto), once straight from the file and
once from a database that OLD ingested (so NEW must also read databases
written before), and compares standard output, the output file (memtimeline)
and the exit code. Standard error is compared with temporary paths masked.

Prints one line per difference and a closing line
`compare: N passed, M failed` (combinations compared). Exit 0 when every
combination agrees, 1 otherwise. Python standard library only.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

AVERAGES = [
    [],
    ["--group-by-shape"],
    ["--format", "csv"],
    ["--format", "json"],
    ["--format", "markdown", "--row-limit", "15"],
    ["--sort-by", "self_cuda_time_total", "--row-limit", "20"],
    ["--sort-by", "cpu_time_total", "--top-level-only"],
    ["--steps", "0-1000000"],
    ["--group-by-stack", "5", "--row-limit", "10"],
]
KERNELS = [
    [],
    ["--by", "launch", "--format", "csv"],
    ["--by", "stream", "--format", "json"],
    ["--by", "op"],
    ["--only", "memory"],
    ["--only", "kernels", "--row-limit", "5"],
    ["--by", "activity"],
    ["--by", "activity", "--only", "memory", "--format", "csv"],
    ["--by", "activity", "--steps", "0-1000000", "--format", "json"],
    ["--by", "activity", "--row-limit", "7", "--format", "markdown"],
]
INFO = [[], ["--format", "json"]]
# directories of traces (multi-rank jobs) given to kernels and info
KERNELS_DIRS = ["param/dlrm_8rank/kineto", "hta/trace_diff/control"]
KERNELS_DIR_OPTS = [["--by", "activity"], ["--by", "activity", "--rank", "1", "--format", "json"],
                    []]
MEMTL = [[], ["--no-categories"], ["--device", "cpu"]]
EXPORT = [[], ["--steps", "0-1000000"], ["--steps", "2-3"]]
# directories of traces (multi-rank jobs) exported as one file
EXPORT_DIRS = ["param/dlrm_8rank/kineto", "hta/trace_diff/control"]
EXPORT_DB = [["--rank", "0,1"], ["--trace", "2"], ["--rank", "3", "--steps", "0-1000000"]]

# (ET, Kineto) pairs of the shared data
PAIRS = [
    ("hta/execution_trace/benchmark_simple_add_et.json.gz",
     "hta/execution_trace/benchmark_simple_add_trace.json.gz"),
    ("param/resnet_pair/resnet_et.json.gz", "param/resnet_pair/resnet_kineto.json.gz"),
] + [("param/dlrm_8rank/et/dlrm_eg_%d.json.gz" % r,
      "param/dlrm_8rank/kineto/" + k) for r, k in enumerate([
          "worker0_step_12.1694128201545.pt.trace.json.gz",
          "worker1_step_12.1694128201556.pt.trace.json.gz",
          "worker2_step_12.1694128201554.pt.trace.json.gz",
          "worker3_step_12.1694128201557.pt.trace.json.gz",
          "worker4_step_12.1694128201547.pt.trace.json.gz",
          "worker5_step_12.1694128201549.pt.trace.json.gz",
          "worker6_step_12.1694128201553.pt.trace.json.gz",
          "worker7_step_12.1694128201553.pt.trace.json.gz"])]
CROSS = [[], ["--format", "json"], ["--strict"], ["--key", "external", "--limit", "5"]]
# crosscheck of other input sets (paths under testdata/, options): directories
# (several Kineto traces: slice ids follow the files' order), a file also in
# the directory given beside it (read once)
CROSS_SETS = [
    (["param/dlrm_8rank/et", "param/dlrm_8rank/kineto"], []),
    (["param/dlrm_8rank"], ["--format", "json"]),
    (["param/dlrm_8rank"], ["--rank", "3", "--key", "external"]),
    (["param/dlrm_8rank"], ["--trace", "12", "--format", "json"]),
    (["param"], ["--format", "json"]),
    (["param"], ["--key", "external", "--limit", "20"]),
    (["param/resnet_pair", "param/resnet_pair/resnet_et.json.gz"], []),
    (["hta/execution_trace", "param/resnet_pair"], ["--format", "json", "--strict"]),
    (["chakra/1.0.2-chakra.0.0.4.json.gz", "hta/execution_trace"], ["--format", "json"]),
    (["hta/execution_trace/benchmark_simple_add_et.json.gz"], []),
]
# diff: INPUT against itself, and one side's samples and keys as a saved summary
DIFF = [
    [],
    ["--format", "json"],
    ["--match", "shape", "--format", "csv"],
    ["--match", "op", "--step-clock", "cpu", "--format", "csv"],
    ["--match", "name", "--format", "csv"],
    ["--save-summary", "{OUT}.json"],
]
# diff of directories of per-rank traces (BASE, NEW, options)
DIFF_DIRS = [
    ("hta/trace_compare/base", "hta/trace_compare/test", []),
    ("param/dlrm_8rank/kineto", "param/dlrm_8rank/kineto", []),
    ("param/dlrm_8rank/kineto", "param/dlrm_8rank/kineto", ["--rank-agg", "each", "--format", "json"]),
    ("hta/trace_diff/control", "hta/trace_diff/test", ["--allow-env-mismatch", "--format", "json"]),
]
# breakdown: every file, and directories of per-rank traces (path, options)
BREAKDOWN = [
    [],
    ["--by", "step", "--format", "json"],
    ["--by", "stream", "--format", "csv"],
    ["--steps", "0-1000000", "--format", "markdown"],
    ["--comm-pattern", "gemm|Memcpy", "--format", "json", "--row-limit", "5"],
    ["--rank", "0", "--kernel-wait", "1000"],
]
BREAKDOWN_DIRS = ["hta/trace_compare/base", "hta/critical_path", "param/dlrm_8rank/kineto"]

TMP_RE = re.compile(rb"(/tmp|/var/tmp)/[A-Za-z0-9_.\-/]*|[0-9.]+ ?(s|ms|MB/s)\b")


def traces(shared):
    out = []
    for base in (os.path.join(shared, "testdata"), os.path.join(ROOT, "testdata", "kineto")):
        for dp, _, fs in os.walk(base):
            for f in sorted(fs):
                if f.endswith((".json", ".json.gz", ".gz")):
                    out.append(os.path.join(dp, f))
    return sorted(out)


def run(binary, args, workdir, outfile=None):
    """(exit code, stdout, stderr masked, output file bytes or None)"""
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, cwd=workdir, timeout=900)
    data = None
    if outfile and os.path.exists(outfile):
        with open(outfile, "rb") as f:
            data = f.read()
        os.unlink(outfile)
    return p.returncode, p.stdout, TMP_RE.sub(b"<x>", p.stderr), data


def jobs_for(shared, dbpath, only):
    """[(label, args-with-{OUT}-placeholder)]"""
    jobs = []
    want = lambda c: not only or c in only
    tl = traces(shared)
    td = os.path.join(shared, "testdata")
    inputs = [(os.path.relpath(t, ROOT if t.startswith(ROOT) else td), t) for t in tl]
    if dbpath:
        inputs.append(("DB", dbpath))
    for name, path in inputs:
        if want("info"):
            jobs += [("info %s %s" % (" ".join(o), name), ["info"] + o + [path]) for o in INFO]
        if want("averages"):
            jobs += [("averages %s %s" % (" ".join(o), name), ["averages"] + o + [path])
                     for o in AVERAGES]
        if want("kernels"):
            jobs += [("kernels %s %s" % (" ".join(o), name), ["kernels"] + o + [path])
                     for o in KERNELS]
        if want("memtimeline"):
            jobs += [("memtimeline %s %s" % (" ".join(o), name),
                      ["memtimeline"] + o + [path, "{OUT}.json"]) for o in MEMTL]
        if want("diff"):
            jobs += [("diff %s %s" % (" ".join(o), name),
                      ["diff"] + o + [path] + ([] if "--save-summary" in o else [path]))
                     for o in DIFF]
        if want("export"):
            jobs += [("export %s %s" % (" ".join(o), name),
                      ["export"] + o + [path, "{OUT}.json"]) for o in EXPORT]
            if name == "DB":
                jobs += [("export %s DB" % " ".join(o), ["export"] + o + [path, "{OUT}.json"])
                         for o in EXPORT_DB]
    if want("export"):
        for d in EXPORT_DIRS:
            if os.path.isdir(os.path.join(td, d)):
                jobs += [("export %s %s/" % (" ".join(o), d),
                          ["export"] + o + [os.path.join(td, d), "{OUT}.json"]) for o in EXPORT]
    for d in KERNELS_DIRS:
        if not os.path.isdir(os.path.join(td, d)):
            continue
        if want("kernels"):
            jobs += [("kernels %s %s/" % (" ".join(o), d), ["kernels"] + o + [os.path.join(td, d)])
                     for o in KERNELS_DIR_OPTS]
        if want("info"):
            jobs += [("info %s %s/" % (" ".join(o), d), ["info"] + o + [os.path.join(td, d)])
                     for o in INFO]
    if want("diff"):
        for b, n, o in DIFF_DIRS:
            jobs.append(("diff %s %s %s" % (" ".join(o), b, n),
                         ["diff"] + o + [os.path.join(td, b), os.path.join(td, n)]))
    if want("breakdown"):
        for name, path in inputs:
            jobs += [("breakdown %s %s" % (" ".join(o), name), ["breakdown"] + o + [path])
                     for o in BREAKDOWN]
        for d in BREAKDOWN_DIRS:
            jobs += [("breakdown %s %s" % (" ".join(o), d),
                      ["breakdown"] + o + [os.path.join(td, d)]) for o in BREAKDOWN]
    if want("crosscheck"):
        for et, k in PAIRS:
            etp, kp = os.path.join(td, et), os.path.join(td, k)
            jobs += [("crosscheck %s %s" % (" ".join(o), k), ["crosscheck"] + o + ["--no-store", etp, kp])
                     for o in CROSS]
        if dbpath:
            jobs += [("crosscheck %s DB" % " ".join(o), ["crosscheck"] + o + [dbpath]) for o in CROSS]
        for paths, o in CROSS_SETS:
            if all(os.path.exists(os.path.join(td, x)) for x in paths):
                jobs.append(("crosscheck %s %s" % (" ".join(o), " ".join(paths)),
                             ["crosscheck"] + o + [os.path.join(td, x) for x in paths]))
    return jobs


def compare_one(old, new, label, args, work):
    res = []
    for i, b in enumerate((old, new)):
        wd = os.path.join(work, "w%d" % i)
        os.makedirs(wd, exist_ok=True)
        out = None
        a = list(args)
        if any("{OUT}" in x for x in a):
            # the thread's own name: two inputs may share a label (the same
            # relative path under testdata/ and ../shared/testdata)
            out = os.path.join(wd, "out%d_%d" % (abs(hash(label)), threading.get_ident()))
            a = [x.replace("{OUT}", out) for x in a]
            out += ".json"
        res.append(run(b, a, wd, out))
    if res[0] == res[1]:
        return label, None
    why = []
    names = ["exit code", "stdout", "stderr", "output file"]
    for k in range(4):
        if res[0][k] != res[1][k]:
            if k == 0:
                why.append("exit %s -> %s" % (res[0][0], res[1][0]))
            else:
                a, b = res[0][k] or b"", res[1][k] or b""
                n = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
                why.append("%s differs at byte %d: %r / %r" % (names[k], n, a[max(0, n - 20):n + 40],
                                                             b[max(0, n - 20):n + 40]))
    return label, "; ".join(why)


def db_digest(path):
    """{table: digest of its rows in id order} for every table of a database"""
    import hashlib
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    out = {}
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                        " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    for t in names:
        cols = [r[1] for r in con.execute("PRAGMA table_info(%s)" % t)
                if r[1] not in ("seconds", "ingested_at", "path")]
        h = hashlib.sha256()
        n = 0
        for row in con.execute("SELECT %s FROM %s ORDER BY rowid" % (", ".join(cols), t)):
            h.update(repr(row).encode())
            n += 1
        out[t] = (n, h.hexdigest())
    con.close()
    return out


def compare_ingest(old, new, shared, work):
    """(passed, failed): the tables each build writes for every trace"""
    dbs = []
    for i, b in enumerate((old, new)):
        d = os.path.join(work, "ingest%d.db" % i)
        if os.path.exists(d):
            os.unlink(d)
        subprocess.run([b, "ingest", "-q", d] + traces(shared), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        dbs.append(db_digest(d))
    passed = failed = 0
    for t in sorted(set(dbs[0]) | set(dbs[1])):
        if dbs[0].get(t) == dbs[1].get(t):
            passed += 1
        else:
            failed += 1
            print("DIFF ingest table %s: %s / %s" % (t, dbs[0].get(t), dbs[1].get(t)))
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--shared", default=os.environ.get("TT_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--keep", default=None, help="work directory to keep (default: a temporary one)")
    ap.add_argument("--no-db", action="store_true", help="skip the database inputs")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ingest", action="store_true",
                    help="also compare the tables each build's ingest writes")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    a.old, a.new = os.path.abspath(a.old), os.path.abspath(a.new)
    if not os.path.isdir(os.path.join(a.shared, "testdata")):
        print("compare: no shared test data at %s" % a.shared, file=sys.stderr)
        return 2
    work = a.keep or tempfile.mkdtemp(prefix="tt-compare-")
    os.makedirs(work, exist_ok=True)
    dbpath = None
    if not a.no_db:
        dbpath = os.path.join(work, "all.db")
        if os.path.exists(dbpath):
            os.unlink(dbpath)
        p = subprocess.run([a.old, "ingest", "-q", dbpath] + traces(a.shared),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if not os.path.exists(dbpath):
            print("compare: the old build could not write %s: %s" % (dbpath, p.stderr[-400:]),
                  file=sys.stderr)
            return 2
    jobs = jobs_for(a.shared, dbpath, only)
    if a.list:
        for label, args in jobs:
            print(label)
        return 0
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(compare_one, a.old, a.new, label, args, work) for label, args in jobs]
        for f in futs:
            label, why = f.result()
            if why:
                failed += 1
                print("DIFF %s: %s" % (label, why))
            else:
                passed += 1
    if a.ingest:
        p, f = compare_ingest(a.old, a.new, a.shared, work)
        passed += p
        failed += f
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("compare: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
