#!/usr/bin/env python3
"""`tracetool breakdown`: which kernels are communication, --comm-pattern,
and the per-step page of `--by step --html` (issue 23).

A hand-made two-step trace of a B200 vLLM-like rank holds the kernels the
issue names: a PyTorch symmetric-memory multimem all-reduce, vLLM's custom
all-reduce (cross_device_reduce_1stage), an NCCL all-gather, and the compute
kernels whose names come near (at::native::reduce_kernel, cub's
DeviceReduce, Inductor's triton_poi_fused_all_reduce copy, DeepEP's
dispatch). The expected numbers come from this file alone: its own reading
of the documented rule (words of the function name, split at '_', '::',
camel case and digits, outside template arguments and parameters; a
collective token as one to three consecutive words; NCCL/RCCL/HCCL by
HTA's rule; multimem, nvshmem*, msccl*, userbuffers; never Inductor's fused
kernels) and interval unions computed here; per step, the activities whose
runtime call starts in ProfilerStep#N.

Then --comm-pattern (POSIX extended, repeatable) adds names, the same on a
database made by `tracetool ingest`, a bad or empty pattern is a one-line
usage error (exit 2) naming the option; and `--by step --html` draws a bar
and a table row per step whose parts are this file's numbers, the page
without --by has none, and in headless Chromium (when there is one) at
1400 px wide no table of the page needs horizontal scrolling, on this
trace and on the 8-rank DLRM job. Python standard library only.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, HERE)
import trace_expect as te  # noqa: E402
import test_render_browser as rb  # noqa: E402

C = te.Checker("breakdown_comm")

# ------------------------------------------------------------ the trace

MULTIMEM = ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>"
            "(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)")
CROSS = ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, "
         "vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)")
NCCL_AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
GEMM = "sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_execute_kernel__5x_cublas"
REDUCE = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
          "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>"
          "::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >"
          "(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
          "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)"
          "::{lambda(float, float)#1}>, unsigned int, float, 4>)")
CUB = "void cub::DeviceReduceSingleTileKernel<cub::DeviceReducePolicy<float>::Policy600, float*>(float*)"
INDUCTOR = "triton_poi_fused_all_reduce_0"
DEEPEP = "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)"
MY_AR = "my_custom_ar"
SPLITK = "void cublasLt::splitKreduce_kernel<32, 16, int, float>(cublasLt::cublasSplitKParams<float>)"

COMPUTE_S, COMM_S = 7, 20
# (name, stream, start us, duration us) in step 1; step 2 is the same 1000 us
# later with the communication kernels half as long again
KERNELS = [
    (GEMM, COMPUTE_S, 10, 100), (MULTIMEM, COMM_S, 100, 60), (REDUCE, COMPUTE_S, 170, 30),
    (CROSS, COMM_S, 190, 40), (CUB, COMPUTE_S, 250, 10), (INDUCTOR, COMPUTE_S, 262, 8),
    (NCCL_AG, COMM_S, 275, 25), (DEEPEP, COMM_S, 310, 40), (MY_AR, COMM_S, 355, 10),
    (SPLITK, COMPUTE_S, 360, 20),
]
STEP_US = 1000


def make_trace(path):
    evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (s + 1),
            "pid": 1, "tid": 1, "ts": s * STEP_US, "dur": STEP_US} for s in range(2)]
    corr = 0
    for s in range(2):
        for name, stream, ts, dur in KERNELS:
            corr += 1
            t = s * STEP_US + ts
            if s and stream == COMM_S:
                dur = dur * 3 // 2
            evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                        "tid": 1, "ts": t - 5, "dur": 3, "args": {"correlation": corr}})
            evs.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                        "ts": t, "dur": dur, "args": {"device": 0, "stream": stream,
                                                     "correlation": corr}})
    corr += 1
    evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
                "ts": 1395, "dur": 3, "args": {"correlation": corr}})
    evs.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)",
                "pid": 0, "tid": COMPUTE_S, "ts": 1400, "dur": 20,
                "args": {"device": 0, "stream": COMPUTE_S, "correlation": corr}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 8},
                   "traceEvents": evs}, f)
    return evs


# ---------------------------------------------- this file's reading of the rule

TOKENS = {"allreduce", "allgather", "allgatherv", "reducescatter", "reducescatterv", "alltoall",
          "alltoallv", "all2all", "all2allv", "sendrecv", "crossdevicereduce"}
LIBS = ("nvshmem", "msccl", "userbuffers", "kuserbuffers")


WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def word_runs(name):
    """the words of the function's name and namespaces, lower case, in runs
    that template arguments and parameter lists break"""
    name = name.replace("(anonymous namespace)", " ").replace("<unnamed>", " ")
    pieces, cur, depth = [], [], 0
    for ch in name + "(":
        if ch in "<(":
            if depth == 0:
                pieces.append("".join(cur))
                cur = []
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            cur.append(ch)
    return [[w.lower() for w in WORD.findall(p)] for p in pieces]


def is_comm(name, extra=()):
    if re.match(r"(nccl|rccl|hccl)", name) or "ncclKernel" in name or "ncclDevKernel" in name:
        return True
    if any(re.search(p, name) for p in extra):
        return True
    if name.startswith("triton_") and "_fused_" in name:
        return False  # Inductor: named after the ops it fused
    for ws in word_runs(name):
        for i, w in enumerate(ws):
            if w == "multimem" or w.startswith(LIBS):
                return True
            if any("".join(ws[i:i + n]) in TOKENS for n in (1, 2, 3) if i + n <= len(ws)):
                return True
    return False


def merged(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(m):
    return sum(b - a for a, b in m)


def expect(acts, extra=()):
    """acts: (kind, name, ts ns, end ns); the numbers of one row"""
    def cls(a):
        if a[0] != "kernel":
            return "memory"
        return "comm" if is_comm(a[1], extra) else "compute"
    comp = merged([(a[2], a[3]) for a in acts if cls(a) == "compute"])
    comm = merged([(a[2], a[3]) for a in acts if cls(a) == "comm"])
    both = merged([(a[2], a[3]) for a in acts if cls(a) != "memory"])
    allm = merged([(a[2], a[3]) for a in acts])
    ov = length(comp) + length(comm) - length(both)
    start, end = min(a[2] for a in acts), max(a[3] for a in acts)
    return {"window_ns": end - start, "busy_ns": length(allm), "compute_ns": length(comp),
            "comm_ns": length(comm), "overlap_ns": ov, "exposed_comm_ns": length(comm) - ov,
            "comm_kernels": sum(cls(a) == "comm" for a in acts),
            "kernels": sum(a[0] == "kernel" for a in acts)}


def activities(evs):
    """(kind, name, ts, end, step of its runtime call) in ns"""
    steps = [(e["ts"], e["ts"] + e["dur"], int(e["name"][13:])) for e in evs
             if e["name"].startswith("ProfilerStep#")]
    calls = dict((e["args"]["correlation"], e["ts"]) for e in evs if e["cat"] == "cuda_runtime")
    out = []
    for e in evs:
        if e["cat"] in ("kernel", "gpu_memcpy"):
            t = calls[e["args"]["correlation"]]
            step = [s[2] for s in steps if s[0] <= t < s[1]]
            out.append(("kernel" if e["cat"] == "kernel" else "memcpy", e["name"],
                        e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000, step[0] if step else None))
    return out


# ------------------------------------------------------------------ checks

def run_json(*args):
    cp = te.run_tool(["breakdown", "--format", "json"] + list(args))
    if not C.eq(cp.returncode, 0, "breakdown %s: exit code" % " ".join(args[:-1])):
        print(cp.stderr.decode("utf-8", "replace"))
        return None
    return json.loads(cp.stdout.decode())


def check_row(got, want, label):
    C.eq(dict((k, got.get(k)) for k in want), want, label)


def check_rule():
    """the rule of this file says what the issue asks, before tracetool is asked"""
    C.check(is_comm(MULTIMEM) and is_comm(CROSS) and is_comm(NCCL_AG),
            "the rule: multimem, custom and NCCL all-reduce/all-gather are communication")
    for n in (GEMM, REDUCE, CUB, INDUCTOR, DEEPEP, MY_AR, SPLITK, "scatter_gather_kernel"):
        C.check(not is_comm(n), "the rule: %s is compute" % n[:50])
    for n in ("one_shot_all_reduce", "two_shot_all_reduce_kernel_inplace", "multimem_all_gather",
              "nvshmemi_reduce_kernel", "all_to_all_kernel", "ReduceScatterKernel",
              "void tensorrt_llm::kernels::oneShotAllReduceKernel<half, 8>(int)", "all2all",
              "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"):
        C.check(is_comm(n), "the rule: %s is communication" % n[:50])


def check_classes(tmp, path, evs):
    acts = activities(evs)
    doc = run_json(path)
    if doc is None:
        return
    want = expect([a[:4] for a in acts])
    C.check(want["comm_ns"] > 0.15 * want["busy_ns"], "the trace's communication is no sliver",
            want)
    check_row(doc["ranks"][0], want, "rank row: multimem, custom and NCCL kernels are comm")
    fam = dict((f["family"], f["class"]) for f in doc["families"])
    comm_fams = sorted(f for f, c in fam.items() if c == "communication")
    C.eq(len(comm_fams), 3, "three communication families (%s)" % comm_fams)
    C.check(any("multimem" in f for f in comm_fams), "the multimem family is communication")
    C.check(not any("reduce_kernel" in f and "multimem" not in f for f in comm_fams),
            "at::native::reduce_kernel stays compute")
    # --by step: a row per step, from the activities launched in it
    doc = run_json("--by", "step", path)
    if doc is None:
        return
    for row in doc["steps"]:
        mine = [a[:4] for a in acts if a[4] == row["step"]]
        check_row(row, expect(mine), "step %d row" % row["step"])
    C.eq(sorted(r["step"] for r in doc["steps"]), [1, 2], "two step rows")


def check_patterns(tmp, path, evs):
    acts = [a[:4] for a in activities(evs)]
    one = [r"deep_ep::(intra|inter)node::"]
    two = one + ["custom_ar$"]
    for pats in (one, two):
        args = []
        for p in pats:
            args += ["--comm-pattern", p]
        doc = run_json(*(args + [path]))
        if doc is None:
            continue
        want = expect(acts, pats)
        check_row(doc["ranks"][0], want, "--comm-pattern %s: the rank row" % " ".join(pats))
        C.eq(want["comm_kernels"], expect(acts)["comm_kernels"] + 2 * len(pats),
             "%d pattern(s) add %d kernels" % (len(pats), 2 * len(pats)))
    # the same on a database: the class is given when breakdown reads it
    db = os.path.join(tmp, "t.db")
    cp = te.run_tool(["ingest", "-q", db, path])
    C.eq(cp.returncode, 0, "ingest")
    doc = run_json("--comm-pattern", one[0], "--comm-pattern", two[1], db)
    if doc is not None:
        check_row(doc["ranks"][0], expect(acts, two), "--comm-pattern on a database")
    # a pattern that matches nothing changes nothing
    doc = run_json("--comm-pattern", "^no such kernel$", path)
    if doc is not None:
        check_row(doc["ranks"][0], expect(acts), "a pattern that matches nothing")
    for bad, what in (("(unclosed", "a bad regex"), ("a{2,1}", "a bad interval"),
                      ("", "an empty pattern")):
        cp = te.run_tool(["breakdown", "--comm-pattern", bad, path])
        err = cp.stderr.decode("utf-8", "replace")
        C.check(cp.returncode == 2 and cp.stdout == b"" and err.count("\n") == 1
                and "--comm-pattern" in err, "%s: exit 2, one line naming the option" % what,
                (cp.returncode, err))
    cp = te.run_tool(["breakdown", "--help"])
    C.check(b"--comm-pattern REGEX" in cp.stdout, "--help lists --comm-pattern")


PARTS = ("compute", "exposed_comm", "memory_only")


def unit_bars(page):
    """{unit index: {part: ns}} of the per-step bars"""
    out = {}
    for m in re.finditer(r'data-unit="(\d+)" data-part="([a-z_]+)" data-ns="(\d+)"', page):
        out.setdefault(int(m.group(1)), {})[m.group(2)] = int(m.group(3))
    return out


def check_page(tmp, path, evs):
    acts = activities(evs)
    out = os.path.join(tmp, "steps.html")
    cp = te.run_tool(["breakdown", "--by", "step", "--html", out, path])
    if not C.eq(cp.returncode, 0, "--by step --html: exit code") or not os.path.exists(out):
        return None
    page = open(out, encoding="utf-8").read()
    bars = unit_bars(page)
    C.eq(sorted(bars), [0, 1], "--by step page: a bar per step")
    for i, step in enumerate((1, 2)):
        w = expect([a[:4] for a in acts if a[4] == step])
        want = {"compute": w["compute_ns"], "exposed_comm": w["exposed_comm_ns"],
                "memory_only": w["busy_ns"] - w["compute_ns"] - w["exposed_comm_ns"]}
        got = dict((p, bars.get(i, {}).get(p, 0)) for p in PARTS)
        C.eq(got, want, "step %d bar: its parts are this file's numbers" % step)
        C.check(">rank 0 cuda:0 step %d<" % step in page.replace(" (slowest)", ""),
                "step %d is labelled" % step)
    table = re.search(r'<table id="tt-unit-table">(.*?)</table>', page, re.S)
    C.check(table is not None and table.group(1).count("<tr>") == 3,
            "a 'Numbers per step' table: a header and a row per step")
    C.check("Numbers per step" in page, "the per-step table is titled")
    C.check("<script" not in page, "no script")
    plain = os.path.join(tmp, "plain.html")
    cp = te.run_tool(["breakdown", "--html", plain, path])
    if C.eq(cp.returncode, 0, "--html without --by"):
        p = open(plain, encoding="utf-8").read()
        C.check("data-unit=" not in p and "tt-unit-table" not in p,
                "without --by step the page has no per-step part")
    return out


# the widest scroll box of the page's tables against the box they are in
MEASURE = r"""
<script>
(function () {
  var out = {doc: document.documentElement.scrollWidth, win: window.innerWidth, tables: []};
  var ts = document.querySelectorAll("table");
  for (var i = 0; i < ts.length; i++) {
    var card = ts[i].closest(".card");
    out.tables.push({id: ts[i].id, scroll: card.scrollWidth, client: card.clientWidth,
                     width: ts[i].getBoundingClientRect().width});
  }
  var pre = document.createElement("pre");
  pre.id = "tt-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def measure(chrome, tmp, page, label):
    html = open(page, encoding="utf-8").read()
    probe = os.path.join(tmp, "probe-%s.html" % label)
    with open(probe, "w", encoding="utf-8") as f:
        f.write(rb.with_script(html, MEASURE))
    cmd = rb.chromium_cmd(chrome, tempfile.mkdtemp(prefix="profile-", dir=tmp), "--dump-dom",
                          "file://" + probe)
    cmd = [c if not c.startswith("--window-size=") else "--window-size=1400,1000" for c in cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=rb.TIMEOUT)
    except subprocess.TimeoutExpired:
        C.check(False, "%s: chromium finished" % label)
        return
    m = re.search(r'<pre id="tt-measure">(.*?)</pre>', p.stdout, re.S)
    if not C.check(m is not None, "%s: the page was measured" % label, p.stderr[-400:]):
        return
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    C.eq(res["win"], 1400, "%s: the window is 1400 px wide" % label)
    C.check(len(res["tables"]) >= 2, "%s: the tables are there" % label, res)
    for t in res["tables"]:
        C.check(t["scroll"] <= t["client"],
                "%s: table %s fits at 1400 px (no horizontal scroll)" % (label, t["id"]), t)
    C.check(res["doc"] <= 1400, "%s: the page is no wider than the window" % label, res)


def check_browser(tmp, pages):
    chrome = rb.find_chromium()
    if not chrome:
        C.skip("browser", "chromium not installed")
        return
    for label, page in pages:
        if page:
            measure(chrome, tmp, page, label)


def dlrm_page(tmp):
    kdir = os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank", "kineto")
    if not os.path.isdir(kdir):
        C.skip("dlrm_8rank", "testdata/param/dlrm_8rank is missing")
        return None
    out = os.path.join(tmp, "dlrm.html")
    cp = te.run_tool(["breakdown", "--by", "step", "--html", out, kdir])
    C.eq(cp.returncode, 0, "dlrm --by step --html: exit code")
    page = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    C.check("tt-unit-table" in page and "data-unit=" in page, "dlrm: the per-step part is drawn")
    return out if page else None


def main():
    if not os.path.exists(te.tracetool_path()):
        C.skip("tracetool", "not built")
        return C.finish()
    with tempfile.TemporaryDirectory(prefix="tt_bd_comm_") as tmp:
        path = os.path.join(tmp, "vllm_b200_rank0.json")
        evs = make_trace(path)
        C.section("rule", check_rule)
        C.section("classes", check_classes, tmp, path, evs)
        C.section("patterns", check_patterns, tmp, path, evs)
        page = check_page(tmp, path, evs)
        C.section("browser", check_browser, tmp, [("synthetic", page), ("dlrm", dlrm_page(tmp))])
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
