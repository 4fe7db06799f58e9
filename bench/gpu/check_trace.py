#!/usr/bin/env python3
"""Check a Kineto trace written by libtracetool_inject.so for a known CUDA
program (Python standard library only; bench/gpu/device_capture_check.sh).

    check_trace.py DIR --kernels vec_add=3,scale=1 [--memcpy N]

Checks: exactly one trace in DIR; kernels per name (a name containing the
key counts for it); every kernel has a correlation id that a
cudaLaunchKernel runtime event carries and starts after that call started;
each such pair has an ac2g flow (s on the call, f on the kernel, same id);
kernel and copy durations are positive; deviceProperties names the GPU;
--memcpy: the number of gpu_memcpy events. Exit 0 when all hold.
"""
import argparse
import gzip
import json
import os
import sys


def load(d):
    files = [f for f in os.listdir(d) if f.endswith(".json") or f.endswith(".json.gz")]
    if len(files) != 1:
        sys.exit("FAIL %s: %d trace files: %s" % (d, len(files), files))
    p = os.path.join(d, files[0])
    raw = open(p, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return p, json.loads(raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--memcpy", type=int)
    a = ap.parse_args()
    path, t = load(a.dir)
    ev = t["traceEvents"]
    bad = []
    kern = [e for e in ev if e.get("cat") == "kernel"]
    rt = {e["args"]["correlation"]: e for e in ev
          if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    want = dict(kv.split("=") for kv in a.kernels.split(","))
    got = {k: sum(1 for e in kern if k in e["name"]) for k in want}
    print("trace %s: %d events, kernels %s" % (path, len(ev), got))
    for k, n in want.items():
        if got[k] != int(n):
            bad.append("kernel %s: %d, want %s" % (k, got[k], n))
    flows = {}
    for e in ev:
        if e.get("cat") == "ac2g":
            flows.setdefault(e.get("id"), []).append(e.get("ph"))
    for e in kern:
        c = e.get("args", {}).get("correlation")
        r = rt.get(c)
        if r is None:
            bad.append("kernel %s: no runtime call with correlation %s" % (e["name"], c))
            continue
        if "Launch" not in r["name"]:
            bad.append("kernel %s: correlation %s is %s" % (e["name"], c, r["name"]))
        if float(e["ts"]) < float(r["ts"]):
            bad.append("kernel %s starts before its launch" % e["name"])
        if sorted(flows.get(c, [])) != ["f", "s"]:
            bad.append("kernel %s: ac2g flow %s: %s" % (e["name"], c, flows.get(c)))
        if not float(e.get("dur", 0)) > 0:
            bad.append("kernel %s: dur %s" % (e["name"], e.get("dur")))
    cp = [e for e in ev if e.get("cat") == "gpu_memcpy"]
    print("memcpy: %d (%s)" % (len(cp), sorted(set(e["name"] for e in cp))))
    if a.memcpy is not None and len(cp) != a.memcpy:
        bad.append("gpu_memcpy: %d, want %d" % (len(cp), a.memcpy))
    props = t.get("deviceProperties") or []
    print("deviceProperties: %s" % [p.get("name") for p in props])
    if not props or not props[0].get("name"):
        bad.append("no deviceProperties name")
    print("runtime calls: %s" % sorted(set(e["name"] for e in rt.values())))
    if "tracetool_gpu" in t:
        print("tracetool_gpu: %s" % json.dumps(t["tracetool_gpu"]))
    for x in bad:
        print("FAIL " + x)
    print("%d passed, %d failed" % (0 if bad else 1, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
