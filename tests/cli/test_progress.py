#!/usr/bin/env python3
"""The progress line of the analyses (issue 24: "long analyses show progress
on a terminal as ingest does").

Each command that reads trace files, run with standard error on a
pseudo-terminal, shows one line per file, rewritten in place with "\\r"
(the file's path, the percent read, MB, events), and clears it ("\\r\\033[K")
when the file's read ends, before anything else is written; standard output
is byte for byte what the same command prints with standard error on a pipe,
where nothing of the line appears, and the terminal less the progress lines
holds what standard error gets on a pipe (export's summary line). A trace of fewer than 64k events shows no
line at all (the first line comes with the 64k-th event); an error is one
clean line. The ingest's own line is unchanged (test_ingest covers it).

Needs the shared trace hta/trace_diff/test (105k events); skipped without it.
Environment: TRACETOOL, TT_SHARED.
"""

import os
import pty
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("progress")
FILE = os.path.join(te.shared_dir(), "testdata", "hta", "trace_diff", "test", "test.json.gz")
SMALL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "testdata", "kineto",
                     "simple_add_trace.json.gz")
CLEAR = b"\r\x1b[K"


def on_tty(args):
    """(exit code, stdout, what the terminal got) with stderr on a pty"""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([te.tracetool_path()] + args, stdout=subprocess.PIPE,
                             stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        slave = -1
        got = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
        out = p.stdout.read()
        p.wait(timeout=600)
        return p.returncode, out, got
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)


def lines_of(got, path):
    """the progress lines drawn (the text after each \\r that names path)"""
    want = path.encode() + b": "
    return [part for part in got.split(b"\r") if part.startswith(want)]


def check_command(label, args, path, nfiles, tmp, out_file=None):
    rc, out, got = on_tty(args)
    C.eq(rc, 0, label + ": exit code on a terminal")
    drawn = lines_of(got, path)
    C.check(drawn, label + ": a progress line drawn", repr(got[:200]))
    for d in drawn:
        C.check(re.match(rb".*: +[0-9.]+%  [0-9.]+ MB  [0-9]+ events", d),
                label + ": the line says percent, MB and events", repr(d))
    C.eq(got.count(CLEAR), nfiles, label + ": cleared once per file read")
    C.check(got.rfind(CLEAR) > got.rfind(b"\r" + path.encode() + b": "),
            label + ": the last line drawn is cleared", repr(got[-80:]))
    if out_file:
        with open(out_file, "rb") as f:
            first = f.read()
        os.remove(out_file)
    cp = te.run_tool(args)
    C.eq(cp.returncode, 0, label + ": exit code on a pipe")
    rest = re.sub(b"\r" + re.escape(path.encode()) + b": [^\r]*", b"", got)
    rest = rest.replace(CLEAR, b"").replace(b"\r\n", b"\n")
    C.eq(rest, cp.stderr, label + ": the terminal, less the progress, got what a pipe gets")
    C.check(path.encode() + b": " not in cp.stderr or b" events  " not in cp.stderr,
            label + ": no progress line on a pipe", repr(cp.stderr[:200]))
    C.check(out == cp.stdout, label + ": standard output the same either way")
    if out_file:
        with open(out_file, "rb") as f:
            C.check(f.read() == first, label + ": the output file the same either way")


def main():
    if not os.path.exists(FILE):
        C.skip("data", "the shared trace %s is missing" % FILE)
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-progress-")
    try:
        for label, args, n in (
                ("averages", ["averages", FILE], 1),
                ("kernels --by op", ["kernels", "--by", "op", FILE], 1),
                ("breakdown", ["breakdown", FILE], 1),
                ("info", ["info", FILE], 1),
                ("diff F F", ["diff", FILE, FILE], 2)):
            C.section(label, check_command, label, args, FILE, n, tmp)
        out = os.path.join(tmp, "e.json")
        C.section("export", check_command, "export", ["export", FILE, out], FILE, 1, tmp, out)

        if os.path.exists(SMALL):
            rc, out, got = on_tty(["averages", SMALL])
            C.eq(rc, 0, "small trace: exit code")
            C.eq(got, b"", "small trace (under 64k events): no line drawn")
        else:
            C.skip("small trace", "%s is missing" % SMALL)

        missing = os.path.join(tmp, "missing.json")
        rc, out, got = on_tty(["averages", missing])
        C.eq(rc, 4, "missing file: exit code")
        C.eq(got.replace(b"\r\n", b"\n").decode(errors="replace").splitlines(),
             ["tracetool: %s: cannot open: No such file or directory" % missing],
             "missing file: one clean error line, no progress")
    finally:
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
