#!/usr/bin/env python3
"""The capture library, as a program linking it sees it (tests/capture/capture_scenarios.c
and the example capture-demo),
checked with Python's json / gzip modules alone (no tracetool code decides what is
right), then read back by tracetool.

- schedule: torch's test_execution_trace config (skip_first 3, wait 1, warmup 1,
  active 2, repeat 1 over 10 steps) gives exactly one trace (tensorboard naming
  <worker>.<time_ns>.pt.trace.json) holding ProfilerStep#5 and #6; the header keys
  are Kineto's, in its order; times are µs with 3 decimals relative to
  baseTimeNanoseconds; every cpu_op / user_annotation has Record function id,
  External id and Ev Idx; shapes as Input Dims / Input type; [memory] instants;
  the Execution Trace obeys PyTorch's rule (sorted ET rf_ids == sorted Kineto
  Record function ids), node ids are unique, ctrl_deps point at existing nodes,
  the root is written last; gzip variant the same;
- names: quotes, control characters and bytes that are not UTF-8 make valid JSON;
- race: 8 threads x 100,000 nested scope pairs while windows open and close
  (the schedule, and stop / start every 50 steps): every recorded scope is in
  a window;
- threads: 8 threads x 4,000 nested scope pairs while the schedule steps: every
  recorded scope is in the trace (stats = events), none dropped, nesting intact;
- fork, failures (unwritable directory, bad regex, second start, stop twice),
  limits (memory cap, maximum duration, name filter) and exit(): the program's
  result is the same as without capture, and what is lost is counted in the trace;
- reenter: on_trace_ready and log call the API back on their own thread (stats,
  step, start, stop, shutdown, fork): never a deadlock; step / start say
  TT_CAP_ECALLBACK, stop takes effect when the callback returns;
- sigexit: exit(5) from a signal handler while threads (the handler's own too)
  are inside scopes: exit status 5 every run, any trace complete;
- nullname: a tt_cap_srcloc with a NULL name is written "(null)", no crash, no .tmp;
- startrace: 8 threads call tt_cap_start at once: one profile, 7 TT_CAP_EBUSY
  each with its reason (ThreadSanitizer: no race on the last error);
- the malloc interposer (alloc_prog): the aligned allocators too, every block's
  events balance, no free of a block whose allocation was not seen, Total
  Allocated never below 0; TT_CAPTURE_WORKER=../x and capture-demo --worker
  ../../esc write nothing outside the output directory;
- tracetool info / averages read the traces.
"""
import decimal
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("capture")
DEMO = os.environ.get("CAPTURE_SCENARIOS") or os.path.join(HERE, "..", "..", "build", "tests",
                                                           "capture_scenarios")
USER_DEMO = os.environ.get("CAPTURE_DEMO") or os.path.join(HERE, "..", "..", "build", "capture",
                                                           "capture-demo")
KINETO_KEYS = ["schemaVersion", "deviceProperties", "record_shapes", "tracetool_capture",
               "displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "tracetool_gpu", "traceName"]
CUDA_ROOT = os.environ.get("TT_CUDA_ROOT") or "/usr/local/cuda"
PLAIN_RESULT = None


def demo(mode, d, timeout=120):
    cp = subprocess.run([DEMO, mode, d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        timeout=timeout)
    out = cp.stdout.decode("utf-8", "replace")
    kv = {}
    for line in out.splitlines():
        if line.startswith("stats "):
            kv.update(dict(p.split("=") for p in line.split()[1:]))
        elif " " in line:
            k, v = line.split(" ", 1)
            kv.setdefault(k, v)
    return cp, kv


def load(path):
    """(document, raw bytes); json keeps the keys in the file's order"""
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8")), raw


def ops(doc):
    return [e for e in doc["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")]


def check_kineto(label, doc, raw, shapes=True):
    order = list(doc.keys())
    C.eq(order, [k for k in KINETO_KEYS if k in order], label + ": header keys in Kineto's order")
    C.eq(order[:2], ["schemaVersion", "deviceProperties"], label + ": first keys")
    C.eq([k for k in order if k not in ("tracetool_gpu",)][-2:], ["traceEvents", "traceName"],
         label + ": last keys (tracetool_gpu between them with GPU capture)")
    base = doc.get("baseTimeNanoseconds")
    C.check(isinstance(base, int) and base % 7889238000000000 == 0,
            label + ": baseTimeNanoseconds on Kineto's 3-month boundary", base)
    evs = ops(doc)
    C.check(len(evs) > 0, label + ": ops written")
    bad = [e for e in evs if not all(k in e.get("args", {}) for k in
                                     ("External id", "Record function id", "Ev Idx"))]
    C.eq(len(bad), 0, label + ": every op has External id, Record function id, Ev Idx")
    rfs = [e["args"]["Record function id"] for e in evs]
    C.eq(len(rfs), len(set(rfs)), label + ": record function ids unique")
    # µs with 3 decimals, relative to the base: the text of the numbers
    text = raw.decode("utf-8")
    stamps = re.findall(r'"(?:ts|dur)": ([-0-9.eE+]+)', text)
    C.check(stamps and all(re.fullmatch(r"\d+\.\d{3}", t) for t in stamps),
            label + ": ts and dur in µs with 3 decimals",
            [t for t in stamps if not re.fullmatch(r"\d+\.\d{3}", t)][:5])
    C.check(all(0 <= e["ts"] < 7889238e6 * 1.01 for e in evs), label + ": ts relative to the base")
    # nesting per thread: ops are properly nested intervals, compared exactly
    # (as decimals: µs of ~5e12 late in Kineto's 3-month base period are past
    # a double's ns precision)
    by_tid = {}
    for e in ops(json.loads(raw, parse_float=decimal.Decimal)):
        by_tid.setdefault(e["tid"], []).append((e["ts"], -e["dur"], e["ts"] + e["dur"]))
    crossing = 0
    for tid, iv in by_tid.items():
        iv.sort()
        stack = []
        for s, _, end in iv:
            while stack and stack[-1] <= s:
                stack.pop()  # ended before (or as) this one starts: a sibling
            if stack and end > stack[-1]:
                crossing += 1
            stack.append(end)
    C.eq(crossing, 0, label + ": scopes nest on each thread")
    if shapes:
        lin = [e for e in evs if e["name"] == "aten::linear"]
        C.check(lin and all(e["args"].get("Input Dims") == [[3, 4], [3, 4], []] and
                            e["args"].get("Input type") == ["float", "float", "Scalar"] for e in lin),
                label + ": Input Dims / Input type", lin[:1])
    mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    C.check(all(e["ph"] == "i" and e["s"] == "t" and e["cat"] == "cpu_instant_event" and
                set(e["args"]) == {"Total Reserved", "Total Allocated", "Bytes", "Addr",
                                   "Device Id", "Device Type", "Ev Idx"} for e in mem),
            label + ": [memory] instants with Kineto's args")
    return evs, mem


def check_et(label, et, evs):
    nodes = et["nodes"]
    C.eq(et.get("schema"), "1.1.1-chakra.0.0.4", label + ": ET schema")
    ids = [n["id"] for n in nodes]
    C.eq(len(ids), len(set(ids)), label + ": ET node ids unique")
    idset = set(ids)
    C.check(all(n["ctrl_deps"] in idset for n in nodes), label + ": ctrl_deps point at nodes")
    C.eq(nodes[-1]["name"], "[pytorch|profiler|execution_trace|process]", label + ": root last")
    C.eq(nodes[-1]["id"], 1, label + ": root id 1")

    def attr(n, k):
        return next((a["value"] for a in n["attrs"] if a["name"] == k), None)
    roots = ("[pytorch|profiler|execution_trace|process]", "[pytorch|profiler|execution_trace|thread]")
    et_rf = sorted(attr(n, "rf_id") for n in nodes if n["name"] not in roots)
    k_rf = sorted(e["args"].get("Record function id", -1) for e in evs)
    C.eq(et_rf, k_rf, label + ": PyTorch's rule: sorted ET rf_ids == sorted Kineto Record function ids")
    # an op's parent is the op that encloses it in the Kineto file
    by_rf = dict((e["args"]["Record function id"], e) for e in evs)
    node_rf = dict((n["id"], attr(n, "rf_id")) for n in nodes)
    wrong = 0
    for n in nodes:
        if n["name"] in roots:
            continue
        p = node_rf.get(n["ctrl_deps"])
        child, parent = by_rf.get(attr(n, "rf_id")), by_rf.get(p)
        # 2e-3: float µs near 5e12 (late in Kineto's base period) are ~1e-3 apart
        if parent and child and not (parent["ts"] <= child["ts"] and
                                      child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + 2e-3):
            wrong += 1
    C.eq(wrong, 0, label + ": ctrl_deps is an enclosing op")


def check_schedule(tmp, gz):
    d = os.path.join(tmp, "sched" + ("_gz" if gz else ""))
    os.makedirs(d)
    cp, kv = demo("schedule-gz" if gz else "schedule", d)
    C.eq(cp.returncode, 0, "schedule: exit code")
    C.eq(kv.get("result"), PLAIN_RESULT and str(int(PLAIN_RESULT) * 10), "schedule: the program's result")
    suffix = ".pt.trace.json" + (".gz" if gz else "")
    files = sorted(glob.glob(os.path.join(d, "worker0.*" + suffix)))
    C.eq(len(files), 1, "schedule: one trace_ready over 10 steps")
    C.eq(kv.get("traces"), "1", "schedule: stats traces")
    C.eq(glob.glob(os.path.join(d, "*.tmp")), [], "schedule: no .tmp left")
    if not files:
        return
    name = os.path.basename(files[0])
    C.check(name.split(".")[1].isdigit() and len(name.split(".")[1]) >= 18,
            "schedule: <worker>.<time_ns>" + suffix, name)
    doc, raw = load(files[0])
    C.eq(doc["traceName"], name, "schedule: traceName is the file's name")
    evs, mem = check_kineto("schedule", doc, raw)
    steps = sorted(e["name"] for e in evs if e["name"].startswith("ProfilerStep#"))
    C.eq(steps, ["ProfilerStep#5", "ProfilerStep#6"], "schedule: the active steps' annotations")
    C.eq(sum(1 for e in evs if e["name"] == "aten::linear"), 2, "schedule: the ops of 2 steps")
    C.eq(len(mem), 4, "schedule: 2 allocations and 2 frees")
    C.check(all(e["cat"] == "user_annotation" for e in evs if e["name"].startswith("ProfilerStep")),
            "schedule: steps are user_annotation")
    tids = set(e["tid"] for e in evs)
    C.check(len(tids) in (1, 2), "schedule: threads", tids)
    et_files = glob.glob(os.path.join(d, "worker0.*.pt.et.json" + (".gz" if gz else "")))
    C.eq(len(et_files), 1, "schedule: one Execution Trace beside it")
    if et_files:
        et, _ = load(et_files[0])
        check_et("schedule", et, evs)
    # tracetool reads it
    cp = te.run_tool(["info", files[0]])
    C.eq(cp.returncode, 0, "schedule: tracetool info reads it")
    cp = te.run_tool(["averages", "--format", "json", files[0]])
    if C.eq(cp.returncode, 0, "schedule: tracetool averages reads it"):
        rows = json.loads(cp.stdout)["traces"][0]["rows"]
        got = dict((r["name"], r["count"]) for r in rows)
        C.eq(got.get("aten::linear"), 2, "schedule: averages counts aten::linear")
        C.eq(got.get("ProfilerStep*"), 2, "schedule: averages groups ProfilerStep#N")


def check_names(tmp):
    d = os.path.join(tmp, "names")
    os.makedirs(d)
    cp, kv = demo("names", d)
    C.eq(cp.returncode, 0, "names: exit code")
    doc, raw = load(os.path.join(d, "trace.json"))  # json.loads: valid JSON, valid UTF-8
    names = [e["name"] for e in ops(doc)]
    C.eq(names, ["quote\"back\\slash", "ctl\x01\x1f\n\t", "bad\ufffd\ufffd(utf8\ufffd\ufffd",
                 "ok \u00e9\u20ac"], "names: escaped, not UTF-8 as U+FFFD")
    et, _ = load(os.path.join(d, "trace.et.json"))
    check_et("names", et, ops(doc))


def check_threads(tmp):
    d = os.path.join(tmp, "threads")
    os.makedirs(d)
    cp, kv = demo("threads", d, timeout=300)
    C.eq(cp.returncode, 0, "threads: exit code")
    doc, raw = load(os.path.join(d, "trace.json"))
    evs, _ = check_kineto("threads", doc, raw, shapes=False)
    C.eq(str(len(evs)), kv.get("scopes"), "threads: every recorded scope is written")
    C.eq(len(evs), 8 * 4000 * 2, "threads: all 64,000 scopes")
    C.eq(kv.get("dropped"), "0", "threads: none dropped")
    C.eq(len(set(e["tid"] for e in evs)), 8, "threads: 8 threads")
    et, _ = load(os.path.join(d, "trace.et.json"))
    check_et("threads", et, evs)


def check_race(tmp):
    cp, kv = demo("race", tmp, timeout=300)
    C.eq(cp.returncode, 0, "race: exit code (sanitizers report races as failures)")
    C.check(int(kv.get("windows", 0)) > 10, "race: many windows ended while threads appended",
            kv.get("windows"))
    C.eq(kv.get("window_scopes"), kv.get("scopes"), "race: the windows hold every recorded scope")
    C.eq(kv.get("traces"), kv.get("windows"), "race: one trace_ready per window")


def check_fork(tmp):
    d = os.path.join(tmp, "fork")
    os.makedirs(d)
    cp, kv = demo("fork", d, timeout=60)
    C.eq(cp.returncode, 0, "fork: exit code")
    C.eq(kv.get("child"), "7", "fork: the child ran to its exit (no deadlock)")
    C.eq(kv.get("result"), PLAIN_RESULT and str(int(PLAIN_RESULT) * 2), "fork: the parent's result")
    doc, raw = load(os.path.join(d, "trace.json"))
    pids = set(e["pid"] for e in ops(doc))
    C.eq(len(pids), 1, "fork: only the parent's events")
    C.eq(sum(1 for e in ops(doc) if e["name"] == "aten::linear"), 2,
         "fork: the parent's two steps, not the child's")


def check_fail(tmp):
    d = os.path.join(tmp, "fail")
    os.makedirs(d)
    cp, kv = demo("fail", d)
    C.eq(cp.returncode, 0, "fail: exit code")
    C.eq(kv.get("start"), "unwritable -4", "fail: an unwritable directory: TT_CAP_EIO")
    out = cp.stdout.decode()
    C.check("start badregex -2" in out, "fail: a bad filter: TT_CAP_EINVAL", out)
    C.check("start ok 0" in out and "start again -1" in out, "fail: a second start: TT_CAP_EBUSY")
    C.check("stop again -5" in out, "fail: stop twice: TT_CAP_EOFF")
    C.check("log cannot make the directory /etc/passwd/traces" in out, "fail: said through the log callback", out)
    C.eq(kv.get("result"), PLAIN_RESULT and str(int(PLAIN_RESULT) * 2), "fail: the work ran")
    files = glob.glob(os.path.join(d, "*.pt.trace.json"))
    C.eq(len(files), 1, "fail: the good profile's trace")
    if files:
        doc, _ = load(files[0])
        C.eq(doc["tracetool_capture"]["ignored_starts"], 1, "fail: the ignored start is in the trace")


def check_gpu_off(tmp):
    """GPU capture asked for on a host with no GPU and no driver: against the
    real libcupti of the toolkit the library was built with (or none)"""
    have_cupti = os.path.exists(os.path.join(CUDA_ROOT, "include", "cupti.h"))
    for label, env, want in (
            ("no driver", {}, "GPU capture off: cuptiActivityEnable: " if have_cupti else
             "GPU capture off: this build has no CUPTI"),
            ("no libcupti", {"TT_CAPTURE_CUPTI": "/nonexistent/libcupti.so"},
             "GPU capture off: libcupti not found" if have_cupti else
             "GPU capture off: this build has no CUPTI")):
        d = os.path.join(tmp, "gpu_" + label.replace(" ", "_"))
        os.makedirs(d)
        e = dict(os.environ)
        e.update(env)
        cp = subprocess.run([DEMO, "gpu", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=120, env=e)
        out = cp.stdout.decode("utf-8", "replace")
        C.eq(cp.returncode, 0, "gpu %s: exit code" % label)
        logs = [line[4:] for line in out.splitlines() if line.startswith("log ")]
        C.check(len(logs) == 1, "gpu %s: one log line" % label, out)
        C.check(logs and logs[0].startswith(want), "gpu %s: the log line says why" % label, logs)
        C.check("start 0" in out.splitlines(), "gpu %s: the profile starts" % label, out)
        C.check("gpu 0" in out.splitlines(), "gpu %s: stats say GPU capture is off" % label, out)
        C.eq(out.split("result ")[-1].split()[0] if "result " in out else None,
             PLAIN_RESULT and str(int(PLAIN_RESULT) * 3), "gpu %s: the program's result" % label)
        files = glob.glob(os.path.join(d, "gpu.*.pt.trace.json"))
        C.eq(len(files), 1, "gpu %s: the CPU trace is written" % label)
        if not files:
            continue
        doc, raw = load(files[0])
        evs, mem = check_kineto("gpu " + label, doc, raw)
        C.eq(sum(1 for ev in evs if ev["name"] == "aten::linear"), 3, "gpu %s: every op" % label)
        C.eq(sum(1 for ev in evs if ev["name"] == "aten::addmm"), 3, "gpu %s: every child" % label)
        C.eq(len(mem), 6, "gpu %s: every memory event" % label)
        C.eq(doc["deviceProperties"], [], "gpu %s: no devices" % label)
        C.check("tracetool_gpu" not in doc, "gpu %s: no GPU counts without GPU capture" % label)
        cp = te.run_tool(["info", files[0]])
        C.eq(cp.returncode, 0, "gpu %s: tracetool info reads it" % label)


def check_nospace(tmp):
    """a full disk, and no memory (TT_CAPTURE_FAULT=alloc): said once, no
    file half-written, the program's result the same"""
    for label, env, said in (("full disk", {}, "File too large"),
                             ("no memory", {"TT_CAPTURE_FAULT": "alloc"}, "out of memory")):
        d = os.path.join(tmp, label.replace(" ", "_"))
        os.makedirs(d)
        cp = subprocess.run([DEMO, "nospace", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=60, env=dict(os.environ, **env))
        out = cp.stdout.decode()
        kv = dict(ln.split(" ", 1) for ln in out.splitlines() if " " in ln)
        C.eq(cp.returncode, 0, label + ": exit code")
        C.eq(kv.get("result"), PLAIN_RESULT and str(int(PLAIN_RESULT) * 200), label + ": the work's result")
        C.eq(kv.get("logs"), "1", label + ": said once")
        C.check(said in out, label + ": the log says why", out[-300:])
        C.eq(os.listdir(d), [], label + ": nothing half-written is left")


def check_limits(tmp):
    for mode in ("cap", "maxdur", "filter"):
        d = os.path.join(tmp, mode)
        os.makedirs(d)
        cp, kv = demo(mode, d, timeout=300)
        C.eq(cp.returncode, 0, mode + ": exit code")
        C.eq(kv.get("result"), PLAIN_RESULT and str(int(PLAIN_RESULT) * 3000), mode + ": the work ran")
        doc, raw = load(os.path.join(d, "trace.json"))
        evs = ops(doc)
        info = doc["tracetool_capture"]
        if mode == "filter":
            C.eq(sorted(set(e["name"] for e in evs)), ["aten::addmm"], "filter: only matching names")
            C.eq(info["dropped_events"], 0, "filter: filtered is not dropped")
        else:
            C.check(info["dropped_events"] > 0, mode + ": what was dropped is counted", info)
            C.eq(str(info["dropped_events"]), kv.get("dropped"), mode + ": the count in the trace")
            C.check(len(evs) < 6000, mode + ": fewer scopes than the program ran", len(evs))
        if mode == "maxdur":
            C.eq(info["max_duration_reached"], 1, "maxdur: said in the trace")


def check_exit(tmp):
    d = os.path.join(tmp, "exit")
    os.makedirs(d)
    cp, kv = demo("exit", d)
    C.eq(cp.returncode, 3, "exit: the program's exit status")
    files = glob.glob(os.path.join(d, "atexit.*.pt.trace.json"))
    C.eq(len(files), 1, "exit: the open window written at exit()")
    if files:
        doc, _ = load(files[0])
        C.eq(sum(1 for e in ops(doc) if e["name"] == "aten::linear"), 1, "exit: its ops")


def check_crash(tmp):
    for mode in ("abort", "kill", "kill-writing"):
        d = os.path.join(tmp, mode)
        os.makedirs(d)
        cp, kv = demo(mode, d, timeout=120)
        if mode == "kill-writing":
            C.eq(cp.returncode, 0, mode + ": exit code")
        else:
            C.check(cp.returncode < 0, mode + ": died of its signal", cp.returncode)
        finals = [f for f in os.listdir(d) if not f.endswith(".tmp")]
        good = []
        for f in finals:  # a final file is always complete JSON
            try:
                load(os.path.join(d, f))
                good.append(f)
            except ValueError:
                pass
        C.eq(sorted(good), sorted(finals), mode + ": no half-written final file")
        if mode == "kill-writing":
            C.check(b"killed while writing" in cp.stdout, mode + ": killed in the middle of a write")
            C.check("killed.json" not in finals, mode + ": the killed writer left no final file")


def check_metrics(tmp):
    d = os.path.join(tmp, "metrics")
    os.makedirs(d)
    cp, kv = demo("metrics", d)
    C.eq(cp.returncode, 0, "metrics: exit code")
    out = cp.stdout.decode()
    console = [ln for ln in out.splitlines() if ln.startswith("[")]
    C.check(all(re.fullmatch(r"\[\d+\.\d+\]\[agent\]: [\w.]+=-?\d+", ln) for ln in console) and
            len(console) == 5, "metrics: torchelastic's console lines", console)
    C.eq([ln.split(": ", 1)[1].split("=")[0] for ln in console],
         ["restarts", "train.success", "train.duration.ms", "train.failure", "train.duration.ms"],
         "metrics: put_metric, then prof's success / failure / duration.ms")
    C.check("prof ok 0" in out and "prof fail 42" in out, "metrics: prof returns the function's result")
    C.check("nowhere" not in out, "metrics: a group without a handler goes to the null handler")
    lines = [json.loads(ln) for ln in open(os.path.join(d, "metrics.jsonl"))]
    C.eq([(x["group"], x["name"], x["value"]) for x in lines], [("jsonl", 'quoted"name', -3)],
         "metrics: JSON lines")
    doc, _ = load(os.path.join(d, "metrics_trace.json"))
    cs = [e for e in doc["traceEvents"] if e.get("ph") == "C"]
    C.eq([(e["name"], e["args"]) for e in cs], [("trace", {"loss_x1000": 1234})],
         "metrics: the trace handler writes a counter event")
    C.check("profile_function 102 depth 3" in out,
            "metrics: a profiled function calling itself runs every level and returns", out)
    doc, _ = load(os.path.join(d, "function_trace.json"))
    C.eq(sum(1 for e in ops(doc) if e["name"] == "nested_work"), 3,
         "metrics: the outer profile holds the nested calls' scopes")
    C.check("profile_function unwritable 100" in out and "log cannot make the directory" in out,
            "metrics: capture that cannot start: the function runs and returns its result")


def check_clock(tmp):
    """times in µs on the program's clock: the TSC (where invariant) and
    clock_gettime (TT_CAPTURE_NO_TSC) both give the sleeps' lengths. The
    lower bounds are the sleeps themselves; the upper bounds are what the
    program measured around the scopes with CLOCK_MONOTONIC (it prints them),
    not a fixed number of ms: a loaded machine oversleeps"""
    for env in ({}, {"TT_CAPTURE_NO_TSC": "1"}):
        label = "clock " + ("clock_gettime" if env else "default")
        d = os.path.join(tmp, label.replace(" ", "_"))
        os.makedirs(d)
        cp = subprocess.run([DEMO, "sleep", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=60, env=dict(os.environ, **env))
        C.eq(cp.returncode, 0, label + ": exit code")
        m = re.search(r"^sleep outer_us (\d+) (\d+) span_us (\d+)$", cp.stdout.decode(), re.M)
        if not C.check(m, label + ": the program's own measure printed", cp.stdout[-300:]):
            continue
        outer, span = [int(m.group(1)), int(m.group(2))], int(m.group(3))
        doc, _ = load(os.path.join(d, "trace.json"))
        evs = sorted(ops(doc), key=lambda e: e["ts"])
        C.eq(len(evs), 2, label + ": two scopes")
        if len(evs) == 2:
            # 1% + 100 µs: the TSC's rate is measured over the whole window
            C.check(all(19900 <= e["dur"] <= o * 1.01 + 100 for e, o in zip(evs, outer)),
                    label + ": 20 ms each, within what the program measured",
                    ([e["dur"] for e in evs], outer))
            gap = evs[1]["ts"] - evs[0]["ts"]
            C.check(29900 <= gap <= span * 1.01 + 100, label + ": 30 ms apart, within the span",
                    (gap, span))


def check_malloc_preload(tmp):
    """an unmodified program with libtracetool_capture_malloc.so preloaded"""
    lib, prog = os.environ.get("CAPTURE_MALLOC"), os.environ.get("ALLOC_PROG")
    if lib == "none":
        print("note: malloc interposer not run in a sanitizer build (it runs in the release one)")
        return
    if not (lib and prog and os.path.exists(lib) and os.path.exists(prog)):
        C.skip("malloc interposer", "CAPTURE_MALLOC / ALLOC_PROG not built")
        return
    d = os.path.join(tmp, "preload")
    plain = subprocess.run([prog], stdout=subprocess.PIPE, timeout=60)
    env = dict(os.environ, LD_PRELOAD=lib, TT_CAPTURE_DIR=d, TT_CAPTURE_WORKER="ap")
    pre = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, env=env)
    C.eq((pre.returncode, pre.stdout), (plain.returncode, plain.stdout),
         "preload: the program's exit status and output unchanged")
    files = glob.glob(os.path.join(d, "ap.*.pt.trace.json"))
    C.eq(len(files), 1, "preload: the trace written at exit")
    if not files:
        return
    doc, _ = load(files[0])
    mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    allocs = [e for e in mem if e["args"]["Bytes"] > 0]
    frees = [e for e in mem if e["args"]["Bytes"] < 0]
    C.check(len(allocs) >= 1600 and len(frees) >= 1600,
            "preload: 1000 blocks, 100 reallocs and 500 aligned blocks (posix_memalign, "
            "aligned_alloc, memalign, valloc, pvalloc)", (len(allocs), len(frees)))
    live, unseen, order = {}, [], sorted(mem, key=lambda e: (e["ts"], e["args"]["Ev Idx"]))
    for e in order:
        a = e["args"]["Addr"]
        if a not in live and e["args"]["Bytes"] < 0:
            unseen.append(e["args"])
        live[a] = live.get(a, 0) + e["args"]["Bytes"]
    left = [v for v in live.values() if v]
    C.check(len(left) <= 2 and all(v > 0 for v in left),
            "preload: every block's events balance (stdio's buffer may live on)", left[:5])
    C.eq(unseen[:3], [], "preload: no free of a block whose allocation was not seen")
    low = [e["args"]["Total Allocated"] for e in mem if e["args"]["Total Allocated"] < 0]
    C.eq(low[:3], [], "preload: Total Allocated never below 0")
    C.check(all(e["args"]["Device Type"] == 0 and e["args"]["Device Id"] == -1 for e in mem),
            "preload: device cpu")
    pages = [e for e in allocs if e["args"]["Addr"] % 4096 == 0]
    C.check(len(pages) >= 2 * 100, "preload: valloc / pvalloc blocks (page-aligned) recorded",
            len(pages))
    # TT_CAPTURE_WORKER must name a file in TT_CAPTURE_DIR, never a path out of it
    wd = os.path.join(tmp, "preload_worker")
    out = os.path.join(wd, "out")
    os.makedirs(out)
    env = dict(os.environ, LD_PRELOAD=lib, TT_CAPTURE_DIR=out, TT_CAPTURE_WORKER="../x")
    pre = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, env=env)
    C.eq((pre.returncode, pre.stdout), (plain.returncode, plain.stdout),
         "preload TT_CAPTURE_WORKER=../x: the program unchanged")
    C.eq(os.listdir(wd), ["out"], "preload TT_CAPTURE_WORKER=../x: nothing written outside the directory")
    C.eq(len(glob.glob(os.path.join(out, "*.pt.trace.json"))), 1,
         "preload TT_CAPTURE_WORKER=../x: the trace in TT_CAPTURE_DIR, default name")
    C.check(b"worker name" in pre.stderr, "preload TT_CAPTURE_WORKER=../x: said", pre.stderr)
    html = os.path.join(tmp, "preload.html")
    cp = te.run_tool(["memtimeline", files[0], html])
    C.eq(cp.returncode, 0, "preload: tracetool memtimeline draws it")


def check_user_demo(tmp):
    """capture-demo, the example program: torch's test schedule on 4 threads"""
    d = os.path.join(tmp, "user_demo")
    cp = subprocess.run([USER_DEMO, "--out", d, "--steps", "10", "--schedule", "3,1,1,2,1",
                         "--threads", "4", "--et", "--memory", "--worker", "w"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    C.eq(cp.returncode, 0, "capture-demo: exit code")
    C.check(b"capture on" in cp.stdout, "capture-demo: says capture was on", cp.stdout)
    files = glob.glob(os.path.join(d, "w.*.pt.trace.json"))
    ets = glob.glob(os.path.join(d, "w.*.pt.et.json"))
    C.eq((len(files), len(ets)), (1, 1), "capture-demo: one trace and its ET")
    if not files or not ets:
        return
    doc, raw = load(files[0])
    evs, mem = check_kineto("capture-demo", doc, raw, shapes=False)
    C.eq(sorted(e["name"] for e in evs if e["name"].startswith("ProfilerStep#")),
         ["ProfilerStep#5", "ProfilerStep#6"], "capture-demo: ProfilerStep#5 and #6 only")
    counts = {}
    for e in evs:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    C.eq(dict((k, counts.get(k)) for k in ("step", "aten::linear", "aten::addmm", "aten::relu")),
         {"step": 8, "aten::linear": 8, "aten::addmm": 8, "aten::relu": 8},
         "capture-demo: 4 threads x 2 recorded steps of each op")
    C.eq(len(set(e["tid"] for e in evs if e["name"] == "step")), 4, "capture-demo: 4 threads")
    C.eq(sum(e["args"]["Bytes"] for e in mem), 0, "capture-demo: --memory events balance to zero")
    C.eq(len(mem), 32, "capture-demo: an allocation and a free per op")
    et, _ = load(ets[0])
    check_et("capture-demo", et, evs)
    db = os.path.join(tmp, "demo.db")
    cp = te.run_tool(["ingest", "-q", db, files[0]])
    C.eq(cp.returncode, 0, "capture-demo: tracetool ingest")
    cp = te.run_tool(["averages", "--format", "json", db])
    if C.eq(cp.returncode, 0, "capture-demo: tracetool averages on the database"):
        rows = json.loads(cp.stdout)["traces"][0]["rows"]
        C.eq(dict((r["name"], r["count"]) for r in rows if r["name"].startswith("aten::")),
             {"aten::linear": 8, "aten::addmm": 8, "aten::relu": 8},
             "capture-demo: the database counts what the demo did")
    cp = te.run_tool(["crosscheck", "--strict", ets[0], files[0]])
    C.eq(cp.returncode, 0, "capture-demo: tracetool crosscheck --strict")
    cp = te.run_tool(["averages", "--format", "json", files[0]])
    if C.eq(cp.returncode, 0, "capture-demo: tracetool averages"):
        rows = json.loads(cp.stdout)["traces"][0]["rows"]
        C.eq(dict((r["name"], r["count"]) for r in rows if r["name"].startswith("aten::")),
             {"aten::linear": 8, "aten::addmm": 8, "aten::relu": 8},
             "capture-demo: averages counts what the demo did")
    html = os.path.join(tmp, "demo_mem.html")
    cp = te.run_tool(["memtimeline", "--device", "cpu", files[0], html])
    C.eq(cp.returncode, 0, "capture-demo: tracetool memtimeline draws the memory events")
    C.check(os.path.exists(html) and os.path.getsize(html) > 1000, "capture-demo: memtimeline html")
    # a worker name is one file name: never a path out of --out
    wd = os.path.join(tmp, "demo_worker", "a")
    out = os.path.join(wd, "out")
    os.makedirs(out)
    cp = subprocess.run([USER_DEMO, "--out", out, "--steps", "2", "--worker", "../../esc"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    C.eq(cp.returncode, 0, "capture-demo --worker ../../esc: exit code")
    C.eq((os.listdir(os.path.join(tmp, "demo_worker")), os.listdir(wd)), (["a"], ["out"]),
         "capture-demo --worker ../../esc: nothing written outside --out")
    C.eq(len(glob.glob(os.path.join(out, "*.pt.trace.json"))), 1,
         "capture-demo --worker ../../esc: the trace in --out, default name")
    C.check(b"worker name" in cp.stderr, "capture-demo --worker ../../esc: said", cp.stderr)
    # capture that cannot write: the workload still runs, exit 0
    cp = subprocess.run([USER_DEMO, "--out", "/etc/passwd/x", "--steps", "3"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    C.eq(cp.returncode, 0, "capture-demo: exit 0 when capture fails")
    C.check(b"result" in cp.stdout and b"cannot make the directory" in cp.stderr,
            "capture-demo: the work ran, the failure said once", (cp.stdout, cp.stderr))


def check_reenter(tmp):
    """the callbacks (on_trace_ready, log) call the API on their own thread:
    never a deadlock; stats work, step and start say TT_CAP_ECALLBACK (-6),
    stop and shutdown take effect when the callback returns"""
    d = os.path.join(tmp, "reenter")
    os.makedirs(d)
    try:
        cp, kv = demo("reenter", d, timeout=120)
    except subprocess.TimeoutExpired:
        C.check(False, "reenter: no deadlock (timed out)")
        return
    out = cp.stdout.decode("utf-8", "replace").splitlines()
    C.eq(cp.returncode, 0, "reenter: exit code")
    C.check("start 0" in out, "reenter: the profile starts", out[:5])
    C.check(any(ln.startswith("log calls: profiler won't be using warmup") for ln in out),
            "reenter: the log callback ran", out[:5])
    C.eq(out.count("log calls: step -6 start -6"), 2,
         "reenter: step and start from the log callback: TT_CAP_ECALLBACK")
    for n in (1, 2):
        C.check("ready %d: step -6 start -6" % n in out,
                "reenter: step and start from on_trace_ready %d: TT_CAP_ECALLBACK" % n, out)
        C.check("ready %d: write 0" % n in out and "ready %d: child 9" % n in out,
                "reenter: on_trace_ready %d writes its trace and forks" % n, out)
        C.check(any(ln.startswith("ready %d: error " % n) and "from inside a callback" in ln for ln in out),
                "reenter: tt_cap_last_error says why", out)
        doc, raw = load(os.path.join(d, "reenter%d.json" % n))
        C.check(len(ops(doc)) > 0, "reenter: trace %d written from the callback" % n)
    C.check(any(ln.startswith("ready 1: traces 1 ") for ln in out),
            "reenter: tt_cap_get_stats from on_trace_ready", out)
    C.check("ready 2: stop 0" in out, "reenter: stop from on_trace_ready: TT_CAP_OK", out)
    C.check("ready 3: step -6 start -6" not in out, "reenter: no window after that stop", out)
    C.check("step 3 0" in out and "step 4 -5" in out and "stop -5" in out,
            "reenter: the profile stopped when the callback returned", out)
    C.check("log stop: stop 0" in out and "start2 0" in out and "step2 -5" in out,
            "reenter: stop from the log callback during a start", out)
    C.check("log shutdown: shutdown returned" in out and "start3 0" in out and "step3 -5" in out,
            "reenter: shutdown from the log callback: a stop", out)
    C.check("start4 0" in out and "stop4 0" in out, "reenter: the library works after all that", out)
    C.eq(kv.get("traces"), "2", "reenter: stats traces")


def check_sigexit(tmp):
    """exit(5) from a signal handler while threads are inside scopes (the
    handler's own thread too): the program exits with 5 every time, and a
    trace written is complete"""
    runs = 7
    # exit() from a handler is the program's own signal-unsafe call: under
    # ThreadSanitizer only races are failures here, and LeakSanitizer's check
    # at exit would wait for the allocator's lock that the interrupted malloc
    # holds (the library itself writes nothing then)
    env = dict(os.environ, TSAN_OPTIONS=(os.environ.get("TSAN_OPTIONS", "") +
                                         ":report_signal_unsafe=0").lstrip(":"),
               ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    for who in ("raise", "thread", "main"):
        got = []
        for i in range(runs):
            d = os.path.join(tmp, "sigexit_%s_%d" % (who, i))
            os.makedirs(d)
            try:
                cp = subprocess.run([DEMO, "sigexit-" + who, d], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, timeout=60, env=env)
                got.append(cp.returncode)
                if cp.returncode != 5 and cp.stderr:
                    print(cp.stderr.decode("utf-8", "replace")[-2000:])
            except subprocess.TimeoutExpired:
                got.append("hang")
            bad = []
            for f in os.listdir(d):
                try:
                    doc, _ = load(os.path.join(d, f))
                    C.check("tracetool_capture" in doc, "sigexit: a complete trace", f)
                except ValueError:
                    bad.append(f)
            C.eq(bad, [], "sigexit %s: no half-written file" % who)
        C.eq(got, [5] * runs, "sigexit %s: exit(5) from the handler, %d runs" % (who, runs))


def check_nullname(tmp):
    d = os.path.join(tmp, "nullname")
    os.makedirs(d)
    cp, kv = demo("nullname", d)
    C.eq(cp.returncode, 0, "nullname: exit code (no crash)")
    C.eq([f for f in os.listdir(d) if f.endswith(".tmp")], [], "nullname: no .tmp left")
    files = glob.glob(os.path.join(d, "nullname.*.pt.trace.json"))
    ets = glob.glob(os.path.join(d, "nullname.*.pt.et.json"))
    C.eq((len(files), len(ets)), (1, 1), "nullname: the trace and its ET written")
    if not files or not ets:
        return
    doc, raw = load(files[0])
    evs, _ = check_kineto("nullname", doc, raw, shapes=False)
    C.eq(sorted(e["name"] for e in evs), ["(null)", "aten::named"],
         "nullname: a NULL name written as (null)")
    et, _ = load(ets[0])
    check_et("nullname", et, evs)
    C.check(any(n["name"] == "(null)" for n in et["nodes"]), "nullname: (null) in the ET")


def check_startrace(tmp):
    """8 threads call tt_cap_start at once (ThreadSanitizer: no race)"""
    cp, kv = demo("startrace", tmp, timeout=120)
    C.eq(cp.returncode, 0, "startrace: exit code (sanitizers report races as failures)")
    if cp.returncode:
        print(cp.stderr.decode("utf-8", "replace")[-3000:])
    C.eq(kv.get("starts"), "ok=1 busy=7 said=7",
         "startrace: one profile; seven told TT_CAP_EBUSY, each with its reason")
    C.eq(kv.get("ignored"), "7", "startrace: the ignored starts counted")
    C.eq(kv.get("window_scopes"), kv.get("scopes"), "startrace: the window holds every scope")


def main():
    global PLAIN_RESULT
    if not os.access(DEMO, os.X_OK):
        C.check(False, "capture_scenarios built", DEMO)
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_capture_") as tmp:
        cp, kv = demo("plain", tmp)
        PLAIN_RESULT = kv.get("result")
        C.check(cp.returncode == 0 and PLAIN_RESULT, "plain run", cp.stdout)
        C.section("schedule", check_schedule, tmp, False)
        C.section("schedule gz", check_schedule, tmp, True)
        C.section("names", check_names, tmp)
        C.section("threads", check_threads, tmp)
        C.section("race", check_race, tmp)
        C.section("fork", check_fork, tmp)
        C.section("fail", check_fail, tmp)
        C.section("limits", check_limits, tmp)
        C.section("nospace", check_nospace, tmp)
        C.section("gpu off", check_gpu_off, tmp)
        C.section("exit", check_exit, tmp)
        C.section("crash", check_crash, tmp)
        C.section("metrics", check_metrics, tmp)
        C.section("clock", check_clock, tmp)
        C.section("reenter", check_reenter, tmp)
        C.section("sigexit", check_sigexit, tmp)
        C.section("nullname", check_nullname, tmp)
        C.section("startrace", check_startrace, tmp)
        C.section("malloc preload", check_malloc_preload, tmp)
        if os.access(USER_DEMO, os.X_OK):
            C.section("capture-demo", check_user_demo, tmp)
        else:
            C.check(False, "capture-demo built", USER_DEMO)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
