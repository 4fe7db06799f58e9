#!/usr/bin/env python3
"""`import tracetool` (python/tracetool) against the CLI's --format json.

With the build's libtracetool.so (TRACETOOL_LIB) and the package from the
checkout (PYTHONPATH=python):
- averages and kernels of a real trace, breakdown of param/dlrm_8rank/kineto
  and of its database, info, queue, bandwidth, collectives, critical_path,
  crosscheck and memtimeline: every DataFrame cell equals the CLI's JSON
  (parsed here with json.loads and walked row by row), columns = its keys;
- diff of hta/trace_diff control/test: verdict and exit code as the CLI's,
  its metrics and rows DataFrames equal to its JSON;
- a missing file, a corrupt trace: tracetool.Error with the CLI's line and
  exit code; an unknown option: exit code 2;
- tracetool.open(DB).sql() equals sqlite3's own answer;
- the GIL is released during a call (another thread runs meanwhile);
- strace -f: importing tracetool and running every analysis starts no process
  (one execve, the interpreter's; every clone a thread).

pandas must be importable: this interpreter, else Debian's /usr/bin/python3,
else python3 on PATH (the test re-runs itself under the first that has it);
when none has it the test FAILS (apt-get install python3-pandas;
scripts/install-deps.sh).
"""
import json, math, os, re, shutil, sqlite3, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("python")
REPO = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(REPO, "python")
TT = te.tracetool_path()
LIB = os.environ.get("TRACETOOL_LIB") or os.path.join(os.path.dirname(TT), "libtracetool.so")
DATA = os.path.join(te.shared_dir(), "testdata")
TRACE = os.path.join(DATA, "kineto", "tb_plugin_2021-06", "worker0.1623143089861.pt.trace.json.gz")
RANKS = os.path.join(DATA, "param", "dlrm_8rank", "kineto")
ET0 = os.path.join(DATA, "param", "dlrm_8rank", "et", "dlrm_eg_0.json.gz")
DIFF = [os.path.join(DATA, "hta", "trace_diff", s) for s in ("control", "test")]


def pandas_python():
    seen = []
    for c in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if not c or c in seen or not os.path.exists(c):
            continue
        seen.append(c)
        if subprocess.run([c, "-c", "import pandas"], capture_output=True).returncode == 0:
            return c
    return None


def child_env():
    # in the ASan build, the sanitizer's runtime preloaded (te.sanitizer_preload_env)
    e = te.sanitizer_preload_env()
    e["PYTHONPATH"] = PYDIR + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["TRACETOOL_LIB"] = LIB
    return e


def cli(*args):
    p = subprocess.run([TT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = cli(*(list(args[:1]) + ["--format", "json"] + list(args[1:])))
    C.check(out, "tracetool %s: JSON printed (exit %d, %s)" % (" ".join(args[:1]), rc, err.strip()))
    return (json.loads(out) if out else None), rc


# ---------------------------------------------------------------- cell by cell

def same(cell, want):
    """a DataFrame cell holds the JSON value exactly"""
    import pandas as pd
    if want is None:
        return cell is None or (not isinstance(cell, (list, dict)) and pd.isna(cell))
    if isinstance(want, bool):
        return type(cell).__name__ in ("bool", "bool_") and bool(cell) == want
    if isinstance(want, int):
        # an integer column stays integer; a column mixing integers and
        # fractions is float64, where an integer must be exact (|v| <= 2^53)
        if isinstance(cell, float):
            return abs(want) <= 1 << 53 and cell == want
        return not pd.isna(cell) and int(cell) == want
    if isinstance(want, float):
        return not pd.isna(cell) and float(cell) == want
    if isinstance(want, (list, dict)):
        return cell == want
    return cell == want


def frame_equals(df, rows, columns, label):
    """df's columns == columns, and row i, column k == rows[i].get(k)"""
    if not C.eq(list(df.columns), columns, label + ": columns are the JSON keys"):
        return
    if not C.eq(len(df), len(rows), label + ": one row per JSON row"):
        return
    bad = []
    for i, r in enumerate(rows):
        for j, k in enumerate(columns):
            if not same(df.iat[i, j], r.get(k)):
                bad.append("row %d %s: %r != JSON %r" % (i, k, df.iat[i, j], r.get(k)))
    C.check(not bad and len(rows) > 0, label + ": every cell equals the JSON (%d rows x %d columns)"
            % (len(rows), len(columns)), "; ".join(bad[:5]) or "no rows")


def keys_in_order(rows, first=()):
    out = list(first)
    for r in rows:
        for k in r:
            if k not in out:
                out.append(k)
    return out


def flatten(doc, outer, keep):
    """the per-trace tables as one list of rows, each with its parent's keys"""
    rows = []
    for p in doc[outer]:
        for r in p["rows"]:
            x = {k: p.get(k) for k in keep}
            x.update(r)
            rows.append(x)
    return rows


def result_equals(res, doc, label):
    """a Result: each list of objects a DataFrame, every other key its value"""
    for k, v in doc.items():
        if isinstance(v, list) and all(isinstance(x, dict) for x in v):
            if v:
                frame_equals(getattr(res, k), v, keys_in_order(v), "%s .%s" % (label, k))
            else:
                C.eq(len(getattr(res, k)), 0, "%s .%s: empty" % (label, k))
        else:
            C.eq(getattr(res, k), v, "%s .%s" % (label, k))


# ---------------------------------------------------------------- the checks

def averages_kernels(tracetool):
    doc, _ = cli_json("averages", TRACE)
    df = tracetool.averages(TRACE)
    keep = ["trace_id", "path", "rank"]
    rows = flatten(doc, "traces", keep)
    frame_equals(df, rows, keys_in_order(rows, keep), "averages")
    doc, _ = cli_json("averages", "--group-by-shape", "--sort-by", "self_cpu_time_total",
                      "--row-limit", "20", "--time-range", "1623142623600000:", TRACE)
    df = tracetool.averages(TRACE, group_by_shape=True, sort_by="self_cpu_time_total", row_limit=20,
                            time_range="1623142623600000:")
    rows = flatten(doc, "traces", keep)
    frame_equals(df, rows, keys_in_order(rows, keep), "averages with options")
    for by in ("name", "stream"):
        doc, _ = cli_json("kernels", "--by", by, TRACE)
        df = tracetool.kernels(TRACE, by=by)
        keep = ["trace_id", "path", "what", "group_by"]
        rows = flatten(doc, "summaries", keep)
        frame_equals(df, rows, keys_in_order(rows, keep), "kernels --by " + by)
        C.eq(df.attrs["summaries"], [{k: v for k, v in s.items() if k != "rows"} for s in doc["summaries"]],
             "kernels --by %s: attrs['summaries'] are the tables' own keys" % by)


def breakdown_ranks(tracetool, tmp):
    db = os.path.join(tmp, "ranks.db")
    rc, _, err = cli("ingest", "--quiet", db, RANKS)
    C.eq(rc, 0, "ingest dlrm_8rank (%s)" % err.strip())
    for inp, label in ((RANKS, "breakdown of dlrm_8rank"), (db, "breakdown of its database")):
        doc, _ = cli_json("breakdown", inp)
        result_equals(tracetool.breakdown(inp), doc, label)
    doc, _ = cli_json("breakdown", "--by", "step", RANKS)
    result_equals(tracetool.open(db).breakdown(by="step"), doc, "open(db).breakdown(by='step')")
    for cmd, fn, extra in (("info", tracetool.info, []), ("queue", tracetool.queue, []),
                           ("bandwidth", tracetool.bandwidth, []),
                           ("collectives", tracetool.collectives, ["--per-call"]),
                           ("critical-path", tracetool.critical_path, ["--rank", "3"])):
        doc, _ = cli_json(cmd, *(extra + [db]))
        opts = {"per_call": True} if cmd == "collectives" else ({"rank": 3} if cmd == "critical-path" else {})
        result_equals(fn(db, **opts), doc, cmd + " of the database")
    # .sql: Python's sqlite3 on the same file
    con = sqlite3.connect(db)
    q = "SELECT id, path, rank FROM traces ORDER BY id"
    want = [dict(zip(("id", "path", "rank"), r)) for r in con.execute(q)]
    con.close()
    with tracetool.open(db) as d:
        frame_equals(d.sql(q), want, ["id", "path", "rank"], "open(db).sql")
        got = d.sql("SELECT count(*) AS n FROM traces WHERE rank >= ?", (4,))
        C.eq(int(got.iat[0, 0]), sum(1 for r in want if r["rank"] is not None and r["rank"] >= 4),
             "open(db).sql with a parameter")
        try:
            d.sql("DELETE FROM traces")
            C.check(False, "open(db).sql is read-only")
        except tracetool.Error as e:
            C.check("readonly" in e.message.replace("-", "").replace(" ", ""),
                    "open(db).sql is read-only", e.message)


def diff_and_more(tracetool, tmp):
    doc, rc = cli_json("diff", *DIFF)
    d = tracetool.diff(*DIFF)
    C.eq(d.verdict, doc["verdict"], "diff: verdict as the CLI's")
    C.eq(d.exit_code, rc, "diff: exit code as the CLI's (%d)" % rc)
    for k in ("metrics", "rows"):
        frame_equals(getattr(d, k), doc[k], keys_in_order(doc[k]), "diff ." + k)
    doc, rc = cli_json("diff", "--allow-env-mismatch", *DIFF)
    d = tracetool.diff(DIFF[0], DIFF[1], allow_env_mismatch=True)
    C.eq((d.verdict, d.exit_code), (doc["verdict"], rc), "diff --allow-env-mismatch: verdict, exit code")
    kin = te.trace_files(RANKS)[0]
    doc, rc = cli_json("crosscheck", "--no-store", ET0, kin)
    x = tracetool.crosscheck(ET0, kin, no_store=True)
    result_equals(x, doc, "crosscheck")
    C.eq(x.exit_code, rc, "crosscheck: exit code")
    rc, out, err = cli("memtimeline", TRACE, "-")
    times, sizes = json.loads(out)
    m = tracetool.memtimeline(TRACE)
    C.check(list(m.index) == times and m.values.tolist() == sizes and m.index.name == "time_us"
            and list(m.columns)[-1] == "Unknown" and m.shape[1] == 9,
            "memtimeline: index = times, one column per category, values = sizes",
            "%s %s" % (m.shape, list(m.columns)))


def errors(tracetool, tmp):
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": ')
    for inp, label in ((os.path.join(tmp, "missing.json"), "a missing file"), (bad, "a corrupt trace")):
        rc, _, err = cli("averages", "--format", "json", inp)
        try:
            tracetool.averages(inp)
            C.check(False, label + ": tracetool.Error raised")
        except tracetool.Error as e:
            C.eq(e.exit_code, rc, label + ": the CLI's exit code")
            C.eq(e.message, err.strip(), label + ": the CLI's line")
            C.check(isinstance(e, Exception) and str(e) == e.message, label + ": str(e) is the line")
    try:
        tracetool.kernels(TRACE, no_such_option=True)
        C.check(False, "an unknown option: tracetool.Error")
    except tracetool.Error as e:
        C.check(e.exit_code == 2 and "no_such_option" in e.message, "an unknown option: exit code 2, named",
                repr(e))
    try:
        tracetool.averages(TRACE, row_limit="many")
        C.check(False, "a bad value: tracetool.Error")
    except tracetool.Error as e:
        C.eq(e.exit_code, 2, "a bad value: exit code 2 (%s)" % e.message)


def gil(tracetool):
    import ctypes
    from tracetool import _lib
    C.check(type(_lib.load()) is ctypes.CDLL, "loaded with ctypes.CDLL (the GIL is released per call)")
    state = {"inside": False, "ticks": 0, "stop": False}

    def ticker():
        while not state["stop"]:
            if state["inside"]:
                state["ticks"] += 1

    t = threading.Thread(target=ticker)
    t.start()
    state["inside"] = True
    tracetool.averages(TRACE)
    state["inside"] = False
    state["stop"] = True
    t.join()
    C.check(state["ticks"] > 10000, "another thread ran during tracetool.averages", state["ticks"])


STRACED = """
import tracetool as t
R, T, E, K = %r, %r, %r, %r
t.info(R); t.averages(T); t.kernels(T); t.breakdown(R); t.memtimeline(T); t.queue(R)
t.bandwidth(R); t.collectives(R); t.critical_path(R, rank=0); t.crosscheck(E, K, no_store=True)
t.diff(R, R)
print('done')
"""


def no_subprocess(py, tmp):
    log = os.path.join(tmp, "strace.log")
    code = STRACED % (RANKS, TRACE, ET0, te.trace_files(RANKS)[0])
    env = te.strace_env()
    env.update(child_env())
    p = subprocess.run(["strace", "-f", "-e", "trace=execve,execveat,clone,clone3,fork,vfork", "-o", log,
                        py, "-c", code], capture_output=True, text=True, env=env)
    if not C.eq(p.returncode, 0, "strace python3 -c 'import tracetool; every analysis' (%s)"
                % p.stderr.strip()[-400:]):
        return
    C.check("done" in p.stdout, "the traced run finished")
    lines = open(log).read().splitlines()
    execs = [ln for ln in lines if re.search(r"\bexecve(at)?\(", ln) and "resumed" not in ln]
    C.check(len(execs) == 1 and py in execs[0], "one execve: the interpreter's own", execs[:5])
    forks = [ln for ln in lines if re.search(r"\b(v?fork)\(", ln)]
    C.eq(forks, [], "no fork / vfork")
    clones = [ln for ln in lines if re.search(r"\bclone3?\(", ln) and "resumed>" not in ln]
    procs = [ln for ln in clones if "CLONE_THREAD" not in ln]
    C.check(not procs, "every clone is a thread (CLONE_THREAD), none a process (%d clones)" % len(clones),
            procs[:3])


def main_checks(py, tmp):
    import tracetool
    C.section("averages and kernels", averages_kernels, tracetool)
    C.section("breakdown, the database, sql", breakdown_ranks, tracetool, tmp)
    C.section("diff, crosscheck, memtimeline", diff_and_more, tracetool, tmp)
    C.section("errors", errors, tracetool, tmp)
    C.section("the GIL", gil, tracetool)
    C.section("no subprocess", no_subprocess, py, tmp)


def main():
    try:
        import pandas  # noqa: F401
    except ImportError:
        py = pandas_python()
        if not C.check(py, "an interpreter with pandas (this one, /usr/bin/python3, python3): "
                       "apt-get install python3-pandas"):
            return C.finish()
        return subprocess.run([py, os.path.abspath(__file__)] + sys.argv[1:], env=child_env()).returncode
    if te.sanitizer_preload_env().get("LD_PRELOAD", "") != os.environ.get("LD_PRELOAD", ""):
        # pandas is here, but the ASan build's library needs its runtime first
        return subprocess.run([sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                              env=child_env()).returncode
    os.environ.update(child_env())
    sys.path.insert(0, PYDIR)
    missing = [p for p in (TRACE, RANKS, ET0) + tuple(DIFF) if not os.path.exists(p)]
    if missing:
        C.skip("shared testdata", "missing: " + ", ".join(missing))
        return C.finish()
    if not C.check(os.path.exists(LIB), "libtracetool.so built (%s)" % LIB):
        return C.finish()
    if not C.check(shutil.which("strace"), "strace installed (scripts/install-deps.sh)"):
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-test-python-")
    try:
        main_checks(sys.executable, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
