#!/usr/bin/env python3
"""`tracetool diff` of two ingested copies of the benchmark trace against the
budget the issue sets: at most the time of two `averages` runs on one of them.

    bench/diff_bench.py [--db bench/out/bench.db] [--runs 3] [--tracetool build/tracetool]

The database is the one `bench/ingest_bench.sh --keep` leaves (the ~1 GB scaled
df_index_resolver trace); a second copy is made beside it (cp) so that the two
sides are two files. Prints the best wall time and peak RSS (from wait4) of
each command. Not a test: it passes or fails nothing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit("%s failed (%d): %s" % (" ".join(cmd), code, p.stderr.read().decode()[-300:]))
    return t, ru.ru_maxrss / 1024.0


def best(cmd, runs):
    res = [timed(cmd) for _ in range(runs)]
    return min(r[0] for r in res), max(r[1] for r in res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="bench/out/bench.db")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    a = ap.parse_args()
    if not os.path.exists(a.db):
        sys.exit("no %s: run bench/ingest_bench.sh --keep first" % a.db)
    copy = a.db + ".copy.db"
    shutil.copyfile(a.db, copy)
    try:
        tavg, ravg = best([a.tracetool, "averages", a.db], a.runs)
        tdiff, rdiff = best([a.tracetool, "diff", a.db, copy], a.runs)
    finally:
        os.unlink(copy)
    mb = os.path.getsize(a.db) / 1e6
    print("database: %s (%.0f MB)" % (a.db, mb))
    print("averages DB          %6.2f s  %6.0f MB RSS" % (tavg, ravg))
    print("diff DB DB-copy      %6.2f s  %6.0f MB RSS" % (tdiff, rdiff))
    print("budget (2 x averages) %5.2f s: %s" % (2 * tavg, "within" if tdiff <= 2 * tavg else "OVER"))


if __name__ == "__main__":
    main()
