"""Independent expectations for tracetool's CLI tests (Python standard library only).

Everything here is computed from the trace files with Python's own json and
gzip modules, never from tracetool's output, so the tests can compare the two.

  read_bytes(path)            file contents, gunzipped when it starts with 1f 8b
  expect_file(path)           Expect: kind, Counter of (ph, cat or None), totals
  element_end_offsets(raw)    (ends, is_member): byte offset just past each
                              element of the event / node / row array
  array_layout(raw)           the same with more detail (start, objects, ...)
  Checker                     pass/fail bookkeeping and the final summary line
"""

import collections
import gzip
import json
import os
import re
import subprocess
import sys
import traceback

GZIP_MAGIC = b"\x1f\x8b"
SKIP_EXIT = 77  # tests/CMakeLists.txt: SKIP_RETURN_CODE


# ---------------------------------------------------------------- loading

def is_gzip(data):
    return data[:2] == GZIP_MAGIC


def read_bytes(path):
    """The decompressed bytes of a file; gzip is detected by magic bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if is_gzip(data):
        data = gzip.decompress(data)
    return data


def parse_json(raw):
    """Parse decompressed bytes. Invalid UTF-8 becomes U+FFFD (as tracetool
    repairs it) and raw control characters inside strings are allowed."""
    return json.loads(raw.decode("utf-8", errors="replace"), strict=False)


def trace_files(root):
    """Every file tracetool's directory walk would pick (*.json, *.gz), sorted."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.startswith("."):
                continue
            if f.endswith(".json") or f.endswith(".gz"):
                out.append(os.path.join(d, f))
    return sorted(out)


# ---------------------------------------------------------------- expectations

class Expect(object):
    """What a trace holds, counted independently.

    kind:       'chrome' ({"traceEvents": [...]}), 'chrome-array' ([{...}, ...]),
                'et' ({"nodes": [...]}), 'memtl' ([[ts, action, bytes, cat], ...])
                or None when the document is none of these.
    counter:    Counter of (ph, cat or None) over event objects with a
                one-character string "ph" (Chrome kinds only).
    total:      elements tracetool reports as events/nodes/rows: objects of
                the event or node array, well-formed rows of a memory timeline.
    et_nodes:   node objects (ET only), memtl_rows: rows (memtl only).
    top:        the top-level object (without the array) or None.
    events:     the event / node / row list itself.
    """

    def __init__(self):
        self.kind = None
        self.counter = collections.Counter()
        self.total = 0
        self.et_nodes = 0
        self.memtl_rows = 0
        self.top = None
        self.events = []

    def __repr__(self):
        return "Expect(kind=%r, total=%d, et_nodes=%d, memtl_rows=%d, %d (ph,cat) keys)" % (
            self.kind, self.total, self.et_nodes, self.memtl_rows, len(self.counter))


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _memtl_row_ok(row):
    if not isinstance(row, list) or not 3 <= len(row) <= 4:
        return False
    if not all(_is_num(v) for v in row[:3]):
        return False
    return len(row) == 3 or row[3] is None or _is_num(row[3])


def event_key(ev):
    """(ph, cat or None) of one event object, or None if it has no usable ph."""
    ph = ev.get("ph")
    if not isinstance(ph, str) or len(ph) != 1:
        return None
    cat = ev.get("cat")
    return (ph, cat if isinstance(cat, str) else None)


def expect_obj(doc):
    e = Expect()
    if isinstance(doc, dict):
        key = None
        for k in doc:  # the first of the two keys in document order wins
            if k in ("traceEvents", "nodes"):
                key = k
                break
        if key is None or not isinstance(doc[key], list):
            return e
        e.kind = "chrome" if key == "traceEvents" else "et"
        e.events = doc[key]
        e.top = dict((k, v) for k, v in doc.items() if k != key)
    elif isinstance(doc, list):
        e.events = doc
        e.kind = "memtl" if doc and isinstance(doc[0], list) else "chrome-array"
    else:
        return e
    if e.kind == "memtl":
        e.memtl_rows = sum(1 for r in e.events if _memtl_row_ok(r))
        e.total = e.memtl_rows
    elif e.kind == "et":
        e.et_nodes = sum(1 for n in e.events if isinstance(n, dict))
        e.total = e.et_nodes
    else:
        for ev in e.events:
            if not isinstance(ev, dict):
                continue
            e.total += 1
            k = event_key(ev)
            if k is not None:
                e.counter[k] += 1
    return e


def expect_file(path):
    return expect_obj(parse_json(read_bytes(path)))


def expect_bytes(raw):
    return expect_obj(parse_json(raw))


# ---------------------------------------------------------------- byte layout

def _skip_ws(text, i):
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def array_layout(raw):
    """Where the event / node / row array and each of its elements lie.

    `raw` is the complete decompressed document (bytes). Offsets are byte
    offsets into `raw`: the bytes are decoded as latin-1, which maps every
    byte to exactly one character, so string indices equal byte offsets
    (UTF-8 multi-byte sequences only occur inside strings and never contain
    JSON structural bytes, so the structure is parsed correctly).

    Returns a dict:
      key        'traceEvents' / 'nodes', or None for a bare top-level array
      is_member  True when the array is the traceEvents/nodes member
      start      offset of the array's '['
      ends       offset just past each element (exclusive end)
      starts     offset of each element's first byte
      objects    per element: True when it is a JSON object
      phased     per element: True when it is an object with a 1-char "ph"
      close      offset just past the array's ']'
    """
    if isinstance(raw, str):
        raise TypeError("array_layout wants bytes")
    text = raw.decode("latin-1")
    dec = json.JSONDecoder(strict=False)
    i = _skip_ws(text, 0)
    if i >= len(text):
        raise ValueError("empty document")
    key = None
    if text[i] == "{":
        i = _skip_ws(text, i + 1)
        while True:
            if text[i] == "}":
                raise ValueError("no traceEvents/nodes array")
            k, i = dec.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i] != ":":
                raise ValueError("expected ':' at byte %d" % i)
            i = _skip_ws(text, i + 1)
            if k in ("traceEvents", "nodes") and text[i] == "[":
                key = k
                break
            _, i = dec.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
    elif text[i] != "[":
        raise ValueError("not a trace document")
    start = i
    ends, starts, objects, phased = [], [], [], []
    i = _skip_ws(text, i + 1)
    if text[i] == "]":
        close = i + 1
    else:
        while True:
            v, j = dec.raw_decode(text, i)
            starts.append(i)
            ends.append(j)
            isobj = isinstance(v, dict)
            objects.append(isobj)
            if isobj:
                ph = v.get("ph")
                phased.append(isinstance(ph, str) and len(ph) == 1)
            else:
                phased.append(False)
            i = _skip_ws(text, j)
            if text[i] == "]":
                close = i + 1
                break
            if text[i] != ",":
                raise ValueError("expected ',' or ']' at byte %d" % i)
            i = _skip_ws(text, i + 1)
    return {"key": key, "is_member": key is not None, "start": start, "ends": ends,
            "starts": starts, "objects": objects, "phased": phased, "close": close}


def element_end_offsets(raw):
    """(ends, is_member): the byte offset just past each element of the
    event/node/row array of the decompressed document `raw`, and whether that
    array is the "traceEvents"/"nodes" member (False for a bare array)."""
    lay = array_layout(raw)
    return lay["ends"], lay["is_member"]


# ---------------------------------------------------------------- test harness

def tracetool_path():
    p = os.environ.get("TRACETOOL")
    if not p:
        here = os.path.dirname(os.path.abspath(__file__))
        p = os.path.join(here, "..", "..", "build", "tracetool")
    return os.path.abspath(p)


def shared_dir():
    p = os.environ.get("TT_SHARED")
    if not p:
        here = os.path.dirname(os.path.abspath(__file__))
        p = os.path.join(here, "..", "..", "..", "shared")
    return os.path.abspath(p)


def run_tool(args, stdin=None, timeout=300, input_bytes=None, env=None):
    """Run tracetool; returns CompletedProcess with bytes stdout/stderr.
    env: extra environment variables for this run."""
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    return subprocess.run([tracetool_path()] + list(args), stdin=stdin,
                          input=input_bytes, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, env=full_env)


def stderr_lines(cp):
    return cp.stderr.decode("utf-8", errors="replace").splitlines()


class Checker(object):
    """Counts checks; prints one line per failure and the summary line."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.verbose = bool(os.environ.get("TT_TEST_VERBOSE"))

    def check(self, cond, label, detail=None):
        if cond:
            self.passed += 1
            if self.verbose:
                print("ok   %s" % label)
        else:
            self.failed += 1
            msg = "FAIL %s" % label
            if detail is not None:
                msg += ": %s" % (detail,)
            print(msg)
            sys.stdout.flush()
        return bool(cond)

    def eq(self, got, want, label):
        return self.check(got == want, label, "got %r, expected %r" % (got, want))

    def skip(self, label, why):
        self.skipped += 1
        print("SKIP %s: %s" % (label, why))

    def section(self, label, fn, *args):
        """Run fn(*args); an exception counts as one failure."""
        try:
            fn(*args)
        except Exception:
            self.failed += 1
            print("FAIL %s: exception\n%s" % (label, traceback.format_exc()))
            sys.stdout.flush()

    def finish(self):
        """The exit code: 1 if a check failed or none ran, SKIP_EXIT (ctest's
        SKIP_RETURN_CODE) if something was skipped (missing data or tool), so
        a test that could not run all it holds never shows as passed; else 0."""
        line = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            line += ", %d skipped" % self.skipped
        print(line)
        sys.stdout.flush()
        if self.failed or (self.passed == 0 and not self.skipped):
            return 1
        return SKIP_EXIT if self.skipped else 0


# a temporary database opened: tracetool's (store/db.c) or SQLite's own
TEMP_DB_OPEN = re.compile(r'openat\([^"]*"[^"]*(tracetool-(db|input)-|etilqs_)')


def strace_env():
    """the environment for a tracetool run under strace: LeakSanitizer cannot
    run under ptrace (it exits 1 saying so), so the sanitized build leaves it
    off there; the other ASan and UBSan checks stay on"""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    return env


def traced_temp_db(args, tmp, stdin=None):
    """Run tracetool ARGS under `strace -f -e trace=openat`: (exit code,
    stdout, whether a temporary database was opened). strace must exist.
    stdin: a path whose bytes go to standard input through a pipe."""
    rc, out, lines = traced_opens(args, tmp, stdin)
    return rc, out, any(TEMP_DB_OPEN.search(line) for line in lines)


def traced_opens(args, tmp, stdin=None):
    """as traced_temp_db: (exit code, stdout, the lines of strace's log:
    each openat; a control sees its input file opened there)"""
    log = os.path.join(tmp, "strace.txt")
    inp = None
    if stdin is not None:
        with open(stdin, "rb") as f:
            inp = f.read()
    cp = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", log,
                         tracetool_path()] + args, stdout=subprocess.PIPE, input=inp,
                        stderr=subprocess.PIPE, timeout=600, env=strace_env())
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    return cp.returncode, cp.stdout, lines


def sanitizer_preload_env(env=None):
    """The environment in which a Python process can load an ASan build of
    libtracetool.so (ctypes): the sanitizer's runtime preloaded (it must come
    first in the process), leak detection off (the interpreter keeps its
    objects to the end by design). Unchanged outside an ASan build
    (TT_SANITIZED, set by ctest, names the sanitizers)."""
    env = dict(os.environ if env is None else env)
    if "address" not in env.get("TT_SANITIZED", ""):
        return env
    if "libasan" not in env.get("LD_PRELOAD", ""):
        cc = env.get("CC") or "gcc"
        lib = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()
        if not lib or not os.path.isabs(lib):
            raise RuntimeError("no libasan.so from %s -print-file-name" % cc)
        env["LD_PRELOAD"] = " ".join(x for x in (lib, env.get("LD_PRELOAD", "")) if x)
    opts = [o for o in env.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")]
    env["ASAN_OPTIONS"] = ":".join(opts + ["detect_leaks=0"])
    return env


def reexec_for_sanitizer():
    """Run this script again in sanitizer_preload_env() when the ASan build's
    library is to be loaded in this process and its runtime is not loaded
    yet (a no-op elsewhere)."""
    env = sanitizer_preload_env()
    if env.get("LD_PRELOAD", "") != os.environ.get("LD_PRELOAD", ""):
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
