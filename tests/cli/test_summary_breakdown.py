#!/usr/bin/env python3
"""tracetool breakdown on a summary (issue 26) against breakdown of the database.

Each rank file of param/dlrm_8rank/kineto (and of hta/trace_filter, two ranks
of a 128-rank job) is summarised on its own (`tracetool summarize`), the
summaries are merged in two different orders (`tracetool merge`), and
`breakdown` of each merged summary (--format json, table, csv, markdown;
--by rank, step, stream; --rank; --html but for the page's title) must print
the bytes `breakdown` prints of the database `tracetool ingest DB DIR` makes.
Independently of tracetool, the GPU activities the summary's families count
equal the kernels, memcpys and memsets with a duration in the raw JSON.
What a summary cannot answer (--steps, --kernel-wait, --comm-pattern, the
filters, --by annotation) exits 3 with one line naming the option. A
missing `summarize` or `merge` fails the test.
"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import trace_expect as te  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
SHARED = os.environ.get("TT_SHARED", "../shared")
C = te.Checker("test_summary_breakdown")


check = C.check


def run(*args):
    p = subprocess.run([TRACETOOL, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def gpu_activities(path):
    """kernels, memcpys and memsets with ts and dur, read from the raw JSON"""
    doc = te.parse_json(te.read_bytes(path))
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    cats = {"kernel", "gpu_memcpy", "gpu_memset"}
    return sum(1 for e in evs if isinstance(e, dict) and e.get("ph") == "X"
               and e.get("cat") in cats and "dur" in e and "ts" in e)


def summaries(d, files):
    out = []
    for i, f in enumerate(files):
        s = os.path.join(d, f"s{i}.json")
        rc, _, err = run("summarize", "-o", s, f)
        check(rc == 0 and os.path.exists(s), f"summarize {f} ({rc}, {err.strip()})")
        out.append(s)
    return out


def merged(d, parts, name):
    m = os.path.join(d, name)
    rc, _, err = run("merge", "-o", m, *parts)
    check(rc == 0 and os.path.exists(m), f"merge -o {name} ({rc}, {err.strip()})")
    return m


def same(db, summ, args, what):
    ra, a, ea = run("breakdown", *args, db)
    rb, b, eb = run("breakdown", *args, summ)
    check(ra == 0 and a, f"{what}: breakdown {' '.join(args)} of the database ({ea.strip()})")
    check(rb == 0 and b == a, f"{what}: breakdown {' '.join(args)} of {os.path.basename(summ)}"
          f" prints the database's bytes ({rb}, {eb.strip()}, {len(b)} vs {len(a)} bytes)")


def check_set(rel, extra_rank):
    src = os.path.join(SHARED, "testdata", rel)
    if not os.path.isdir(src):
        C.skip(rel, "missing " + src)
        return
    files = sorted(os.path.join(src, f) for f in os.listdir(src))
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "db.sqlite")
        rc, _, err = run("ingest", "--quiet", db, src)
        check(rc == 0, f"{rel}: ingest ({err.strip()})")
        parts = summaries(d, files)
        if len(parts) != len(files) or not all(os.path.exists(p) for p in parts):
            return
        m1 = merged(d, parts, "m1.json")
        # another order, and in two levels: ((last half) + (first half))
        half = len(parts) // 2
        m2a = merged(d, list(reversed(parts[:half])), "m2a.json")
        m2b = merged(d, parts[half:][::-1], "m2b.json")
        m2 = merged(d, [m2b, m2a], "m2.json")
        for by in ("rank", "step", "stream"):
            for fmt in ("json", "table", "csv", "markdown"):
                same(db, m1, ["--by", by, "--format", fmt], rel)
            same(db, m2, ["--by", by, "--format", "json"], rel)
            same(db, m2, ["--by", by], rel)
        same(db, m1, ["--rank", str(extra_rank), "--format", "json"], rel)
        same(db, m2, ["--trace", "2", "--row-limit", "3"], rel)
        # the HTML page: the same but for its title (the input's name)
        ha, hb = os.path.join(d, "a.html"), os.path.join(d, "b.html")
        rc1, _, _ = run("breakdown", "--html", ha, db)
        rc2, _, e2 = run("breakdown", "--html", hb, m1)
        if rc1 == 0 and rc2 == 0:
            # (the page names its input by the file's name)
            ta = open(ha, encoding="utf-8").read().replace(os.path.basename(db), "INPUT")
            tb = open(hb, encoding="utf-8").read().replace(os.path.basename(m1), "INPUT")
            check(ta == tb, f"{rel}: --html of the summary is the database's page")
        else:
            check(False, f"{rel}: --html ({rc1}, {rc2}, {e2.strip()})")
        # independent: every GPU activity of the files is in the families
        rc, out, _ = run("breakdown", "--format", "json", m2)
        if rc == 0:
            doc = json.loads(out)
            want = sum(gpu_activities(f) for f in files)
            got = sum(f["count"] for f in doc["families"])
            check(got == want, f"{rel}: families count {got} == raw JSON's {want}")
            check(doc["traces"] == len(files), f"{rel}: {doc['traces']} traces")
        # what a summary cannot answer
        for args, word in ((["--steps", "1"], "--steps"), (["--kernel-wait", "1000"], "--kernel-wait"),
                           (["--comm-pattern", "Gemm"], "--comm-pattern"),
                           (["--name", "gemm"], "--name"), (["--time-range", "0:"], "--time-range"),
                           (["--by", "annotation"], "--by annotation")):
            rc, out, err = run("breakdown", *args, m1)
            check(rc == 3 and not out and err.count("\n") == 1 and word in err
                  and "m1.json" in err, f"{rel}: {' '.join(args)} on a summary refused ({rc}, {err!r})")
        rc, out, _ = run("breakdown", "--kernel-wait", "30000", "--format", "json", m1)
        rc0, out0, _ = run("breakdown", "--format", "json", db)
        check(rc == 0 and out == out0, f"{rel}: --kernel-wait 30000 (the default) on a summary")


def main():
    check_set("param/dlrm_8rank/kineto", 3)
    check_set("hta/trace_filter", 1)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
