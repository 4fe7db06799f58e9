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
                ["kernels", "--trace", "2"],
                # issue 25's commands: the same answer from the files and the database
                ["queue"], ["bandwidth"], ["collectives", "--per-call"], ["queue", "--rank", "5"],
                ["critical-path", "--rank", "3"], ["kernels", "--sequences", "2"],
                ["kernels", "--by", "op", "--rank", "1"]):
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


def opens_temp_db(args, tmp):
    """(exit code, whether a temporary database was opened), by strace"""
    rc, _, opened = te.traced_temp_db(args, tmp)
    return rc, opened


def check_no_database(tmp):
    """a directory, or --rank / --trace on a file, is read from the files:
    no temporary database (issue 24: it was made for averages and for info
    --trace FILE)"""
    files = sorted(os.path.join(DLRM, f) for f in os.listdir(DLRM))
    r = rank_of(files[3])
    runs = [["averages", DLRM], ["averages", "--rank", "3", DLRM], ["averages", "--trace", "2", DLRM],
            ["averages", "--rank", str(r), files[3]], ["info", DLRM], ["info", "--trace", "1", files[3]],
            ["kernels", DLRM], ["kernels", "--rank", "3", DLRM], ["kernels", "--by", "op", DLRM]]
    # the control: strace sees the file a command reads opened (a file that
    # needs the ingest's SQL passes, 'B' closed late, is read twice, no
    # database: tests/cli/test_relink.py)
    be = os.path.join(tmp, "be.json")
    ev = [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}]
    ev += [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 10 + 30 * i,
            "dur": 20} for i in range(300)]
    ev.append({"ph": "E", "pid": 1, "tid": 1, "ts": 100000})
    with open(be, "w") as f:
        json.dump({"traceEvents": ev}, f)
    rc, _, lines = te.traced_opens(["averages", be], tmp)
    if rc != 0 or not any(be in l for l in lines):
        C.skip("strace", "cannot see the openat calls here (rc %d)" % rc)
        return
    C.check(not any(te.TEMP_DB_OPEN.search(l) for l in lines),
            "'B' closed late: read twice, no temporary database")
    for args in runs:
        rc, opened = opens_temp_db(args, tmp)
        label = " ".join(os.path.basename(a) for a in args)
        C.eq(rc, 0, label + ": exit 0")
        C.check(not opened, label + ": no temporary database")


def check_stdin(tmp):
    """standard input (a pipe: it can be read only once) is copied to a
    spill file when an analysis may need to read it again, never ingested
    into a temporary database; the output is the file's"""
    f = sorted(os.path.join(DLRM, x) for x in os.listdir(DLRM))[0]
    out = os.path.join(tmp, "stdin.html")
    for args, src, same in ((["averages", "--format", "json", "-"], f,
                             ["averages", "--format", "json", f]),
                            (["memtimeline", "-", out], MEM, None),
                            (["breakdown", "-"], f, None), (["kernels", "--by", "op", "-"], f, None),
                            (["diff", "-", f], f, None),
                            (["export", "-", os.path.join(tmp, "stdin.json")], f, None)):
        rc, stdout, opened = te.traced_temp_db(args, tmp, stdin=src)
        label = " ".join(args[:-1] if args[0] in ("memtimeline", "diff", "export") else args)
        label += " < a pipe"
        C.eq(rc, 0, label + ": exit 0")
        C.check(not opened, label + ": no temporary database")
        if same:  # the path aside ("-")
            rows = lambda b: [t["rows"] for t in json.loads(b)["traces"]] if b else None
            C.check(rc == 0 and rows(stdout) == rows(te.run_tool(same).stdout),
                    label + ": the file's rows")
    # a trace whose rows need a second reading ('B' closed late): the copy
    # is read again, twice (it found standard input empty before)
    be = os.path.join(tmp, "bek.json")
    ev = [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0}]
    for i in range(300):
        t = 10 + 30 * i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm" if i % 2 else "aten::add",
                   "pid": 1, "tid": 1, "ts": t, "dur": 20})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 2, "dur": 5, "args": {"correlation": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % (i % 3), "pid": 0, "tid": 7,
                   "ts": t + 10, "dur": 3 + i % 4,
                   "args": {"correlation": i + 1, "stream": 7, "device": 0}})
    ev.append({"ph": "E", "pid": 1, "tid": 1, "ts": 100000})
    with open(be, "w") as fh:
        json.dump({"traceEvents": ev}, fh)
    for args in (["kernels", "--by", "op"], ["kernels", "--steps", "0-10"], ["breakdown"],
                 ["averages"], ["diff", "-", be], ["queue"], ["bandwidth"], ["critical-path"],
                 ["kernels", "--sequences", "2"], ["averages", "--under", "outer"]):
        piped = args + ([] if args[0] == "diff" else ["-"])
        plain = [be if a == "-" else a for a in piped]
        rc, stdout, opened = te.traced_temp_db(piped, tmp, stdin=be)
        want = te.run_tool(plain).stdout
        label = " ".join(piped) + " < a pipe ('B' closed late)"
        C.eq(rc, 0, label + ": exit 0")
        C.check(not opened, label + ": the copy read twice, no temporary database")
        # the label of the input aside ("-" against the file's path)
        C.check(stdout.replace(be.encode(), b"-") == want.replace(be.encode(), b"-"),
                label + ": the file's output")


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
        if shutil.which("strace"):
            C.section("no temporary database", check_no_database, tmp)
            C.section("standard input", check_stdin, tmp)
        else:
            C.skip("strace", "not installed (scripts/install-deps.sh installs it)")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
