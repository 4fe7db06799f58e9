#!/usr/bin/env python3
"""The documentation cites only what is in the repository (issue 11): no
tracked file refers to FORMATS.md or ../shared/docs (team notes users never
see), and every docs/NAME.md a tracked file names exists.
Python standard library only.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("docs")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SELF = os.path.relpath(os.path.abspath(__file__), ROOT)


def tracked():
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout.decode()
        files = out.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
    return [f for f in files if f.endswith((".md", ".c", ".h", ".py", ".txt", ".sh"))]


def main():
    files = tracked()
    C.check(len(files) > 50, "found the repository's files", len(files))
    for f in files:
        if f == SELF:
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for bad in ("FORMATS.md", "shared/docs"):
            C.check(bad not in text, "%s: cites no %s" % (f, bad))
        for name in set(re.findall(r"docs/([A-Za-z_]+\.md)", text)):
            C.check(os.path.exists(os.path.join(ROOT, "docs", name)),
                    "%s: docs/%s exists" % (f, name))
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
