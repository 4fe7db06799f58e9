#!/usr/bin/env python3
"""python3 -m tracetool.dask (python/tracetool/dask.py) against the serial path.

With 2 local Dask workers over param/dlrm_8rank/kineto:
- the merged summary equals `tracetool merge` of `tracetool summarize` of each
  file run one after another (its bytes, decompressed), with the default
  fan-in (one merge) and with --fan-in 3 (a tree of merges);
- `tracetool info/averages/kernels/breakdown --format json` of it print what they
  print for the ingested 8-rank database;
- a corrupt rank file among them: one stderr line naming its path, the others
  merged (equal to the serial merge of those), exit 1; all corrupt: exit 3 and
  no output;
- a missing tracetool, an unreachable --scheduler, --scheduler without
  --workdir: exit 2, a clear message, no output;
- on a terminal, an "N of M files" progress line.

Dask runs in an interpreter that has Dask distributed (this one, else Debian's
/usr/bin/python3, else python3 on PATH); when none has it the test FAILS (CI
installs python3-distributed; scripts/install-deps.sh).
"""
import gzip, os, pty, re, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("dask")
REPO = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(REPO, "python")
TT = te.tracetool_path()
RANKS = os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank", "kineto")


def dask_python():
    seen = []
    for c in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if not c or c in seen or not os.path.exists(c):
            continue
        seen.append(c)
        if subprocess.run([c, "-c", "import distributed"], capture_output=True).returncode == 0:
            return c
    return None


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def tt(*args):
    p = subprocess.run([TT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def dask(py, *args):
    p = subprocess.run([py, "-m", "tracetool.dask", "--tracetool", TT] + list(args),
                       capture_output=True, text=True, env=env(), stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def content(path):
    with open(path, "rb") as f:
        b = f.read()
    return gzip.decompress(b) if b[:2] == b"\x1f\x8b" else b


def serial(files, tmp, name):
    """tracetool summarize of each file, one after another, then one tracetool merge"""
    d = tempfile.mkdtemp(dir=tmp)
    outs = []
    for i, f in enumerate(files):
        o = os.path.join(d, "%03d.summary.json.gz" % i)
        rc, _, err = tt("summarize", "-o", o, f)
        if not C.eq(rc, 0, "serial summarize %s (%s)" % (f, err.strip())):
            return None
        outs.append(o)
    o = os.path.join(tmp, name)
    rc, _, err = tt("merge", "-o", o, *outs)
    return o if C.eq(rc, 0, "serial merge (%s)" % err.strip()) else None


def equal_results(summary, db, label):
    for cmd in (["info"], ["averages"], ["kernels"], ["breakdown"]):
        a = tt(*cmd, "--format", "json", summary)
        b = tt(*cmd, "--format", "json", db)
        C.eq(a[0], 0, "%s: %s of the summary exits 0 (%s)" % (label, cmd[0], a[2].strip()))
        C.check(a[1] == b[1] and b[1], "%s: %s --format json of the summary == of the database"
                % (label, cmd[0]), "%d vs %d bytes" % (len(a[1]), len(b[1])))


def read_tty(fd):
    """one chunk of what the terminal got; b"" once the child has closed it (EIO)"""
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


def on_tty(args):
    """(exit code, what the terminal got) with stderr on a pty"""
    master, slave = pty.openpty()
    with subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL,
                          env=env()) as p:
        os.close(slave)
        got = b"".join(iter(lambda: read_tty(master), b""))
        os.close(master)
        p.wait(timeout=600)
    return p.returncode, got


def corrupt(path):
    with gzip.open(path, "wb") as f:
        f.write(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": ')


def main_checks(py, tmp):
    files = te.trace_files(RANKS)
    C.eq(len(files), 8, "dlrm_8rank has 8 rank files")
    db = os.path.join(tmp, "ranks.db")
    rc, _, err = tt("ingest", "--quiet", db, RANKS)
    C.eq(rc, 0, "ingest the 8 ranks (%s)" % err.strip())
    ref = serial(files, tmp, "serial.summary.json.gz")
    if not ref:
        return
    for fan in ([], ["--fan-in", "3"]):
        label = "dask --workers 2 " + " ".join(fan)
        out = os.path.join(tmp, "dask%d.summary.json.gz" % len(fan))
        rc, o, err = dask(py, "--workers", "2", *fan, "-o", out, RANKS)
        C.eq(rc, 0, "%s: exit 0 (%s)" % (label, err.strip()))
        C.eq(err, "", "%s: nothing on stderr (not a terminal)" % label)
        if not C.check(os.path.exists(out), label + ": output written"):
            continue
        C.check(content(out) == content(ref), label + ": merged summary == serial summarize + merge")
        equal_results(out, db, label)

    # a corrupt rank file among 3 good ones: reported with its path, the others merged
    d = os.path.join(tmp, "some_bad")
    os.mkdir(d)
    for f in files[:3]:
        shutil.copy(f, d)
    bad = os.path.join(d, "worker9_step_12.pt.trace.json.gz")
    corrupt(bad)
    good = [f for f in te.trace_files(d) if f != bad]
    ref3 = serial(good, tmp, "serial3.summary.json.gz")
    out = os.path.join(tmp, "some_bad.summary.json.gz")
    rc, _, err = dask(py, "--workers", "2", "-o", out, d)
    C.eq(rc, 1, "a corrupt file among 4: exit 1 (%s)" % err.strip())
    lines = [ln for ln in err.splitlines() if ln.startswith("tracetool.dask: " + bad + ": ")]
    C.check(len(lines) == 1 and len(lines[0]) > len("tracetool.dask: " + bad + ": ") + 3,
            "a corrupt file: one line 'tracetool.dask: PATH: message'", err)
    C.check(not any(g in err for g in good), "the good files are not reported", err)
    C.check(os.path.exists(out) and ref3 and content(out) == content(ref3),
            "a corrupt file: the other 3 merged (== serial merge of them)")

    # every file corrupt: exit 3, nothing written
    d2 = os.path.join(tmp, "all_bad")
    os.mkdir(d2)
    corrupt(os.path.join(d2, "a.json.gz"))
    corrupt(os.path.join(d2, "b.json.gz"))
    out = os.path.join(tmp, "all_bad.summary.json")
    rc, _, err = dask(py, "--workers", "2", "-o", out, d2)
    C.eq(rc, 3, "every file corrupt: exit 3 (%s)" % err.strip())
    C.check(not os.path.exists(out), "every file corrupt: no output")
    C.check(err.count(d2 + "/") >= 2 and "not written" in err, "every file corrupt: each named", err)

    # progress on a terminal (the 3 good files and the corrupt one)
    out = os.path.join(tmp, "tty.summary.json")
    rc, got = on_tty([py, "-m", "tracetool.dask", "--workers", "2", "--tracetool", TT, "-o", out, d])
    C.eq(rc, 1, "on a terminal: exit 1")
    C.check(re.search(rb"\rtracetool\.dask: 4 of 4 files", got), "on a terminal: 'N of M files' drawn",
            repr(got[:300]))
    C.check(("tracetool.dask: %s: " % bad).encode() in got, "on a terminal: the failure reported")
    C.check(os.path.exists(out), "on a terminal: output written")


def error_checks(py, tmp):
    out = os.path.join(tmp, "err.summary.json")
    p = subprocess.run([py, "-m", "tracetool.dask", "--tracetool", "/nonexistent/tracetool", "-o", out,
                        RANKS], capture_output=True, text=True, env=env())
    C.eq(p.returncode, 2, "missing tracetool: exit 2")
    C.check("/nonexistent/tracetool" in p.stderr and p.stderr.count("\n") == 1,
            "missing tracetool: one line naming it", p.stderr)
    e = env()
    e["PATH"] = "/nonexistent"
    e.pop("TRACETOOL", None)
    p = subprocess.run([py, "-m", "tracetool.dask", "-o", out, RANKS], capture_output=True, text=True,
                       env=e)
    C.eq(p.returncode, 2, "no tracetool on PATH: exit 2")
    C.check("tracetool not found" in p.stderr, "no tracetool on PATH: said", p.stderr)
    rc, _, err = dask(py, "--scheduler", "tcp://127.0.0.1:1", "--workdir", tmp, "--connect-timeout", "2",
                      "-o", out, RANKS)
    C.eq(rc, 2, "unreachable scheduler: exit 2")
    C.check("cannot reach the Dask scheduler at tcp://127.0.0.1:1" in err and err.count("\n") == 1,
            "unreachable scheduler: one clear line", err)
    rc, _, err = dask(py, "--scheduler", "not an address", "--workdir", tmp, "-o", out, RANKS)
    C.eq(rc, 2, "malformed scheduler address: exit 2 (%s)" % err.strip())
    rc, _, err = dask(py, "--scheduler", "tcp://127.0.0.1:1", "-o", out, RANKS)
    C.eq(rc, 2, "--scheduler without --workdir: exit 2")
    C.check("--workdir" in err, "--scheduler without --workdir: said", err)
    C.check(not os.path.exists(out), "errors: no output written")
    left = [n for n in os.listdir(tmp) if n.startswith("tracetool-dask-")]
    C.eq(left, [], "errors: no work directory left in --workdir")


def main():
    py = dask_python()
    if not C.check(py, "an interpreter with Dask distributed (this one, /usr/bin/python3, python3): "
                   "apt-get install python3-distributed"):
        return C.finish()
    if not os.path.isdir(RANKS):
        C.skip("dlrm_8rank", "%s missing" % RANKS)
        return C.finish()
    if not C.eq(tt("help", "summarize")[0], 0, "tracetool has summarize"):
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-test-dask-")
    try:
        C.section("errors", error_checks, py, tmp)
        C.section("8 ranks", main_checks, py, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
