#!/usr/bin/env python3
"""Ordinary Unix inputs and outputs (issue 11's defects), each a regression test:

- one open per input: a FIFO, /dev/stdin on a pipe and a process
  substitution (/dev/fd/N) give the same answer as the file, for every
  command that reads one input (they used to hang or lose the first 4 KiB);
- memtimeline never replaces an input: OUTPUT the input itself, or a symbolic
  link to it, is refused with exit 2 and the input is untouched;
- a directory walk takes each directory once: `self -> .` and `up -> ..`
  links are skipped with a warning, not followed 40 times or forever;
- a stray non-trace file in a directory is skipped with a warning (exit 0);
  a broken trace there still fails the run; ingest --skip-existing makes a
  re-run succeed;
- a database being written is "busy", one with a hot journal left by a
  killed ingest is an "interrupted ingest" (exit 4, how to recover), never
  "not a tracetool database"; `ingest DB` alone recovers it;
- an input of the wrong kind (an Execution Trace given to averages) exits 3;
- temporary files honour TMPDIR, are never readable by others and are gone
  after the command, also when it is killed with SIGINT mid-way.
Python standard library only.
"""

import gzip
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("inputs")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TRACE = os.path.join(ROOT, "testdata", "kineto", "resnet50_2021-06_trace.json.gz")
ET = os.path.join(ROOT, "testdata", "et", "simple_add_et.json.gz")
TOOL = te.tracetool_path()


def run(args, **kw):
    return subprocess.run([TOOL] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=kw.pop("timeout", 60), **kw)


def feed_fifo(path, data):
    def writer():
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    return t


def check_read_once(d):
    raw = gzip.open(TRACE).read()
    plain = os.path.join(d, "plain.json")
    with open(plain, "wb") as f:
        f.write(raw)
    for cmd in (["info"], ["averages"], ["kernels"], ["averages", "--group-by-shape"]):
        want = run(cmd + [plain])
        C.eq(want.returncode, 0, "%s on the file" % cmd[0])

        def same(cp, how, name):
            C.check(cp.returncode == 0, "%s from %s: exit 0" % (" ".join(cmd), how),
                    cp.stderr[-300:])
            if cmd[0] != "info":  # info names its input and its size on disk
                C.check(cp.stdout.replace(name.encode(), plain.encode()) == want.stdout,
                        "%s from %s: the file's output" % (" ".join(cmd), how))

        fifo = os.path.join(d, "fifo-%s" % cmd[0])
        os.mkfifo(fifo)
        t = feed_fifo(fifo, raw)
        try:
            cp = run(cmd + [fifo], timeout=120)  # a hang guard
            same(cp, "a FIFO", fifo)
        except subprocess.TimeoutExpired:
            C.check(False, "%s from a FIFO: no hang" % cmd[0])
        t.join(5)  # a writer still blocked is a daemon thread: left behind
        os.unlink(fifo)
        cp = subprocess.run([TOOL] + cmd + ["/dev/stdin"], input=raw, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=60)
        same(cp, "/dev/stdin on a pipe", "/dev/stdin")
        # a process substitution: the read end of a pipe as /dev/fd/N
        r, w = os.pipe()
        p = subprocess.Popen([TOOL] + cmd + ["/dev/fd/%d" % r], pass_fds=(r,),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(r)
        t = threading.Thread(target=_write_all, args=(w, raw), daemon=True)
        t.start()
        out, err = p.communicate(timeout=60)
        t.join(5)
        same(subprocess.CompletedProcess(p.args, p.returncode, out, err), "/dev/fd/N",
             "/dev/fd/%d" % r)
    # memtimeline reads one input too
    fifo = os.path.join(d, "fifo-mt")
    os.mkfifo(fifo)
    t = feed_fifo(fifo, raw)
    out = os.path.join(d, "mt.json")
    try:
        cp = run(["memtimeline", fifo, out], timeout=120)  # a hang guard
        C.check(cp.returncode in (0, 4) and b"not JSON" not in cp.stderr,
                "memtimeline from a FIFO: read whole", cp.stderr[-300:])
    except subprocess.TimeoutExpired:
        C.check(False, "memtimeline from a FIFO: no hang")
    t.join(5)


def _write_all(fd, data):
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


def check_output_not_input(d):
    src = os.path.join(d, "t.json.gz")
    shutil.copy(TRACE, src)
    db = os.path.join(d, "g.db")
    C.eq(run(["ingest", "-q", db, src]).returncode, 0, "ingest for the output test")
    for inp in (src, db):
        before = open(inp, "rb").read()
        link = os.path.join(d, "link.json")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(inp, link)
        for outp, how in ((inp, "itself"), (link, "a symlink to it")):
            cp = run(["memtimeline", inp, outp])
            C.check(cp.returncode == 2 and b"refusing" in cp.stderr
                    and cp.stderr.count(b"\n") == 1,
                    "memtimeline %s OUTPUT=%s: exit 2, one line" % (os.path.basename(inp), how),
                    (cp.returncode, cp.stderr))
            C.check(open(inp, "rb").read() == before,
                    "memtimeline %s OUTPUT=%s: input untouched" % (os.path.basename(inp), how))


def check_walk(d):
    top = os.path.join(d, "runs")
    r0 = os.path.join(top, "r0")
    os.makedirs(r0)
    shutil.copy(TRACE, os.path.join(r0, "trace.json.gz"))
    os.symlink(".", os.path.join(r0, "self"))
    os.symlink("..", os.path.join(r0, "up"))
    os.symlink(r0, os.path.join(top, "latest"))  # a second way into r0
    with open(os.path.join(r0, "config.json"), "w") as f:
        f.write('{"lr": 0.1, "batch": 32}\n')
    with open(os.path.join(r0, "notes.gz"), "w") as f:
        f.write("not gzip, not json\n")
    db = os.path.join(d, "walk.db")
    cp = run(["ingest", db, top], timeout=60)
    err = cp.stderr.decode()
    C.eq(cp.returncode, 0, "ingest of a directory with loops and stray files: exit 0")
    C.eq(cp.stdout.decode().count("trace 1,"), 1, "the trace is ingested once")
    C.check("trace 2" not in cp.stdout.decode(), "no second trace", cp.stdout)
    C.check(err.count("skipped, not a trace") == 2 and "config.json" in err and "notes.gz" in err,
            "config.json and notes.gz: skipped with a warning each", err)
    C.check(err.count("already read") == 3, "self, up and latest: one warning each", err)
    cp = run(["ingest", db, top])
    C.eq(cp.returncode, 5, "re-run without --skip-existing: exit 5")
    cp = run(["ingest", "--skip-existing", db, top])
    C.check(cp.returncode == 0 and b"already in the database, skipped" in cp.stdout,
            "re-run with --skip-existing: exit 0, says skipped", (cp.returncode, cp.stdout))
    cp = run(["ingest", "--skip-existing", "--replace", db, top])
    C.eq(cp.returncode, 2, "--skip-existing with --replace: usage error")
    # a broken trace in the directory still fails the run
    with open(os.path.join(r0, "broken.json"), "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur"')
    cp = run(["ingest", "--skip-existing", db, top])
    C.eq(cp.returncode, 3, "a truncated trace in the directory: exit 3")
    # a single file named on the command line that is not a trace is an error
    cp = run(["ingest", db, os.path.join(r0, "config.json")])
    C.eq(cp.returncode, 3, "config.json named on the command line: exit 3")


def check_db_states(d):
    """a database being written, or left with a hot journal, is intact: the
    message says so (exit 4), never "not a tracetool database" (exit 3)"""
    db = os.path.join(d, "states.db")
    C.eq(run(["ingest", "-q", db, TRACE]).returncode, 0, "ingest for the database states")
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=DELETE")
    c.execute("PRAGMA cache_size=1")  # spill early: the writer takes the exclusive lock
    c.execute("BEGIN")
    c.execute("CREATE TABLE filler(x)")
    c.execute("INSERT INTO filler SELECT randomblob(4000) FROM strings LIMIT 3000")
    hot = os.path.join(d, "hot.db")
    # what a killed writer leaves: the file and its journal. Copied by another
    # process: closing any descriptor of the file here would drop our locks
    subprocess.run(["cp", db, hot], check=True)
    subprocess.run(["cp", db + "-journal", hot + "-journal"], check=True)
    cp = run(["info", db])
    err = cp.stderr.decode()
    C.check(cp.returncode == 4 and "busy" in err and "not a tracetool database" not in err,
            "a database being written: exit 4, 'busy'", (cp.returncode, err))
    c.execute("ROLLBACK")
    c.close()
    cp = run(["averages", hot])
    err = cp.stderr.decode()
    C.check(cp.returncode == 4 and "interrupted ingest" in err and "tracetool ingest" in err,
            "a hot journal: exit 4, 'interrupted ingest', how to recover", (cp.returncode, err))
    cp = run(["ingest", hot])
    C.eq(cp.returncode, 0, "ingest DB with no inputs recovers it")
    C.check(not os.path.exists(hot + "-journal"), "the journal is rolled back")
    cp = run(["info", hot])
    C.check(cp.returncode == 0 and b"trace 1:" in cp.stdout, "the recovered database reads",
            cp.stderr)


def check_raw_export_span(d):
    """torch's raw memory export writes t = -1 for memory live before the
    profile: not a time, so not the start of the span (it said -1 .. t)"""
    raw = os.path.join(d, "m.raw.json")
    with open(raw, "w") as f:
        f.write("[[-1, 1, 512, 7], [-1, 1, 128, 7], [1000, 1, 64, 1], [5000, 2, 64, 1]]")
    db = os.path.join(d, "m.db")
    C.eq(run(["ingest", "-q", db, raw]).returncode, 0, "ingest of a raw export")
    for what in (raw, db):
        cp = run(["info", "--format", "json", what])
        doc = json.loads(cp.stdout)
        tr = doc["traces"][0] if "traces" in doc else doc
        C.eq((tr.get("start_ns"), tr.get("end_ns")), (1000, 5000),
             "info %s: the span leaves out t = -1" % os.path.basename(what))


def check_failed_picture_write(d):
    """a failed .png/.html write (the file-size limit stands in for a full
    disk) keeps the previous good picture: written aside, then renamed"""
    import resource

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    db = os.path.join(d, "pictures.db")  # no temporary database to write
    C.eq(run(["ingest", "-q", db, TRACE]).returncode, 0, "ingest for the picture test")
    for suffix in ("png", "html"):
        out = os.path.join(d, "good." + suffix)
        cp = run(["memtimeline", db, out])
        if not C.check(cp.returncode == 0, "first %s: exit 0" % suffix, cp.stderr):
            continue
        before = open(out, "rb").read()
        p = subprocess.run([TOOL, "memtimeline", "--no-categories", db, out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                           preexec_fn=small_files)
        C.check(p.returncode == 4 and p.stderr.count(b"\n") == 1,
                "%s write failure: exit 4, one line" % suffix, (p.returncode, p.stderr))
        C.check(open(out, "rb").read() == before, "%s write failure: the old file intact"
                % suffix)
        C.eq([f for f in os.listdir(d) if f.startswith("good." + suffix + ".")], [],
             "%s write failure: no temporary left" % suffix)


def check_progress_phases(d):
    """on a terminal, the ingest's progress line names each phase after the
    read (it showed nothing while linking and committing)"""
    import pty
    db = os.path.join(d, "progress.db")
    master, slave = pty.openpty()
    p = subprocess.Popen([TOOL, "ingest", db, TRACE], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    p.communicate(timeout=60)
    C.eq(p.returncode, 0, "ingest on a terminal: exit 0")
    for phase in (b"writing the last rows", b"linking GPU activities", b"committing"):
        C.check(phase in seen, "progress names the phase '%s'" % phase.decode(), seen[-300:])


def check_wrong_kind():
    for cmd in (["averages"], ["kernels"]):
        cp = run(cmd + [ET])
        C.eq(cp.returncode, 3, "%s on an Execution Trace: exit 3 (wrong kind)" % cmd[0])


def temp_files(tmpdir):
    return [os.path.join(tmpdir, f) for f in os.listdir(tmpdir) if f.startswith("tracetool")]


def open_temp_files(pid, tmpdir):
    """{target: mode} of the files in TMPDIR that process PID holds open: its
    temporary files leave the directory as soon as they are made (store/db.c,
    common/fs.c), so they are only seen through /proc/PID/fd"""
    found = {}
    fds = "/proc/%d/fd" % pid
    try:
        names = os.listdir(fds)
    except OSError:
        return found
    for fd in names:
        try:
            target = os.readlink(os.path.join(fds, fd))
            if target.startswith(os.path.join(os.path.realpath(tmpdir), "tracetool")):
                found[target] = stat.S_IMODE(os.stat(os.path.join(fds, fd)).st_mode)
        except OSError:
            pass
    return found


def holds_open(pid, path):
    fds = "/proc/%d/fd" % pid
    try:
        for fd in os.listdir(fds):
            if os.readlink(os.path.join(fds, fd)) == os.path.realpath(path):
                return True
    except OSError:
        pass
    return False


def check_tmpdir(d):
    tmpdir = os.path.join(d, "tmp")
    os.mkdir(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    big = os.path.join(d, "big.json")
    # a trace large enough to be caught mid-way: 40 copies of the resnet one
    raw = gzip.open(TRACE).read()
    doc = raw.decode()
    head, tail = doc.split('"traceEvents"', 1)[0], doc.split('"traceEvents"', 1)[1]
    body = tail[tail.index("[") + 1:tail.rindex("]")]
    with open(big, "w") as f:
        f.write(head + '"traceEvents": [' + ",".join([body] * 40) + "]}")
    # averages reads standard input (which it cannot read twice) into a
    # temporary database in TMPDIR. Given half the trace, it holds that
    # database open while it waits for the rest: its mode is read then,
    # whatever the machine's speed (a directory scan while a fast run goes by
    # saw nothing, and the check passed on an empty list)
    p = subprocess.Popen([TOOL, "averages", "-"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(raw[:len(raw) // 2])
    p.stdin.flush()
    seen = {}
    deadline = time.monotonic() + 300  # a hang guard only: it waits for us
    while not seen and p.poll() is None and time.monotonic() < deadline:
        seen = open_temp_files(p.pid, tmpdir)
        time.sleep(0.01)
    p.communicate(raw[len(raw) // 2:], timeout=600)
    C.eq(p.returncode, 0, "averages - with TMPDIR set: exit 0")
    C.check(seen and all(m & 0o077 == 0 for m in seen.values()),
            "temporary files are 0600 (at least one seen)", seen)
    C.eq(temp_files(tmpdir), [], "nothing left in TMPDIR after the run")
    p = subprocess.run([TOOL, "kernels", "--by", "op", big], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    C.eq(p.returncode, 0, "kernels --by op FILE with TMPDIR set: exit 0")
    C.eq(temp_files(tmpdir), [], "nothing left in TMPDIR after the run")
    # killed with SIGINT mid-way (once it has the input open, not after a
    # fixed sleep that a loaded machine may spend starting it): nothing left
    for cmd in (["kernels", "--by", "op", big], ["averages", "--group-by-stack", "2", big],
                ["ingest", os.path.join(d, "int.db"), big]):
        p = subprocess.Popen([TOOL] + cmd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        while p.poll() is None and time.monotonic() < deadline and not holds_open(p.pid, big):
            time.sleep(0.001)
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        C.eq(temp_files(tmpdir), [], "%s interrupted: nothing left in TMPDIR" % cmd[0])
    # an unusable TMPDIR (a full disk, a read-only one; /sys refuses new files
    # even to root): one clear line naming it, not "Success"
    with open(TRACE, "rb") as f:
        cp = run(["averages", "-"], env=dict(os.environ, TMPDIR="/sys"), input=f.read())
    err = cp.stderr.decode()
    C.check(cp.returncode == 4 and "/sys" in err and "Success" not in err
            and err.count("\n") == 1, "unusable TMPDIR: exit 4, one line naming it",
            (cp.returncode, err))


def main():
    if not os.path.exists(TRACE):
        print("SKIP: %s missing" % TRACE)
        return te.SKIP_EXIT
    d = tempfile.mkdtemp(prefix="tt-inputs-")
    try:
        C.section("read once", check_read_once, d)
        C.section("output is not an input", check_output_not_input, d)
        C.section("directory walk", check_walk, d)
        C.section("database states", check_db_states, d)
        C.section("raw export span", check_raw_export_span, d)
        C.section("failed picture write", check_failed_picture_write, d)
        C.section("progress phases", check_progress_phases, d)
        C.section("wrong kind", check_wrong_kind)
        C.section("TMPDIR", check_tmpdir, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
