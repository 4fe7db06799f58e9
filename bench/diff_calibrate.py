#!/usr/bin/env python3
"""Calibration of `tracetool diff` as a CI gate (issue 22): false-positive and
detection rates on real PyTorch runs, one process per run.

    bench/diff_calibrate.py make  --out DIR [--base 40] [--per 12] [--steps 12]
                                  [--sizes 0.02,0.05,0.10,0.25] [--kinds extra,slow]
                                  [--noise] [--python /usr/bin/python3]
    bench/diff_calibrate.py eval  --dir DIR [--tracetool build/tracetool]
                                  [--sides 1,3,5] [--pairs 60] [--seed 1]
                                  [--fail-on-inconclusive]

`make` runs a small CPU model under Debian's python3-torch (1.13) in a fresh
process per run, profiled with torch.profiler and its schedule (1 wait, 1
warmup, --steps active steps: ProfilerStep#2.. in the trace), and keeps each
run's Kineto trace in DIR/<variant>/run_NNN.json:

- `base`: the model as it is (--base runs);
- `extra_S`: one extra `aten::bmm` per step worth S of the step's time (a
  new call per step: a structural change);
- `slow_S`: the same calls, the step's `aten::bmm` (about a twentieth of a step)
  made S of the step slower (a larger batch: same call count, more time).

With --noise a CPU-bound process competes for the cores while each run is
made (a loaded CI runner). The model is an MLP of several `aten::mm`,
`aten::relu`, `aten::add` and `aten::sum` per step on one thread.

`eval` runs `tracetool diff --format json` over pairs of disjoint sets of
runs (`-b` / `-n` repeated), k runs a side for each k of --sides:
A/A pairs from the base runs only (a regressed verdict, exit 1, is a false
positive) and base-vs-variant pairs (exit 1 is a detection; the planted op
is then expected as the JSON's top row: the rows that decided come
first, each group by |delta_ns|). It prints one table: per k
and variant the pairs, the rate of exit 1, of exit 6 (inconclusive) and of
"top row is the planted op". Not a test: it passes or fails nothing.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

MODEL = r'''
import sys, time, torch
import torch.nn.functional as F
from torch.profiler import profile, schedule, ProfilerActivity
kind, size, steps, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(128, 256)
w1, w2 = torch.randn(256, 256), torch.randn(256, 256)
img, ker = torch.randn(1, 8, 48, 48), torch.randn(8, 8, 3, 3)
ln = torch.nn.LayerNorm(256)
B = 8
qa, qb = torch.randn(64, 64, 64), torch.randn(64, 64, 64)
def body():
    h = F.gelu(torch.mm(x, w1))
    h = ln(h + torch.mm(h, w2))
    c = F.conv2d(img, ker, padding=1).relu()
    return torch.softmax(h, dim=-1).sum() + c.sum()
def planted(batch):
    return torch.bmm(qa[:batch], qb[:batch]).sum()
def cost(fn, *a):
    t = time.perf_counter()
    for _ in range(10):
        fn(*a)
    return (time.perf_counter() - t) / 10
for _ in range(5):
    body(); planted(B)
# the planted op (aten::bmm, batch B) is about a twentieth of a step; a
# regression of `size` adds size * (step time) to the step, as a larger
# batch of the same call (slow) or one more call (extra). Both costs are
# measured interleaved, 9 times, and the median ratio taken: a slow moment
# of the machine falls on both, so the planted size is steady across runs.
ratios = []
for _ in range(9):
    step_t = cost(body) + cost(planted, B)
    ratios.append(step_t / (cost(planted, 64) / 64))
ratios.sort()
batches_per_step = ratios[len(ratios) // 2]
more = max(1, int(round(size * batches_per_step))) if size > 0 else 0
qa = torch.randn(B + more if kind == "slow" else 64, 64, 64)
qb = torch.randn(qa.shape[0], 64, 64)
def step():
    r = body() + planted(B + more if kind == "slow" else B)
    if kind == "extra":
        r = r + planted(more)
    return r
for _ in range(3):
    step()
with profile(activities=[ProfilerActivity.CPU],
             schedule=schedule(wait=1, warmup=1, active=steps),
             on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
    for _ in range(steps + 2):
        step()
        prof.step()
'''


def make(args):
    os.makedirs(args.out, exist_ok=True)
    model = os.path.join(args.out, "model.py")
    with open(model, "w") as f:
        f.write(MODEL)
    variants = [("base", "base", 0.0, args.base)]
    for kind in args.kinds.split(","):
        for s in args.sizes.split(","):
            variants.append(("%s_%s" % (kind, s), kind, float(s), args.per))
    hog = None
    if args.noise:
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        # interleave the variants so that a slow period of the machine
        # falls on all of them alike
        todo = []
        for name, kind, size, n in variants:
            os.makedirs(os.path.join(args.out, name), exist_ok=True)
            todo += [(name, kind, size, i) for i in range(n)]
        random.Random(7).shuffle(todo)
        t0 = time.time()
        for k, (name, kind, size, i) in enumerate(todo):
            out = os.path.join(args.out, name, "run_%03d.json" % i)
            if os.path.exists(out):
                continue
            subprocess.run([args.python, model, kind, str(size), str(args.steps), out],
                           check=True, stdout=subprocess.DEVNULL)
            if k % 20 == 0:
                print("%d/%d runs, %.0f s" % (k + 1, len(todo), time.time() - t0), flush=True)
    finally:
        if hog:
            hog.kill()


def runs_of(d, name):
    p = os.path.join(d, name)
    return sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))


def diff(tt, base, new, extra):
    cmd = [tt, "diff", "--format", "json"] + extra
    for b in base:
        cmd += ["-b", b]
    for n in new:
        cmd += ["-n", n]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        j = json.loads(p.stdout.decode("utf-8", "replace"))
    except ValueError:
        j = None
    return p.returncode, j


def top_op(j):
    """the JSON's top row: the rows that decided come first (regressed, then
    inconclusive, improved), each group by the size of delta_ns"""
    rows = (j or {}).get("rows", [])
    return rows[0].get("key") if rows else None


def evaluate(args):
    rng = random.Random(args.seed)
    base = runs_of(args.dir, "base")
    variants = sorted(v for v in os.listdir(args.dir) if os.path.isdir(os.path.join(args.dir, v))
                      and v != "base" and (not args.only or v.startswith(args.only)))
    extra = ["--fail-on-inconclusive"] if args.fail_on_inconclusive else []
    print("| runs a side | variant | pairs | exit 1 (regressed) | exit 6 | top row planted |")
    print("|---:|---|---:|---:|---:|---:|")
    for k in [int(x) for x in args.sides.split(",")]:
        for v in ["A/A"] + variants:
            n1 = n6 = ntop = 0
            pairs = 0
            for _ in range(args.pairs):
                if v == "A/A":
                    if len(base) < 2 * k:
                        break
                    pick = rng.sample(base, 2 * k)
                    b, n = pick[:k], pick[k:]
                else:
                    vr = runs_of(args.dir, v)
                    if len(base) < k or len(vr) < k:
                        break
                    b, n = rng.sample(base, k), rng.sample(vr, k)
                rc, j = diff(args.tracetool, b, n, extra)
                pairs += 1
                n1 += rc == 1
                n6 += rc == 6
                if rc == 1 and v != "A/A" and top_op(j) == "aten::bmm":
                    ntop += 1
            if pairs:
                print("| %d | %s | %d | %.0f%% | %.0f%% | %s |" % (
                    k, v, pairs, 100.0 * n1 / pairs, 100.0 * n6 / pairs,
                    "-" if v == "A/A" else "%d/%d" % (ntop, n1)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--out", required=True)
    m.add_argument("--base", type=int, default=40)
    m.add_argument("--per", type=int, default=12)
    m.add_argument("--steps", type=int, default=12)
    m.add_argument("--sizes", default="0.02,0.05,0.10,0.25")
    m.add_argument("--kinds", default="extra,slow")
    m.add_argument("--noise", action="store_true")
    m.add_argument("--python", default="/usr/bin/python3")
    e = sub.add_parser("eval")
    e.add_argument("--dir", required=True)
    e.add_argument("--tracetool", default=os.environ.get("TRACETOOL", "build/tracetool"))
    e.add_argument("--sides", default="1,3,5")
    e.add_argument("--pairs", type=int, default=60)
    e.add_argument("--seed", type=int, default=1)
    e.add_argument("--only", default="", help="only the variants whose name starts so (e.g. slow)")
    e.add_argument("--fail-on-inconclusive", action="store_true")
    args = ap.parse_args()
    make(args) if args.cmd == "make" else evaluate(args)


if __name__ == "__main__":
    main()
