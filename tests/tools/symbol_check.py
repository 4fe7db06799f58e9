#!/usr/bin/env python3
"""The symbols libtracetool.so exports are its public API, exactly.

    symbol_check.py LIBTRACETOOL.so INCLUDE_DIR

Every defined dynamic symbol must be declared TT_EXTERN in a public header
(INCLUDE_DIR/tracetool/*.h, the capture library's header excepted), and
every function those headers declare must be exported. Internals (tt__*,
ig_*, xc_*, ...) stay inside: the layers are built with hidden visibility.
Exit 0 when both hold; 1 with the offending names otherwise.
"""
import glob
import os
import re
import subprocess
import sys


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVW" and parts[1] != "":
            names.add(parts[2].split("@")[0])
    # the linker's own
    return {n for n in names if not n.startswith("_")}


def declared(include):
    names = set()
    for h in glob.glob(os.path.join(include, "tracetool", "*.h")):
        if os.path.basename(h) == "capture.h":
            continue
        text = open(h, encoding="utf-8").read()
        for m in re.finditer(r"TT_EXTERN\([^)]*\)\s*(\w+)\s*\(", text):
            names.add(m.group(1))
    return names


def main():
    lib, include = sys.argv[1], sys.argv[2]
    exp, dec = exported(lib), declared(include)
    extra = sorted(exp - dec)
    missing = sorted(dec - exp)
    if len(dec) < 50:
        print(f"only {len(dec)} TT_EXTERN functions found under {include}")
        return 1
    if extra:
        print(f"{len(extra)} exported symbols not in the public headers: " + " ".join(extra[:40]))
    if missing:
        print(f"{len(missing)} public functions not exported: " + " ".join(missing[:40]))
    if extra or missing:
        return 1
    print(f"libtracetool.so exports the {len(exp)} public functions and nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
