#!/usr/bin/env python3
"""ingest --jobs N: the database of --jobs 2 and --jobs 4 equals --jobs 1's.

--jobs 1 reads and writes every file on one thread, in order (the sequential
ingest); --jobs N >= 2 reads up to N - 1 files at once, each with ids of its
own, and one writer maps them to the database's. For every file set of the
shared testdata (dlrm_8rank Kineto, its ETs with their Kineto traces, gzip
files, an ET and its Kineto trace, a directory with a truncated file, a
non-trace and a duplicate in the middle):
  - every table, read with SELECT * ORDER BY rowid (ingested_at masked), and
    the schema (tables and indexes) are the same;
  - exit code and stderr lines (as a set: the order of stdout and stderr
    interleave) are the same, stdout the same but for the timings;
  - info, averages, kernels and breakdown print the same;
  - --skip-existing, --replace and --salvage into a database that already
    holds traces keep their meaning (the same database as --jobs 1's).

Environment: TRACETOOL (binary), TT_SHARED (shared folder with testdata/).
"""
import gzip
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
SHARED = os.environ.get("TT_SHARED", "../shared")
TD = os.path.join(SHARED, "testdata")
C = te.Checker("test_ingest_jobs")


check = C.check


def run(*args):
    p = subprocess.run([TRACETOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


TIMES = re.compile(r"in [0-9.]+ s \([0-9]+ MB/s\)")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def dump(db):
    """every table in rowid order, and the schema; ingested_at masked"""
    con = sqlite3.connect(db)
    out = []
    schema = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                         " ORDER BY type, name").fetchall()
    out.append(("schema", schema))
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                               " AND name NOT LIKE 'sqlite_%' ORDER BY name"):
        cur = con.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
        cols = [d[0] for d in cur.description]
        rows = []
        for r in cur:
            r = list(r)
            if "ingested_at" in cols:
                r[cols.index("ingested_at")] = "T"
            rows.append(tuple(r))
        out.append((name, cols, rows))
    con.close()
    return out


def ingest(db, jobs, inputs, extra=()):
    rc, out, err = run("ingest", "--jobs", str(jobs), *extra, db, *inputs)
    out = TIMES.sub("", out).replace(db, "DB")
    return rc, out, sorted(e.replace(db, "DB") for e in err.splitlines())


ANALYSES = (("info",), ("averages",), ("kernels",), ("breakdown",),
            ("breakdown", "--format", "json"))


def compare(label, inputs, pre=None, extra=(), analyses=True, jobs=(2, 4)):
    """ingest inputs with --jobs 1 and each of jobs (into a copy of pre when
    given) and compare everything"""
    for i in inputs:
        if not os.path.exists(i):
            C.skip(label, "missing " + i)
            return
    with tempfile.TemporaryDirectory() as d:
        res = {}
        for j in (1, *jobs):
            db = os.path.join(d, f"j{j}.db")
            if pre:
                shutil.copy(pre, db)
            res[j] = (db, ingest(db, j, inputs, extra))
        db1, (rc1, out1, err1) = res[1]
        ref = dump(db1)
        check(len(ref) > 1 and any(t[2] for t in ref[1:]), f"{label}: --jobs 1 stored rows")
        for j in jobs:
            dbj, (rc, out, err) = res[j]
            check(rc == rc1, f"{label}: --jobs {j} exits {rc}, --jobs 1 {rc1}")
            check(err == err1, f"{label}: --jobs {j} stderr {err} vs {err1}")
            check(out == out1, f"{label}: --jobs {j} stdout {out[:300]!r} vs {out1[:300]!r}")
            got = dump(dbj)
            same = got == ref
            if not same:
                for a, b in zip(ref, got):
                    if a != b:
                        print("  first difference in", a[0])
                        break
            check(same, f"{label}: --jobs {j} database equals --jobs 1's")
            if not analyses:
                continue
            for cmd in ANALYSES:
                r1 = run(*cmd, db1)
                rj = run(*cmd, dbj)
                o1 = STAMP.sub("T", r1[1]).replace(db1, "DB")
                oj = STAMP.sub("T", rj[1]).replace(dbj, "DB")
                check(r1[0] == 0 and rj[0] == 0 and o1 == oj and o1,
                      f"{label}: `{' '.join(cmd)}` prints the same with --jobs {j}")


def broken_dir(d):
    """a directory: good, truncated, good, not a trace, a duplicate, good"""
    k = sorted(os.listdir(os.path.join(TD, "param", "dlrm_8rank", "kineto")))
    src = [os.path.join(TD, "param", "dlrm_8rank", "kineto", f) for f in k]
    os.makedirs(d)
    shutil.copy(src[0], os.path.join(d, "a.json.gz"))
    with gzip.open(src[1], "rb") as f:
        data = f.read()
    with open(os.path.join(d, "b.json"), "wb") as f:
        f.write(data[: len(data) // 2])
    shutil.copy(src[2], os.path.join(d, "c.json.gz"))
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write('{"lr": 0.1}')
    shutil.copy(src[0], os.path.join(d, "d.json.gz"))
    shutil.copy(src[3], os.path.join(d, "e.json.gz"))


def main():
    dlrm = os.path.join(TD, "param", "dlrm_8rank")
    if not os.path.isdir(dlrm):
        print("SKIP: no", dlrm)
        return 77
    kin = os.path.join(dlrm, "kineto")
    compare("dlrm_8rank kineto", [kin])
    compare("dlrm_8rank et + kineto", [os.path.join(dlrm, "et"), kin], analyses=False)
    compare("gzip files (hta)", [os.path.join(TD, "hta")], analyses=False, jobs=(2, 3))
    compare("ET and its Kineto trace",
            [os.path.join(TD, "param", "resnet_pair", "resnet_et.json.gz"),
             os.path.join(TD, "param", "resnet_pair", "resnet_kineto.json.gz")],
            analyses=False)
    compare("kineto vintages", [os.path.join(TD, "kineto"), os.path.join(TD, "chakra")],
            analyses=False, jobs=(2,))
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad")
        broken_dir(bad)
        compare("a broken file in the middle", [bad])
        rc, out, err = ingest(os.path.join(d, "x.db"), 2, [bad])
        check(rc == 3, f"broken directory exits 3 (the first failure's code), got {rc}")
        con = sqlite3.connect(os.path.join(d, "x.db"))
        names = [r[0] for r in con.execute("SELECT file_name FROM traces ORDER BY id")]
        con.close()
        check(names == ["a.json.gz", "c.json.gz", "e.json.gz"],
              f"the others are ingested, in order: {names}")
        check(any("b.json" in e for e in err) and any("d.json.gz" in e for e in err),
              f"the truncated file and the duplicate are reported: {err}")
        compare("--salvage", [bad], extra=("--salvage",), analyses=False, jobs=(2,))
        # into a database that already holds traces
        pre = os.path.join(d, "pre.db")
        src = sorted(os.listdir(kin))
        rc, _, _ = run("ingest", "-q", "--jobs", "1", pre, os.path.join(kin, src[2]),
                       os.path.join(kin, src[5]))
        check(rc == 0, "the database to add to")
        compare("--skip-existing", [kin], pre=pre, extra=("--skip-existing",),
                analyses=False, jobs=(2,))
        compare("--replace", [kin], pre=pre, extra=("--replace",), jobs=(2,))
        compare("duplicates refused", [kin], pre=pre, analyses=False, jobs=(2,))
    # usage
    rc, _, err = run("ingest", "--jobs", "0", "x.db", kin)
    check(rc == 2 and "--jobs" in err, f"--jobs 0 is a usage error ({rc}, {err!r})")
    rc, _, err = run("ingest", "--jobs", "two", "x.db", kin)
    check(rc == 2, f"--jobs two is a usage error ({rc})")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
