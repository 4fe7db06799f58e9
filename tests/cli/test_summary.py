#!/usr/bin/env python3
"""tracetool summarize and merge (docs/SUMMARY.md) on param/dlrm_8rank.

Each rank's Kineto file is summarised on its own; the summaries are merged
in two different orders and trees, which must give the same bytes (and the
same as summarising the whole directory, or its database). Every analysis
that takes a summary must print, for the merged summary, exactly what it
prints for the database ingested from the same directory (the expected
output is the database path's, which shares no code with the summary's
reading). A command that needs events refuses a summary with one line and
exit code 3. The file itself is checked from the standard library: its
schema, one trace per rank file, each content hash the database's.
"""
import gzip, json, os, shutil, sqlite3, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
SHARED = os.environ.get("TT_SHARED", "../shared")
DLRM = os.path.join(SHARED, "testdata", "param", "dlrm_8rank", "kineto")
C = te.Checker("test_summary")

# The analyses on a summary, each compared with the database's output: the
# command and its options. Each helper adds its own line as its section
# lands (the lead, at merge), guarded by the section being in the summary:
#   ("averages", []), ("averages", ["--group-by-shape"]), ...   (section "averages")
#   ("kernels", ["--format", "json"]), ("kernels", ["--by", "stream"]), ...  ("kernels")
#   ("breakdown", ["--format", "json"]), ("breakdown", ["--by", "step"]), ...  ("breakdown")
#   diff: `diff SUMMARY SUMMARY` against `diff DB DB`                      ("diff")
COMPARED = [
    ("info", "info", []),
    ("info", "info", ["--format", "json"]),
    ("info", "info", ["--format", "csv"]),
    ("info", "info", ["--format", "markdown"]),
    ("info", "info", ["--trace", "3"]),
    ("info", "info", ["--trace", "8", "--format", "json"]),
    # issue 26's must-show: the merged summary prints the database's bytes
    # (each analysis's own test, test_summary_<analysis>.py, covers the rest)
    ("averages", "averages", ["--format", "json"]),
    ("kernels", "kernels", ["--format", "json"]),
    ("breakdown", "breakdown", ["--format", "json"]),
    ("diff", "diff", ["--format", "json"]),
]


check = C.check


def run(*args):
    return subprocess.run([TRACETOOL, *args], capture_output=True)


def ok(*args):
    p = run(*args)
    if p.returncode != 0:
        print("FAIL", " ".join(args), p.returncode, p.stderr.decode(errors="replace"))
        sys.exit(1)
    return p.stdout


def doc(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        return f.read()


def main():
    if not os.path.isdir(DLRM):
        print("SKIP: no", DLRM)
        sys.exit(77)
    files = sorted(f for f in os.listdir(DLRM) if f.endswith(".json.gz"))
    tmp = tempfile.mkdtemp(prefix="tt_sum_")
    try:
        # the directory as the user names it; the walk's paths are DLRM/name
        db = os.path.join(tmp, "d8.db")
        ok("ingest", "--quiet", db, DLRM)
        sums = []
        for i, f in enumerate(files):
            out = os.path.join(tmp, "s%d.summary.json%s" % (i, ".gz" if i % 2 else ""))
            ok("summarize", "-o", out, os.path.join(DLRM, f))
            sums.append(out)
        m1, m2 = os.path.join(tmp, "m1.json.gz"), os.path.join(tmp, "m2.json")
        ok("merge", "-o", m1, *sums)
        # another order, as a tree: (7 6 5 4) (3 2) (1 0), then the three
        t1, t2, t3 = (os.path.join(tmp, "t%d.json" % k) for k in (1, 2, 3))
        ok("merge", "-o", t1, *reversed(sums[4:]))
        ok("merge", "-o", t2, sums[3], sums[2])
        ok("merge", "-o", t3, sums[1], sums[0])
        ok("merge", "-o", m2, t3, t1, t2)
        check(doc(m1) == doc(m2), "two merge trees give the same bytes")
        # merged with itself, and with a part of itself: unchanged
        m3 = os.path.join(tmp, "m3.json")
        ok("merge", "-o", m3, m1, t2, m2)
        check(doc(m3) == doc(m2), "idempotent")
        # a directory of summaries
        sd = os.path.join(tmp, "sd")
        os.mkdir(sd)
        for s in sums:
            shutil.copy(s, sd)
        m4 = os.path.join(tmp, "m4.json")
        ok("merge", "-o", m4, sd)
        check(doc(m4) == doc(m2), "merge of a directory")
        # the directory and its database summarised at once: the same
        whole, fromdb = os.path.join(tmp, "whole.json"), os.path.join(tmp, "db.json")
        ok("summarize", "-o", whole, DLRM)
        ok("summarize", "-o", fromdb, db)
        check(doc(whole) == doc(m2), "summarize DIR == merge of its files' summaries")
        check(doc(fromdb) == doc(m2), "summarize DB == merge of its files' summaries")

        # the file, from the standard library
        d = json.loads(doc(m2))
        check(d["schema"] == "tracetool.summary/1", "schema")
        check([t["path"] for t in d["traces"]] == [os.path.join(DLRM, f) for f in files],
              "one trace per file, by path")
        con = sqlite3.connect(db)
        hashes = dict(con.execute("SELECT path, content_hash FROM traces"))
        ranks = dict(con.execute("SELECT path, rank FROM traces"))
        con.close()
        for t in d["traces"]:
            check(t["content_hash"] == hashes.get(t["path"]), "content hash of " + t["path"])
            check(t["rank"] == ranks.get(t["path"]), "rank of " + t["path"])

        # the analyses: the database's output, byte for byte
        for section, command, opts in COMPARED:
            check(all(section in t for t in d["traces"]),
                  "every trace of the merged summary has its %s section" % section)
            if command == "diff":  # a side against itself: the same report,
                # but for the name of BASE (the database's path, the summary's
                # traces' directory)
                a = run(command, *opts, db, db)
                b = run(command, *opts, m1, db)
                a.stdout = a.stdout.replace(db.encode(), b"SIDE", 1)
                b.stdout = b.stdout.replace(DLRM.encode(), b"SIDE", 1)
            else:
                a = run(command, *opts, db)
                b = run(command, *opts, m1)
            check(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout,
                  "%s %s: summary prints what the database prints" % (command, " ".join(opts)))
        # --trace/--rank select from a summary as from a database
        sel = os.path.join(tmp, "sel.json")
        ok("summarize", "--rank", "5", "-o", sel, m1)
        d5 = json.loads(doc(sel))
        check([t["rank"] for t in d5["traces"]] == [5], "summarize --rank 5 of a summary")
        check(run("info", "--trace", "9", m1).returncode == 4, "info --trace 9: no such trace")

        # commands that need events refuse a summary: one line, exit 3
        for args in (["queue", m1], ["bandwidth", m1], ["collectives", m1],
                     ["critical-path", m1], ["export", m1, os.path.join(tmp, "x.json")],
                     ["memtimeline", m1, os.path.join(tmp, "x.json")],
                     ["ingest", os.path.join(tmp, "x.db"), m1], ["crosscheck", m1]):
            p = run(*args)
            err = p.stderr.decode()
            check(p.returncode == 3 and err.count("\n") == 1 and m1 in err and
                  "a summary holds no events: `%s` needs the traces" % args[0] in err,
                  "%s refuses a summary: %d %r" % (args[0], p.returncode, err))
        check(not os.path.exists(os.path.join(tmp, "x.json")) and
              not os.path.exists(os.path.join(tmp, "x.db")), "nothing written on refusal")

        # merge refuses the same path with other contents, naming both files
        bad = os.path.join(tmp, "bad.json")
        d0 = json.loads(doc(sums[0]))
        d0["traces"][0]["content_hash"] = "0" * 32
        with open(bad, "w") as f:
            json.dump(d0, f)
        p = run("merge", "-o", os.path.join(tmp, "y.json"), sums[0], bad)
        err = p.stderr.decode()
        check(p.returncode == 3 and sums[0] in err and bad in err, "conflict: %r" % err)
        check(not os.path.exists(os.path.join(tmp, "y.json")), "nothing written on conflict")
        # a newer schema: refused, exit 3
        d0["schema"] = "tracetool.summary/2"
        with open(bad, "w") as f:
            json.dump(d0, f)
        p = run("info", bad)
        check(p.returncode == 3 and b"newer" in p.stderr, "newer schema refused")
        # the default output name, in the current directory
        p = subprocess.run([os.path.abspath(TRACETOOL), "summarize", os.path.join(DLRM, files[0])],
                           cwd=tmp, capture_output=True)
        want = os.path.join(tmp, files[0][:-len(".json.gz")] + ".summary.json.gz")
        check(p.returncode == 0 and os.path.exists(want), "default output " + want)
        check(run("merge", m1).returncode == 2, "merge without -o: usage")
    finally:
        shutil.rmtree(tmp)
    sys.exit(C.finish())


if __name__ == "__main__":
    main()
