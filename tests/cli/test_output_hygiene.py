#!/usr/bin/env python3
"""A trace's strings cannot drive the terminal (issue 11): an op, a kernel and
a path holding control characters (ESC sequences, a newline, a C1 character)
come out of every command, in every format, with no raw control byte (text,
CSV) or escaped (JSON, markdown), and JSON still gives the exact name back.
Python standard library only.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("output_hygiene")
TOOL = te.tracetool_path()
EVIL = "a\x1b[2J\x1b]0;pwned\x07b|c\nFAKE LINE\x7f\u0085"
FORMATS = ("table", "csv", "json", "markdown")


def trace_doc():
    ev = []
    t = 1000
    for i in range(3):
        ev.append({"ph": "X", "cat": "cpu_op", "name": EVIL, "pid": 1, "tid": 1, "ts": t,
                   "dur": 50, "args": {"External id": i + 1}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 10, "dur": 5, "args": {"correlation": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k" + EVIL, "pid": 0, "tid": 7,
                   "ts": t + 20, "dur": 8, "args": {"correlation": i + 1, "device": 0,
                                                    "stream": 7}})
        t += 100
    return {"schemaVersion": 1, "traceEvents": ev}


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


def no_raw_controls(data, label):
    bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
    C.check(not bad, label + ": no raw control byte", bad[:5])
    text = data.decode("utf-8", "replace")
    C.check("\u0085" not in text, label + ": no raw C1 character")
    C.check("\nFAKE LINE" not in text, label + ": the name's newline does not start a line")


def main():
    d = tempfile.mkdtemp(prefix="tt-hygiene-")
    try:
        path = os.path.join(d, "evil\x1b[31mname.json")
        with open(path, "w") as f:
            json.dump(trace_doc(), f)
        db = os.path.join(d, "e.db")
        cp = te.run_tool(["ingest", "-q", db, path])
        C.eq(cp.returncode, 0, "ingest")
        for cmd, fmts in (("info", ("table", "json")), ("averages", FORMATS),
                          ("kernels", FORMATS)):
            for src in (path, db):
                for fmt in fmts:
                    label = "%s --format %s %s" % (cmd, fmt, "DB" if src == db else "file")
                    cp = te.run_tool([cmd, "--format", fmt, src])
                    C.eq(cp.returncode, 0, label + ": exit 0")
                    if fmt == "json":
                        doc = json.loads(cp.stdout)
                        C.check(cmd == "info" or any(EVIL in x for x in strings(doc)),
                                label + ": JSON gives the exact name back")
                        continue
                    no_raw_controls(cp.stdout, label)
        return C.finish()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
