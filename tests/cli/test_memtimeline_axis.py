#!/usr/bin/env python3
"""The memory timeline's y axis when most of the memory is live throughout
(issue 23: a 178 GiB job drawn from 0 showed every change as a flat line).

A trace made here: 100 GiB allocated at the start and never freed, then 2 GiB
allocated and freed ten times. The PNG (decoded with zlib only) must show
the 2 GiB changes as a visible step of the stacked area's top edge (more than
80 of its 640-odd plot pixels; drawn from 0 it moves ~12 pixels), and the
page rendered by headless Chromium must say on its axis where the axis starts.
A timeline whose memory falls to near 0 keeps its axis at 0.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_memtimeline_render import decode_png  # noqa: E402

TRACETOOL = os.environ.get("TRACETOOL", "build/tracetool")
GIB = 1 << 30
passed = failed = 0


def check(cond, what, got=None):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", what, "" if got is None else repr(got)[:300])


def mem(ts, addr, nbytes, total):
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1,
            "tid": 1, "ts": ts, "args": {"Device Type": 1, "Device Id": 0, "Addr": addr,
                                         "Bytes": nbytes, "Total Allocated": total,
                                         "Total Reserved": total}}


def trace(path, resident):
    ev, total, t = [], 0, 1000
    total += resident
    ev.append(mem(t, 1 << 40, resident, total))
    for i in range(10):
        t += 1000
        total += 2 * GIB
        ev.append(mem(t, (1 << 41) + i, 2 * GIB, total))
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1,
                   "ts": t - 1, "dur": 3})
        t += 1000
        total -= 2 * GIB
        ev.append(mem(t, (1 << 41) + i, -2 * GIB, total))
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "profile_memory": 1, "traceEvents": ev}, f)


def top_edges(pix):
    """per plot column, the height in pixels of the drawn stack: from the
    frame's bottom line up to where the area (grey for Unknown at alpha 0.7)
    gives way to the white background"""
    h, w = len(pix), len(pix[0])
    cols = range(w // 5, 4 * w // 5, 4)
    dark = lambda p: max(p) < 200
    bottom = max(y for y in range(h // 2, h - 40)
                 if sum(dark(pix[y][x]) for x in cols) > 0.9 * len(cols))
    out = []
    for x in cols:
        y = bottom - 2
        while y > 0 and dark(pix[y][x]):
            y -= 1
        out.append(bottom - y)
    return out


def main():
    with tempfile.TemporaryDirectory() as d:
        hi, lo = os.path.join(d, "hi.json"), os.path.join(d, "lo.json")
        trace(hi, 100 * GIB)
        trace(lo, 0)
        for name, path, wants_lift in (("100 GiB live", hi, True), ("nothing live", lo, False)):
            png = os.path.join(d, name.replace(" ", "_") + ".png")
            p = subprocess.run([TRACETOOL, "memtimeline", "--device", "cuda:0", path, png],
                               capture_output=True)
            check(p.returncode == 0, name + ": memtimeline exit 0", p.stderr)
            if p.returncode:
                continue
            w, h, pix = decode_png(open(png, "rb").read())
            edges = top_edges(pix)
            span = max(edges) - min(edges) if edges else 0
            if wants_lift:
                check(span > 80, name + ": the 2 GiB steps are visible (top edge moves > 80 px)", span)
            else:
                check(span > 300, name + ": the axis stays at 0 and the steps fill it", span)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        html = os.path.join(d, "hi.html")
        p = subprocess.run([TRACETOOL, "memtimeline", "--device", "cuda:0", hi, html], capture_output=True)
        check(p.returncode == 0, "html: exit 0", p.stderr)
        if not chromium:
            print("SKIP headless Chromium: not installed")
            print("%d passed, %d failed, 1 skipped" % (passed, failed))
            return 1 if failed else 0
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-background-networking", "--virtual-time-budget=3000",
                              "--user-data-dir=" + os.path.join(d, "prof"), "--dump-dom",
                              "file://" + html], capture_output=True, timeout=120).stdout.decode()
        check("axis starts at" in dom.split("<script")[0] or
              any("axis starts at" in part.split("</script>")[-1] for part in dom.split("<script")[1:]),
              "the page's axis title says where the axis starts")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
