#!/usr/bin/env python3
"""The memory-timeline HTML page in a real browser (headless Chromium).

render_demo (tests/tools/render_demo.c) writes an HTML page and a PNG from a
synthetic series. Checked here, with the standard library only:
  * the PNG is a 1600x960 PNG with many colours and the ACTIVATION red
    (torch's "red" at alpha 0.7 over white) in it;
  * the page loads offline in headless Chromium without JavaScript errors,
    and its screenshot is a non-blank PNG showing the chart that only the
    inline script draws (the SVG areas in torch's colours);
  * the interactive parts work: a copy of the page with a small self-test
    script appended dispatches hover, wheel, drag and reset events, and the
    DOM that Chromium dumps must show the tooltip, the zoomed range and the
    reset range;
  * a copy with a deliberate script error is caught (the check can fail).

Where render_demo is: $RENDER_DEMO, else tests/render/render_demo next to
$TRACETOOL in the build tree. Without it, or without Chromium, the test is
skipped (exit 0).
"""
import json, os, re, shutil, subprocess, sys, tempfile, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

TIMEOUT = 120
RED_07 = (255, 77, 77)  # "red" at alpha 0.7 over white
C = te.Checker("render_browser")
check = C.check
summary = C.finish


def skip(reason):
    C.skip("browser test", reason)
    sys.exit(summary())


def find_demo():
    p = os.environ.get("RENDER_DEMO")
    if p:
        return p
    tt = os.environ.get("TRACETOOL")
    if tt:
        cand = os.path.join(os.path.dirname(os.path.abspath(tt)), "tests", "render", "render_demo")
        if os.path.exists(cand):
            return cand
    return None


def find_chromium():
    for c in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if c and os.path.exists(c):
            return c
    return None


# ---- a small PNG decoder (8-bit RGB / RGBA, no interlace) ----

def decode_png(data):
    """Returns (width, height, channels, rows) with rows a list of bytes."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if len(body) != n:
            raise ValueError("truncated chunk")
        if zlib.crc32(kind + body) != int.from_bytes(data[pos + 8 + n:pos + 12 + n], "big"):
            raise ValueError(f"bad CRC in {kind!r}")
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if ihdr is None or not idat:
        raise ValueError("no IHDR or IDAT")
    w, h = int.from_bytes(ihdr[0:4], "big"), int.from_bytes(ihdr[4:8], "big")
    depth, ctype, interlace = ihdr[8], ihdr[9], ihdr[12]
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    ch = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * ch
    if len(raw) != h * (stride + 1):
        raise ValueError("wrong image data size")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        elif f != 0:
            raise ValueError(f"bad filter {f}")
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def colour_stats(img, target, tol=4):
    """(distinct RGB colours, pixels within tol of target)."""
    w, h, ch, rows = img
    seen, near = set(), 0
    for row in rows:
        for x in range(0, w * ch, ch):
            px = row[x:x + 3]
            seen.add(px)
        # count near-target pixels cheaply per row
        r0, g0, b0 = target
        for x in range(0, w * ch, ch):
            if abs(row[x] - r0) <= tol and abs(row[x + 1] - g0) <= tol and abs(row[x + 2] - b0) <= tol:
                near += 1
    return len(seen), near


# ---- Chromium ----

def chromium_cmd(chrome, profile, *extra):
    return [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
            "--window-size=1700,1400", "--enable-logging=stderr", "--v=0", *extra]


def js_errors(stderr):
    bad = []
    for line in stderr.splitlines():
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line or "error" in line):
            bad.append(line.strip())
        elif "Uncaught" in line:
            bad.append(line.strip())
    return bad


def run_chromium(chrome, tmp, name, *extra):
    profile = tempfile.mkdtemp(prefix=f"profile-{name}-", dir=tmp)
    try:
        p = subprocess.run(chromium_cmd(chrome, profile, *extra), capture_output=True,
                           text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    return p


SELFTEST = r"""
<script>
(function () {
  var out = {};
  function txt(id) { var e = document.getElementById(id); return e ? e.textContent : null; }
  try {
    var svg = document.getElementById("tt-svg");
    var r = svg.getBoundingClientRect();
    var y = r.top + r.height / 2;
    out.state = document.getElementById("tt-status").getAttribute("data-state");
    out.areas = svg.querySelectorAll("path.area").length;
    out.curves = svg.querySelectorAll("path.allocated, path.reserved").length;
    out.svgWidth = r.width;
    svg.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + r.width * 0.5, clientY: y, bubbles: true }));
    var tip = document.getElementById("tt-tip");
    out.tipHidden = tip.hidden;
    out.tip = tip.textContent;
    out.guide = document.getElementById("tt-guide").getAttribute("visibility");
    out.range0 = txt("tt-range");
    svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -400, clientX: r.left + r.width * 0.5, clientY: y, bubbles: true, cancelable: true }));
    out.rangeWheel = txt("tt-range");
    document.getElementById("tt-reset").click();
    out.rangeReset = txt("tt-range");
    svg.dispatchEvent(new MouseEvent("mousedown", { button: 0, clientX: r.left + r.width * 0.3, clientY: y, bubbles: true, cancelable: true }));
    window.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + r.width * 0.6, clientY: y }));
    window.dispatchEvent(new MouseEvent("mouseup", { clientX: r.left + r.width * 0.6, clientY: y }));
    out.rangeDrag = txt("tt-range");
    out.areasZoomed = svg.querySelectorAll("path.area").length;
    svg.dispatchEvent(new MouseEvent("dblclick", { clientX: r.left + r.width * 0.5, clientY: y, bubbles: true }));
    out.rangeDbl = txt("tt-range");
  } catch (e) {
    out.exception = String(e);
  }
  var pre = document.createElement("pre");
  pre.id = "tt-selftest";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def with_script(html, script):
    i = html.rfind("</body>")
    return html[:i] + script + html[i:]


def main():
    demo = find_demo()
    if not demo or not os.path.exists(demo):
        skip("render_demo not found (set RENDER_DEMO, or build tests/render)")
    chrome = find_chromium()
    with tempfile.TemporaryDirectory() as tmp:
        html = os.path.join(tmp, "timeline.html")
        png = os.path.join(tmp, "timeline.png")
        p = subprocess.run([demo, html, png], capture_output=True, text=True, timeout=TIMEOUT)
        check(p.returncode == 0, f"render_demo exits 0 ({p.returncode}: {p.stderr.strip()})")
        if p.returncode:
            return summary()

        # the PNG the library wrote
        img = decode_png(open(png, "rb").read())
        check(img[0] == 1600 and img[1] == 960, f"PNG is 1600x960 ({img[0]}x{img[1]})")
        ncol, nred = colour_stats(img, RED_07)
        check(ncol > 20, f"PNG not blank ({ncol} colours)")
        check(nred > 5000, f"PNG shows ACTIVATION red at alpha 0.7 ({nred} px)")

        page = open(html, encoding="utf-8").read()
        check("http://" not in page and "https://" not in page, "no network URL in the page")
        check("<script src" not in page, "no external script")

        if not chrome:
            skip("chromium not installed")

        # 1. screenshot + console
        shot = os.path.join(tmp, "shot.png")
        p = run_chromium(chrome, tmp, "shot", f"--screenshot={shot}", "file://" + html)
        check(p is not None, f"chromium finished within {TIMEOUT} s")
        if p is None:
            return summary()
        check(os.path.exists(shot), f"screenshot written (rc {p.returncode}: {p.stderr[-800:]})")
        if os.path.exists(shot):
            data = open(shot, "rb").read()
            check(data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is a PNG")
            try:
                simg = decode_png(data)
            except ValueError as e:
                simg = None
                check(False, f"screenshot decodes ({e})")
            if simg:
                ncol, nred = colour_stats(simg, RED_07)
                check(simg[0] == 1700, f"screenshot width 1700 ({simg[0]})")
                check(ncol > 20, f"screenshot not blank ({ncol} colours)")
                # the interactive chart (drawn only by the script) is at the top
                check(nred > 5000, f"screenshot shows the chart's ACTIVATION area ({nred} px)")
        errs = js_errors(p.stderr)
        check(not errs, "no JavaScript errors: " + " | ".join(errs[:3]))

        # 2. interaction self-test in the DOM
        st_html = os.path.join(tmp, "selftest.html")
        with open(st_html, "w", encoding="utf-8") as f:
            f.write(with_script(page, SELFTEST))
        p = run_chromium(chrome, tmp, "dom", "--dump-dom", "file://" + st_html)
        check(p is not None and p.returncode == 0, "chromium --dump-dom runs")
        if p is not None:
            m = re.search(r'<pre id="tt-selftest">(.*?)</pre>', p.stdout, re.S)
            check(m is not None, "self-test result in the DOM")
            res = {}
            if m:
                res = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                                 .replace("&gt;", ">").replace("&amp;", "&"))
            check("exception" not in res, f"self-test ran ({res.get('exception')})")
            check(res.get("state") == "ok", f"chart drawn (state {res.get('state')})")
            check(res.get("areas") == 8, f"8 category areas ({res.get('areas')})")
            check(res.get("curves") == 2, f"allocated + reserved curves ({res.get('curves')})")
            check(res.get("tipHidden") is False, "hover shows the tooltip")
            tip = res.get("tip") or ""
            check(" ms" in tip and re.search(r"\d (B|KiB|MiB|GiB|TiB)", tip) and "ACTIVATION" in tip
                  and "Allocated" in tip
                  and "Reserved" in tip, f"tooltip has time, categories and allocator ({tip[:200]!r})")
            check(res.get("guide") == "visible", "hover guide line")
            check(res.get("range0") == "full range", f"starts at full range ({res.get('range0')})")
            check(res.get("rangeWheel") not in (None, "full range"), f"wheel zooms ({res.get('rangeWheel')})")
            check(res.get("rangeReset") == "full range", f"reset button ({res.get('rangeReset')})")
            check(res.get("rangeDrag") not in (None, "full range"), f"drag-select zooms ({res.get('rangeDrag')})")
            check(res.get("rangeDbl") == "full range", f"double-click resets ({res.get('rangeDbl')})")
            errs = js_errors(p.stderr)
            check(not errs, "no JavaScript errors in the self-test: " + " | ".join(errs[:3]))

        # 3. the error check can fail: a broken script must be reported
        bad_html = os.path.join(tmp, "broken.html")
        with open(bad_html, "w", encoding="utf-8") as f:
            f.write(with_script(page, "<script>undefinedFunctionForTheTest();</script>"))
        p = run_chromium(chrome, tmp, "bad", "--dump-dom", "file://" + bad_html)
        check(p is not None and js_errors(p.stderr), "a script error is detected")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
