#!/usr/bin/env python3
"""tracetool export against an independent standard-library computation.

What the exported Chrome trace must hold is computed here straight from the
source traces (json, gzip): per rank, the events of each (ph, cat), cut to
the chosen steps by the rule tracetool documents:

  * a step is [ts, ts + dur] of the CPU "ProfilerStep#N" X event (not a GPU
    annotation); an event belongs to the chosen steps when its start is in
    one of them;
  * a GPU kernel/memcpy/memset/sync goes with the runtime call of the same
    correlation (the call that started last at or before it, else the first),
    when the trace has one; else its own start;
  * an ac2g flow that repeats the thread, time and correlation of the runtime
    call or GPU activity just written (no args, bp absent for s and "e" for f)
    goes with that event;
  * metadata events are not copied (the export names processes and threads
    itself), B/E pairs become one X, events without a ts are left out.

Checked: the 8-rank DLRM job (../shared/testdata/param/dlrm_8rank) exported
from a database and from its folder (the same bytes), 8 processes "rank 0".."rank
7", per-rank counts equal to the computation for all steps and for --steps,
`tracetool info` and `tracetool ingest` read the output back with the same
counts, timestamps not shifted; --rank; .gz output; a 6-step trace cut to
steps 6-8 (memory events too); a trace with baseTimeNanoseconds; every event
has the Trace Event Format fields of its phase (ph, ts, pid, tid, name; dur
for X; id for s/t/f), pids and tids are integers, tids unique over the file
and named; bad input and failures leave nothing behind; and, when headless
Chromium is installed, the browser's own JSON.parse reads the file and the
same field checks pass there. A trace file and a folder of them are read
as rows, never through a temporary database (TT_DEBUG_EXPORT, and strace
when installed); standard input goes through one and gives the same file.
"""

import collections
import gzip
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("export")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TESTDATA = os.environ.get("TT_TESTDATA", os.path.join(ROOT, "testdata"))
DLRM = os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank", "kineto")
RESNET = os.path.join(TESTDATA, "kineto", "resnet50_2021-06_trace.json.gz")
NCCL = os.path.join(te.shared_dir(), "testdata", "hta", "nccl_parser_config", "nccl_data.json.gz")

RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "xpu_runtime", "xpu_driver",
                "mtia_runtime", "privateuse1_runtime", "privateuse1_driver", "hip_runtime"}
LINKED_GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset",
                   "cuda_sync"}
GPU_CATS = LINKED_GPU_CATS | {"gpu_user_annotation"}
STEP = re.compile(r"profilerstep#(\d+)", re.I)


def ns(v):
    """a Chrome ts/dur (us: int, float or numeric string) in int ns, else None"""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return int((Decimal(str(v)) * 1000).to_integral_value())
    except ArithmeticError:
        return None


def source_events(path):
    doc = te.parse_json(te.read_bytes(path))
    evs = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    return [e for e in evs if isinstance(e, dict)], base


def corr(e):
    a = e.get("args")
    return a.get("correlation") if isinstance(a, dict) else None


def expected(path, steps=None):
    """(Counter of (ph, cat) the export must hold, number of chosen steps,
    {step name: ts ns} of the chosen steps)"""
    evs, _ = source_events(path)
    win, step_ts = [], {}
    calls = collections.defaultdict(list)
    for e in evs:
        if e.get("ph") != "X" or ns(e.get("ts")) is None:
            continue
        cat = e.get("cat")
        if cat in RUNTIME_CATS and corr(e) is not None:
            calls[corr(e)].append(ns(e["ts"]))
        m = STEP.match(str(e.get("name", "")))
        if m and cat not in RUNTIME_CATS | GPU_CATS:
            k = int(m.group(1))
            if steps is None or steps[0] <= k <= steps[1]:
                t = ns(e["ts"])
                win.append((t, t + (ns(e.get("dur")) or 0)))
                step_ts[e["name"]] = t
    for v in calls.values():
        v.sort()

    def launch_key(e, t):
        c = calls.get(corr(e))
        if not c:
            return t
        before = [x for x in c if x <= t]
        return before[-1] if before else c[0]

    def inside(t):
        return steps is None or any(a <= t <= b for a, b in win)

    out = collections.Counter()
    last = {"rt": None, "gpu": None}  # (event, key, folded) of the last row of each kind
    for e in evs:
        ph, cat, t = e.get("ph"), e.get("cat"), ns(e.get("ts"))
        if not isinstance(ph, str) or len(ph) != 1 or ph in "ME" or t is None:
            continue
        cat = cat if isinstance(cat, str) else None
        key = t
        if ph == "X" and cat in RUNTIME_CATS:
            last["rt"] = [e, t, False]
        elif ph == "X" and cat in GPU_CATS:
            key = launch_key(e, t) if cat in LINKED_GPU_CATS else t
            last["gpu"] = [e, key, False]
        elif ph in "sf" and cat == "ac2g" and e.get("name") == "ac2g" and not e.get("args") \
                and isinstance(e.get("id"), int) and \
                ((ph == "s" and "bp" not in e) or (ph == "f" and e.get("bp") == "e")):
            for k in ("rt", "gpu"):
                h = last[k]
                if h and not h[2] and all(h[0].get(f) == e.get(f) for f in ("pid", "tid")) \
                        and ns(h[0].get("ts")) == t and corr(h[0]) == e["id"]:
                    h[2] = True
                    key = h[1]
                    break
        if inside(key):
            out[("X" if ph == "B" else ph, cat)] += 1
    return out, len(win), step_ts


def load_out(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def by_pid(doc):
    """{pid: Counter of (ph, cat)} of the non-metadata events"""
    out = collections.defaultdict(collections.Counter)
    for e in doc["traceEvents"]:
        if e["ph"] != "M":
            out[e["pid"]][(e["ph"], e.get("cat"))] += 1
    return out


def process_names(doc):
    return {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name"}


def format_problems(doc):
    """The Trace Event Format's fields per phase, as viewers need them."""
    bad = []
    named = {}
    owner = {}
    for i, e in enumerate(doc["traceEvents"]):
        ph = e.get("ph")
        miss = [k for k in ("ph", "ts", "pid", "tid", "name") if k not in e]
        if ph == "X":
            miss += [] if isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0 else ["dur"]
        if ph in ("s", "t", "f"):
            miss += [] if isinstance(e.get("id"), int) and 0 <= e["id"] < 2 ** 53 else ["id"]
        if not all(isinstance(e.get(k), int) and 0 <= e[k] < 2 ** 31 for k in ("pid", "tid")):
            miss.append("integer pid/tid")
        if not isinstance(e.get("ts"), (int, float)):
            miss.append("numeric ts")
        if miss:
            bad.append((i, miss))
        if ph == "M" and e.get("name") == "thread_name":
            named[e["tid"]] = e["args"]["name"]
        elif ph != "M":
            if owner.setdefault(e["tid"], e["pid"]) != e["pid"]:
                bad.append((i, ["tid %d in two processes" % e["tid"]]))
            if e["tid"] not in named:
                bad.append((i, ["thread %d not named before its first event" % e["tid"]]))
    return bad


def run(args, **kw):
    return te.run_tool(["export"] + args, **kw)


def exports_ok(p, label):
    return C.check(p.returncode == 0, label + ": exit 0",
                   (p.returncode, p.stderr.decode(errors="replace")[-400:]))


# ---------------------------------------------------------------- the 8-rank job

def dlrm_files():
    return [os.path.join(DLRM, f) for f in sorted(os.listdir(DLRM))]


def rank_of(path):
    return int(re.search(r"worker(\d+)_", os.path.basename(path)).group(1))


def check_counts(doc, files, steps, label):
    got = by_pid(doc)
    for f in files:
        want, nwin, _ = expected(f, steps)
        r = rank_of(f)
        C.check(nwin > 0 or steps is None, "%s rank %d: has the steps" % (label, r))
        C.eq(dict(got.get(r, {})), dict(want), "%s rank %d: per-category counts" % (label, r))


def check_dlrm(tmp):
    files = dlrm_files()
    C.eq(len(files), 8, "dlrm: 8 rank files")
    db = os.path.join(tmp, "dlrm.db")
    p = te.run_tool(["ingest", "-q", db, DLRM])
    C.eq(p.returncode, 0, "dlrm: ingest")
    out_db, out_dir = os.path.join(tmp, "db.json"), os.path.join(tmp, "dir.json")
    exports_ok(run([db, out_db]), "dlrm: export DB")
    exports_ok(run([DLRM, out_dir]), "dlrm: export the folder")
    with open(out_db, "rb") as a, open(out_dir, "rb") as b:
        C.check(a.read() == b.read(), "dlrm: the database and the folder give the same file")
    doc = load_out(out_db)
    C.eq(process_names(doc), {r: "rank %d" % r for r in range(8)},
         "dlrm: 8 processes named rank 0..7")
    C.eq(format_problems(doc)[:5], [], "dlrm: Trace Event Format fields")
    check_counts(doc, files, None, "dlrm all steps")
    names = {e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 0}
    C.check({"thread 59811 (python3)", "GPU 0 stream 7"} <= names,
            "dlrm: thread names keep the source's", sorted(names))
    # timestamps on each rank's own clock (absolute here): the steps are where they were
    for f in files:
        _, _, step_ts = expected(f, (10, 10))
        got = [ns(e["ts"]) for e in doc["traceEvents"]
               if e.get("name") == "ProfilerStep#10" and e["pid"] == rank_of(f)]
        C.eq(got, list(step_ts.values()), "dlrm rank %d: ProfilerStep#10 not shifted" % rank_of(f))
    # read back by tracetool: info and ingest count the same events
    p = te.run_tool(["info", "--format", "json", out_db])
    C.eq(p.returncode, 0, "dlrm: info reads the export")
    if p.returncode == 0:
        cats = collections.Counter()
        for c in json.loads(p.stdout)["traces"][0]["categories"]:
            if c["ph"] != "M":
                cats[(c["ph"], c["cat"])] += c["count"]
        want = collections.Counter()
        for f in files:
            want.update(expected(f)[0])
        C.eq(dict(cats), dict(want), "dlrm: info's categories == the computation over the sources")
    db2 = os.path.join(tmp, "back.db")
    p = te.run_tool(["ingest", "-q", db2, out_db])
    C.eq(p.returncode, 0, "dlrm: ingest reads the export")
    p = te.run_tool(["info", "--format", "json", db2])
    if C.check(p.returncode == 0, "dlrm: info on the re-ingested export"):
        C.eq(json.loads(p.stdout)["traces"][0]["events"], len(doc["traceEvents"]),
             "dlrm: the re-ingest stored every event")

    # one step, from the folder's files given one by one
    out = os.path.join(tmp, "steps.json")
    exports_ok(run(["--steps", "10-10"] + files + [out]), "dlrm: --steps 10-10")
    sdoc = load_out(out)
    check_counts(sdoc, files, (10, 10), "dlrm --steps 10-10")
    C.check(sum(by_pid(sdoc)[0].values()) < sum(by_pid(doc)[0].values()),
            "dlrm: --steps leaves events out")
    C.eq(sdoc["tracetool_export"]["steps"], [10, 10], "dlrm: the header names the steps")

    # two ranks, gzipped
    outgz = os.path.join(tmp, "r13.json.gz")
    exports_ok(run(["--rank", "1,3", db, outgz]), "dlrm: --rank 1,3 to .gz")
    with open(outgz, "rb") as f:
        gdoc = json.loads(gzip.decompress(f.read()))
    C.eq(process_names(gdoc), {1: "rank 1", 3: "rank 3"}, "dlrm --rank 1,3: two processes")
    C.eq(by_pid(gdoc), {1: by_pid(doc)[1], 3: by_pid(doc)[3]},
         "dlrm --rank 1,3: the same events as the full export")
    # flows: every s has its f in the same rank, ids never shared by two ranks
    ends = collections.defaultdict(set)
    for e in doc["traceEvents"]:
        if e["ph"] in "sf" and e.get("cat") == "ac2g":
            ends[e["id"]].add((e["ph"], e["pid"]))
    C.check(ends and all(len({p for _, p in v}) == 1 for v in ends.values()),
            "dlrm: no flow id joins two ranks (and there are flows)", len(ends))
    return out_db


# ---------------------------------------------------------------- other traces

def check_resnet(tmp):
    out = os.path.join(tmp, "resnet.json")
    exports_ok(run(["--steps", "6-8", RESNET, out]), "resnet --steps 6-8")
    doc = load_out(out)
    want, nwin, _ = expected(RESNET, (6, 8))
    C.eq(nwin, 3, "resnet: three steps chosen")
    C.eq(doc["tracetool_export"]["processes"][0]["steps"], 3, "resnet: the header counts them")
    got = by_pid(doc)
    C.eq(list(got), [0], "resnet: one process (rank 0)")
    C.eq(dict(got[0]), dict(want), "resnet --steps 6-8: per-category counts")
    C.check(want[("i", None)] > 0, "resnet: memory events are in the cut", want[("i", None)])
    C.eq(format_problems(doc)[:5], [], "resnet: Trace Event Format fields")


def check_base_time(tmp):
    if not os.path.exists(NCCL):
        C.skip("base time", "no " + NCCL)
        return
    out = os.path.join(tmp, "nccl.json")
    exports_ok(run([NCCL, out]), "nccl: export")
    doc = load_out(out)
    evs, base = source_events(NCCL)
    C.eq(doc.get("baseTimeNanoseconds"), base, "nccl: the trace's baseTimeNanoseconds is kept")
    want = sorted(ns(e["ts"]) for e in evs if e.get("ph") == "X" and ns(e.get("ts")) is not None)
    got = sorted(ns(e["ts"]) for e in doc["traceEvents"] if e["ph"] == "X")
    C.check(got == want, "nccl: X timestamps as written (relative to the base)",
            (got[:3], want[:3]))
    C.eq(dict(by_pid(doc)[0]), dict(expected(NCCL)[0]), "nccl: per-category counts")


# ---------------------------------------------------------------- failures

def no_leftovers(d, label):
    left = [f for f in os.listdir(d) if f.endswith(".tmp") or ".tmp" in f]
    C.eq(left, [], label + ": no .tmp left")


def check_failures(tmp, db):
    d = os.path.join(tmp, "fail")
    os.mkdir(d)
    out = os.path.join(d, "out.json")
    p = run([os.path.join(tmp, "missing.json"), out])
    C.eq(p.returncode, 4, "a missing input: exit 4")
    notjson = os.path.join(d, "notjson.json")
    with open(notjson, "w") as f:
        f.write("this is not JSON\n")
    p = run([notjson, out])
    C.eq(p.returncode, 3, "an input that is not JSON: exit 3")
    for bad in ("5-3", "x", "1-x", "-2"):
        p = run(["--steps", bad, db, out])
        C.eq(p.returncode, 2, "--steps %s: exit 2" % bad)
    p = run(["--rank", "1,,2", db, out])
    C.eq(p.returncode, 2, "--rank 1,,2: exit 2")
    p = run([db, db])
    C.eq(p.returncode, 2, "the output is the database: exit 2")
    C.check(te.run_tool(["info", db]).returncode == 0, "the database is untouched")
    src = os.path.join(d, "copy.json.gz")
    shutil.copy(RESNET, src)
    before = os.path.getsize(src)
    p = run([src, src])
    C.eq(p.returncode, 2, "the output is the input file: exit 2")
    p = run([d, src])
    C.eq(p.returncode, 2, "the output is a trace in the input directory: exit 2")
    C.eq(os.path.getsize(src), before, "the input is untouched")
    p = run([db, db, out])
    C.eq(p.returncode, 2, "two databases: exit 2")
    os.remove(src)
    os.remove(notjson)
    p = run([db, os.path.join(d, "no", "such", "dir", "out.json")])
    C.eq(p.returncode, 4, "an output directory that does not exist: exit 4")
    p = run(["--rank", "99", db, out])
    C.eq(p.returncode, 4, "--rank 99 (none): exit 4")
    p = run(["--steps", "90-99", db, out])
    C.eq(p.returncode, 4, "--steps 90-99 (none): exit 4")

    # a write that fails half-way (the file size limit): exit 4, nothing left
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
    for o in (out, out + ".gz"):  # .gz: the compressor's thread fails
        p = subprocess.run([te.tracetool_path(), "export", db, o], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, preexec_fn=limit, timeout=300)
        C.eq(p.returncode, 4, "a write to %s that fails half-way: exit 4" % os.path.basename(o))
        C.check(not os.path.exists(o), "a failed export leaves no " + os.path.basename(o))
    no_leftovers(d, "after the failures")
    C.eq(os.listdir(d), [], "after the failures: the directory is empty")


# ---------------------------------------------------------------- the browser

PAGE = """<!doctype html><html><body><pre id="result">pending</pre>
<script id="trace" type="application/json">%s</script>
<script>
(function () {
  var r = {};
  try {
    var doc = JSON.parse(document.getElementById("trace").textContent);
    var ev = doc.traceEvents, bad = [], pids = {}, phases = {};
    for (var i = 0; i < ev.length; i++) {
      var e = ev[i], miss = [];
      ["ph", "ts", "pid", "tid", "name"].forEach(function (k) { if (!(k in e)) miss.push(k); });
      if (typeof e.ts !== "number") miss.push("ts number");
      if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) miss.push("integer pid/tid");
      if (e.ph === "X" && !(typeof e.dur === "number" && e.dur >= 0)) miss.push("dur");
      if ("stf".indexOf(e.ph) >= 0 && !Number.isSafeInteger(e.id)) miss.push("id");
      if (miss.length && bad.length < 5) bad.push(i + ": " + miss.join(","));
      pids[e.pid] = 1;
      phases[e.ph] = (phases[e.ph] || 0) + 1;
    }
    r.events = ev.length; r.bad = bad; r.pids = Object.keys(pids).length; r.phases = phases;
  } catch (err) { r.exception = String(err); }
  document.getElementById("result").textContent = JSON.stringify(r);
})();
</script></body></html>
"""


def browser_check(chrome, tmp, doc, name):
    html = os.path.join(tmp, name + ".html")
    text = json.dumps(doc).replace("</", "<\\/")
    with open(html, "w", encoding="utf-8") as f:
        f.write(PAGE % text)
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    try:
        p = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync",
                            "--disable-dev-shm-usage", "--user-data-dir=" + profile,
                            "--dump-dom", "file://" + html],
                           capture_output=True, text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
    if not m:
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))


def check_browser(tmp, out):
    chrome = next((c for c in (os.environ.get("CHROMIUM"), "/usr/bin/chromium",
                               shutil.which("chromium"), shutil.which("chromium-browser"))
                   if c and os.path.exists(c)), None)
    if not chrome:
        C.skip("browser", "chromium not installed")
        return
    doc = load_out(out)
    r = browser_check(chrome, tmp, doc, "dlrm")
    C.check(r is not None and "exception" not in r, "chromium parses the export", r)
    if r:
        C.eq(r.get("events"), len(doc["traceEvents"]), "chromium: every event read")
        C.eq(r.get("bad"), [], "chromium: the fields of every phase")
        C.eq(r.get("pids"), 8, "chromium: 8 processes")
    # the check can fail: a complete event without dur is reported
    doc["traceEvents"].append({"ph": "X", "ts": 1, "pid": 0, "tid": 1, "name": "no dur"})
    r = browser_check(chrome, tmp, doc, "broken")
    C.check(r is not None and r.get("bad"), "chromium: a broken event is detected", r)


def check_metadata(tmp):
    """deviceProperties and distributedInfo survive an export (issue 23: a
    re-read export said "rank: unknown"): one trace keeps both at the top;
    several keep each trace's in tracetool_export.processes, and the devices
    at the top when every trace had the same"""
    files = dlrm_files()
    src = {rank_of(f): load_out(f) for f in files}
    one = os.path.join(tmp, "meta1.json")
    exports_ok(run([files[0], one]), "one rank")
    doc = load_out(one)
    s0 = src[rank_of(files[0])]
    C.eq(doc.get("deviceProperties"), s0.get("deviceProperties"), "one rank: deviceProperties kept")
    C.eq(doc.get("distributedInfo"), s0.get("distributedInfo"), "one rank: distributedInfo kept")
    C.check(s0.get("distributedInfo") is not None, "the source has distributedInfo")
    p = te.run_tool(["info", one])
    want = "rank:         %d of %d" % (s0["distributedInfo"]["rank"], s0["distributedInfo"]["world_size"])
    C.check(want in p.stdout.decode(), "info of the export: " + want, p.stdout.decode()[:300])
    many = os.path.join(tmp, "meta8.json")
    exports_ok(run([DLRM, many]), "eight ranks")
    doc = load_out(many)
    procs = doc["tracetool_export"]["processes"]
    C.eq({p["rank"]: p.get("distributedInfo") for p in procs},
         {r: s.get("distributedInfo") for r, s in src.items()}, "eight ranks: each one's distributedInfo")
    C.eq({p["rank"]: p.get("deviceProperties") for p in procs},
         {r: s.get("deviceProperties") for r, s in src.items()}, "eight ranks: each one's deviceProperties")
    same = all(s.get("deviceProperties") == s0.get("deviceProperties") for s in src.values())
    C.eq(doc.get("deviceProperties"), s0.get("deviceProperties") if same else None,
         "eight ranks: the devices at the top when all had the same")
    C.check("distributedInfo" not in doc, "eight ranks: no single distributedInfo at the top")


# ---------------------------------------------------------------- no database

TEST_TRACE = os.path.join(te.shared_dir(), "testdata", "hta", "trace_diff", "test", "test.json.gz")


def temp_dbs(trace_file):
    """the temporary databases (tracetool-export-*, tracetool-db-*, SQLite's
    etilqs_*) an strace -f -e trace=openat log shows opened"""
    with open(trace_file, errors="replace") as f:
        return [l.strip() for l in f if "openat" in l and
                re.search(r"tracetool-(export|db|input)-|etilqs_", l)]


def check_no_database(tmp):
    """A trace file and a directory of them are read as rows, never through a
    temporary database: TT_DEBUG_EXPORT says which way each file went, and
    strace (when installed) sees no temporary database opened. Standard input
    (read once) still goes through one, with the same output."""
    cases = [("torch.compile file", TEST_TRACE), ("8-rank folder", DLRM)]
    for label, src in cases:
        if not os.path.exists(src):
            C.skip(label, "no " + src)
            continue
        out = os.path.join(tmp, "nodb.json")
        p = run([src, out], env={"TT_DEBUG_EXPORT": "1"})
        if not exports_ok(p, "no database, " + label):
            continue
        lines = te.stderr_lines(p)
        ways = [l for l in lines if l.startswith("export: ")]
        nfiles = 8 if os.path.isdir(src) else 1
        C.eq(len([l for l in ways if l.endswith(": read without a database")]), nfiles,
             label + ": every file read without a database")
        C.eq([l for l in ways if "temporary database" in l], [],
             label + ": none through a temporary database")
        strace = shutil.which("strace")
        if not strace:
            C.skip(label + ": strace", "strace is not installed")
            continue
        log = os.path.join(tmp, "strace.txt")
        sp = subprocess.run([strace, "-f", "-qq", "-e", "trace=openat", "-o", log,
                             te.tracetool_path(), "export", src, out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                            env=te.strace_env())
        if sp.returncode != 0 and b"ptrace" in sp.stderr:
            C.skip(label + ": strace", "ptrace is not permitted here")
            continue
        C.eq(sp.returncode, 0, label + ": export under strace")
        C.eq(temp_dbs(log), [], label + ": no temporary database opened")
    if os.path.exists(TEST_TRACE):
        a, b = os.path.join(tmp, "file.json"), os.path.join(tmp, "stdin.json")
        exports_ok(run([TEST_TRACE, a]), "stdin: from the file")
        with open(TEST_TRACE, "rb") as f:
            p = run(["-", b], stdin=f, env={"TT_DEBUG_EXPORT": "1"})
        if exports_ok(p, "stdin: from standard input"):
            C.check(any(l == "export: -: read without a database" for l in te.stderr_lines(p)),
                    "stdin: from a spill copy, without a database", te.stderr_lines(p))
            with open(a, "rb") as x, open(b, "rb") as y:
                C.check(x.read().replace(b'"test.json.gz"', b'"-"') == y.read(),
                        "stdin: the same file as from the file (but its name, '-')")


def main():
    if not os.path.isdir(DLRM):
        C.skip("export", "no shared test data at " + DLRM)
        return C.finish()
    tmp = tempfile.mkdtemp(prefix="tt-export-")
    try:
        out = {}
        C.section("dlrm", lambda: out.setdefault("db", check_dlrm(tmp)))
        C.section("resnet", check_resnet, tmp)
        C.section("base time", check_base_time, tmp)
        C.section("metadata", check_metadata, tmp)
        C.section("failures", check_failures, tmp, os.path.join(tmp, "dlrm.db"))
        C.section("no database", check_no_database, tmp)
        if out.get("db"):
            C.section("browser", check_browser, tmp, out["db"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
