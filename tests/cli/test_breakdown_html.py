#!/usr/bin/env python3
"""`tracetool breakdown --html OUT.html` on the 8-rank DLRM job: the page
draws, for each rank, parts that are the numbers of `breakdown --format
json` (compute, exposed communication, copies under no kernel = busy -
compute - exposed communication, host wait, kernel wait, other idle) with
widths in proportion to the rank's window (the longest is 900 px); its
launch-delay histogram holds the delays computed here from the traces
(kernel start - start of the runtime call of its correlation, bins: under
1 us, then [2^(i-1), 2^i) us); it loads nothing and has no script; in
headless Chromium it renders the bars in their colours. A page that would
overwrite the input is refused. Python standard library only.
"""

import collections
import glob
import gzip
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, HERE)
import trace_expect as te  # noqa: E402
import test_render_browser as rb  # noqa: E402

C = te.Checker("breakdown_html")
PARTS = ("compute", "exposed_comm", "memory_only", "host_wait", "kernel_wait", "other_idle")
BLUE, RED = (0x4E, 0x79, 0xA7), (0xE1, 0x57, 0x59)


def expected_hist(files):
    """launch delays of every rank, binned as the page bins them"""
    hist = collections.Counter()
    for path in files:
        with gzip.open(path, "rt") as f:
            evs = json.load(f)["traceEvents"]
        rt = dict((e["args"]["correlation"], e) for e in evs
                  if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {}))
        for e in evs:
            c = e.get("args", {}).get("correlation")
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and c in rt:
                ns = round((e["ts"] - rt[c]["ts"]) * 1000)
                b = 0
                while ns >= 1000 << b and b < 21:
                    b += 1
                hist[b] += 1
    return hist


def drawn(page):
    """{rank index: {part: (width, ns)}} and [(bin, count)] from the page"""
    bars = collections.defaultdict(dict)
    for m in re.finditer(r'<rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="18" '
                         r'fill="#[0-9a-f]{6}" data-rank="(\d+)" data-part="([a-z_]+)" '
                         r'data-ns="(\d+)"', page):
        bars[int(m.group(2))][m.group(3)] = (float(m.group(1)), int(m.group(4)))
    bins = [(int(a), int(b)) for a, b in re.findall(r'data-bin="(\d+)" data-count="(\d+)"', page)]
    return bars, bins


def check_page(tmp, kdir, files):
    out = os.path.join(tmp, "bd.html")
    cp = te.run_tool(["breakdown", "--html", out, kdir])
    C.eq(cp.returncode, 0, "breakdown --html exit code")
    cp_json = te.run_tool(["breakdown", "--format", "json", kdir])
    ranks = json.loads(cp_json.stdout.decode())["ranks"]
    if not C.check(os.path.exists(out), "the page is written"):
        return None
    page = open(out, encoding="utf-8").read()
    bars, bins = drawn(page)
    C.eq(len(bars), 8, "a bar per rank")
    longest = max(r["window_ns"] for r in ranks)
    for i, r in enumerate(ranks):
        want = {"compute": r["compute_ns"], "exposed_comm": r["exposed_comm_ns"],
                "memory_only": r["busy_ns"] - r["compute_ns"] - r["exposed_comm_ns"],
                "host_wait": r["host_wait_ns"], "kernel_wait": r["kernel_wait_ns"],
                "other_idle": r["other_idle_ns"]}
        got = dict((p, bars[i][p][1]) for p in PARTS if p in bars[i])
        C.eq(got, dict((p, v) for p, v in want.items() if v > 0),
             "rank %d: the parts drawn are breakdown's numbers" % r["rank"])
        width = sum(w for w, _ in bars[i].values())
        C.check(abs(width - 900.0 * r["window_ns"] / longest) < 0.1,
                "rank %d: the bar's length is its window's share of the longest" % r["rank"],
                (width, r["window_ns"], longest))
    hist = expected_hist(files)
    lo = min(hist)
    C.eq(dict((b + lo, n) for b, n in bins if n), dict(hist),
         "the histogram holds the launch delays of the traces")
    C.check("<script" not in page and "http://" not in page and "https://" not in page,
            "self-contained, no script")
    C.check('class="slow">rank 3 cuda:3 (slowest)' in page, "the slowest rank is marked")
    # refused: the page over the input
    one = files[0]
    cp = te.run_tool(["breakdown", "--html", one, one])
    C.eq(cp.returncode, 2, "--html over the input: usage error")
    return out


def check_browser(tmp, page):
    chrome = rb.find_chromium()
    if not chrome:
        C.skip("browser", "chromium not installed")
        return
    shot = os.path.join(tmp, "shot.png")
    p = rb.run_chromium(chrome, tmp, "bd", "--screenshot=" + shot, "file://" + page)
    if not C.check(p is not None and os.path.exists(shot), "chromium takes a screenshot"):
        return
    img = rb.decode_png(open(shot, "rb").read())
    _, blue = rb.colour_stats(img, BLUE, tol=2)
    _, red = rb.colour_stats(img, RED, tol=2)
    C.check(blue > 2000, "the compute parts are drawn (%d px)" % blue)
    C.check(red > 20000, "the exposed communication parts are drawn (%d px)" % red)


def main():
    kdir = os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank", "kineto")
    files = sorted(glob.glob(os.path.join(kdir, "*.json.gz")))
    if len(files) != 8:
        C.skip("dlrm_8rank", "the 8 traces of testdata/param/dlrm_8rank are missing")
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_bd_html_") as tmp:
        page = check_page(tmp, kdir, files)
        if page:
            check_browser(tmp, page)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
