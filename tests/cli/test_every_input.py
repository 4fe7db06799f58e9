#!/usr/bin/env python3
"""Every analysis takes every input (issue 24 item 5): a directory of
per-rank traces, a trace file with --rank / --trace, and a database give the
same answer. Checked here by comparing each command's JSON on the input with
its JSON on a database ingested from the same files (the database is the
reference: its path is the one the tests of each command check against the
trace JSON), and --rank against the rank each file's distributedInfo holds.
"""

import gzip
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("every_input")
SHARED = te.shared_dir()
DLRM = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
MEM = os.path.join(SHARED, "testdata", "hta", "df_index_resolver", "df_index_resolver.json.gz")


def js(args):
    p = te.run_tool(args)
    C.check(p.returncode == 0, " ".join(os.path.basename(a) for a in args) + ": exit 0",
            (p.returncode, p.stderr.decode()[-300:]))
    return json.loads(p.stdout) if p.returncode == 0 else None


def rank_of(path):
    with gzip.open(path) as f:
        return json.load(f)["distributedInfo"]["rank"]


def check_directory(tmp):
    db = os.path.join(tmp, "dlrm.db")
    C.eq(te.run_tool(["ingest", "-q", db, DLRM]).returncode, 0, "ingest the directory")
    for cmd in (["info"], ["averages"], ["kernels"], ["averages", "--rank", "3"],
                ["kernels", "--trace", "2"]):
        got, want = js(cmd + ["--format", "json", DLRM]), js(cmd + ["--format", "json", db])
        C.check(got is not None and got == want, "%s DIR: the database's answer" % " ".join(cmd))
    p = te.run_tool(["averages", "--rank", "99", DLRM])
    C.check(p.returncode == 4 and DLRM.encode() in p.stderr and b"--rank" in p.stderr,
            "averages --rank 99 DIR: exit 4 naming the directory", (p.returncode, p.stderr))
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    p = te.run_tool(["info", empty])
    C.check(p.returncode != 0 and b"no trace files" in p.stderr, "info of an empty directory: says so",
            (p.returncode, p.stderr))


def check_rank_on_file(tmp):
    files = sorted(os.path.join(DLRM, f) for f in os.listdir(DLRM))
    f = files[3]
    r = rank_of(f)
    got = js(["averages", "--rank", str(r), "--format", "json", f])
    plain = js(["averages", "--format", "json", f])
    C.check(got is not None and plain is not None and
            [t["rows"] for t in got["traces"]] == [t["rows"] for t in plain["traces"]],
            "averages --rank %d FILE (the file's rank): the file's rows" % r)
    p = te.run_tool(["averages", "--rank", str(r + 1), f])
    C.check(p.returncode == 4 and os.path.basename(f).encode() in p.stderr,
            "averages --rank of another rank on FILE: exit 4 naming the file", (p.returncode, p.stderr))
    got = js(["kernels", "--trace", "1", "--format", "json", f])
    C.check(got is not None and got == js(["kernels", "--format", "json", f]),
            "kernels --trace 1 FILE: the file's summary")


def check_memtimeline_dir(tmp):
    d = os.path.join(tmp, "mem")
    os.mkdir(d)
    shutil.copy(MEM, d)
    a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    C.eq(te.run_tool(["memtimeline", MEM, a]).returncode, 0, "memtimeline FILE")
    C.eq(te.run_tool(["memtimeline", d, b]).returncode, 0, "memtimeline DIR")
    C.check(os.path.exists(a) and os.path.exists(b) and open(a).read() == open(b).read(),
            "memtimeline DIR: the same timeline as the file")


def main():
    for p in (DLRM, MEM):
        if not os.path.exists(p):
            C.skip(p, "missing")
            return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        C.section("a directory", check_directory, tmp)
        C.section("--rank / --trace on a file", check_rank_on_file, tmp)
        C.section("memtimeline of a directory", check_memtimeline_dir, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
