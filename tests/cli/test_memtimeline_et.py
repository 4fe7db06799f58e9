#!/usr/bin/env python3
"""tracetool memtimeline with an Execution Trace (--et, or ingested beside the
trace in a database).

The fixture (tests/fixtures/et_memory/make_et_memory.py) is one toy training
step whose blocks each have a role fixed by the scenario: the activation read
by the backward, the gradient fed to AccumulateGrad, a backward intermediate,
a temporary, the optimizer's state, and a block only the forward reads. With
the ET every block must get its role; without it, the documented heuristics'
answers (three of them differ). Errors: a file that is not an ET, an ET of
another program, --et with a database; none may leave an output behind.
"""
import gzip, json, os, random, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

SHARED = te.shared_dir()
MAKE = os.path.join(HERE, "..", "fixtures", "et_memory", "make_et_memory.py")
C = te.Checker("memtimeline_et")
check = C.check

CREATE = 2  # torch's Action.CREATE in the raw export


def run(*args):
    p = te.run_tool(args)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def created(path):
    """{ts_ns: category name} of the CREATE rows of a .raw.json.gz"""
    with gzip.open(path) as f:
        rows = json.load(f)
    return {r[0]: r[3] for r in rows if r[1] == CREATE}


def variant(et, out):
    """the same ET written otherwise: nodes out of id order, tensors after
    the first nested in lists and objects, decoys that are no tensor (five
    values, a real id, a number for the device); SQLite's json_tree finds
    the same tensors, so every block keeps its role"""
    d = json.load(open(et))
    for n in d["nodes"]:
        for k in ("inputs", "outputs"):
            v = n.get(k) or []
            if len(v) >= 2:
                v = [v[0], [v[1], {"more": v[2:]}]]
            n[k] = v + [[1, 2, 3, 4, 5], [1.5, 99, 0, 1, 4, "cuda:0"], [7, 98, 0, 1, 4, 0]]
    random.Random(7).shuffle(d["nodes"])
    with open(out, "w") as f:
        json.dump(d, f)


def check_files_like_db(d, trace, et, roles, want_et):
    """FILE --et ET reads the files (no temporary database) and gives what
    a database of both gives, byte for byte, also for an ET written
    otherwise and for a trace on standard input"""
    et2 = os.path.join(d, "et2.json")
    variant(et, et2)
    for name, e in (("the ET", et), ("the ET written otherwise", et2)):
        db = os.path.join(d, "pair.db")
        if os.path.exists(db):
            os.remove(db)
        rc, _, err = run("ingest", "-q", db, trace, e)
        check(rc == 0, f"{name}: ingest ({err.strip()})")
        a, b = os.path.join(d, "f.raw.json.gz"), os.path.join(d, "d.raw.json.gz")
        got = roles(f"{name}: FILE --et", a, trace, "--et", e)
        check(got == want_et, f"{name}: FILE --et: every block gets its role ({got})")
        roles(f"{name}: DB", b, db)
        check(os.path.exists(a) and os.path.exists(b) and
              gzip.open(a).read() == gzip.open(b).read(),
              f"{name}: FILE --et and the database give the same timeline")
    if shutil.which("strace"):
        out = os.path.join(d, "s.raw.json.gz")
        rc, _, opened = te.traced_temp_db(["memtimeline", trace, "--et", et2, out], d)
        check(rc == 0 and not opened, f"FILE --et: no temporary database (rc {rc})")
        rc, _, opened = te.traced_temp_db(["memtimeline", "-", "--et", et2, out], d, stdin=trace)
        check(rc == 0 and not opened, f"- --et (a pipe): no temporary database (rc {rc})")
        check(rc == 0 and {t: c for t, c in created(out).items()} ==
              {t: c for t, c in created(os.path.join(d, "f.raw.json.gz")).items()},
              "- --et (a pipe): the file's timeline")
    else:
        C.skip("strace", "not installed (scripts/install-deps.sh installs it)")


def main():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, MAKE, d], check=True)
        trace, et = os.path.join(d, "trace.json"), os.path.join(d, "et.json")
        exp = json.load(open(os.path.join(d, "expected.json")))
        cats = exp["categories"]
        want_et = {b["ts_ns"]: b["with_et"] for b in exp["blocks"]}
        want_plain = {b["ts_ns"]: b["trace_only"] for b in exp["blocks"]}
        check(want_et != want_plain, "the fixture has blocks only the ET can tell")

        def roles(label, out, *args):
            """{ts_ns: category} of memtimeline ARGS OUT, or None when it fails"""
            rc, _, err = run("memtimeline", *args, out)
            check(rc == 0, f"{label} exits 0 ({err.strip()})")
            if rc != 0:
                return None
            return {t: cats[c] for t, c in created(out).items()}

        # file input with --et
        got = roles("--et", os.path.join(d, "with_et.raw.json.gz"), trace, "--et", et)
        if got is not None:
            check(got == want_et, f"--et: every block gets its role\n  got  {got}\n  want {want_et}")

        # the same trace alone: the heuristics
        got = roles("trace alone", os.path.join(d, "plain.raw.json.gz"), trace)
        if got is not None:
            check(got == want_plain, f"trace alone: heuristics\n  got  {got}\n  want {want_plain}")

        # a database holding both (ingest joins them)
        db = os.path.join(d, "both.db")
        rc, _, err = run("ingest", "-q", db, trace, et)
        check(rc == 0, f"ingest trace + ET ({err.strip()})")
        got = roles("DB with ET", os.path.join(d, "db.raw.json.gz"), db)
        if got is not None:
            check(got == want_et, f"DB with ET: every block gets its role ({got})")
        # --no-categories still wins
        out = os.path.join(d, "nocat.raw.json.gz")
        rc, _, err = run("memtimeline", "--no-categories", db, out)
        check(rc == 0 and set(created(out).values()) == {cats.index("Unknown")},
              f"--no-categories with an ET: all Unknown ({err.strip()})")

        # the HTML peak table names the ET's rule
        html = os.path.join(d, "t.html")
        rc, _, err = run("memtimeline", trace, "--et", et, html)
        check(rc == 0, f"--et to .html ({err.strip()})")
        if rc == 0:
            page = open(html, encoding="utf-8").read()
            check("GRADIENT (ET)" in page and "ACTIVATION (ET)" in page,
                  "the HTML peak table names the ET rules")

        check_files_like_db(d, trace, et, roles, want_et)

        # errors, and nothing half-written left behind
        for name, et_arg, code, words in (
                ("not an ET", os.path.join(SHARED, "testdata", "hta", "rank_non_gpu",
                                           "rank_non_gpu.json.gz"), 3, "Execution Trace"),
                ("an ET of another program", os.path.join(SHARED, "testdata", "param",
                                                          "resnet_pair", "resnet_et.json.gz"),
                 3, "does not match"),
                ("a missing ET", os.path.join(d, "nope.json"), 4, "nope.json")):
            if not os.path.exists(et_arg) and code != 4:
                continue
            out = os.path.join(d, "err.json")
            rc, _, err = run("memtimeline", trace, "--et", et_arg, out)
            check(rc == code and err.startswith("tracetool: ") and err.count("\n") == 1
                  and words in err, f"{name}: exit {code}, one line naming it ({rc}, {err!r})")
            left = [f for f in os.listdir(d) if f.startswith("err.json")]
            check(not left, f"{name}: no output left behind ({left})")
        rc, _, err = run("memtimeline", db, "--et", et, os.path.join(d, "u.json"))
        check(rc == 2 and "ingest" in err, f"--et with a database: usage error ({rc}, {err!r})")

    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
