#!/usr/bin/env python3
"""Structure-aware mutation fuzzer of real traces, run through every
tracetool command that reads a trace (issue 28).

The byte-level libFuzzer targets (fuzz_json, fuzz_trace) drive the readers
only; this drives the whole program: each mutant of a small real trace
(tests/fuzz/seeds_structured/) goes through ingest, info, averages, kernels,
breakdown, memtimeline, crosscheck, diff and export, on the file and on the
database the ingest made, under an ASan+UBSan build. A finding is a sanitizer
report on stderr, a crash (signal), a hang (timeout) or an exit code outside
the command's documented set.

Mutations work on the parsed events (keys and values of real events), are
written back as raw JSON text (so duplicate keys, raw control characters and
invalid UTF-8 survive) and are fully determined by the mutant's seed:

    mutate_traces.py --tracetool build-asan/tracetool --seed 20261127 --count 300
    mutate_traces.py --tracetool build-asan/tracetool --replay 123456789

Standard library only. Exit 0: no finding; 1: findings; 2: usage;
77: the tracetool binary is missing (skipped).
"""

import argparse
import concurrent.futures
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import random

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEED_DIR = os.path.join(HERE, "seeds_structured")
TIMEOUT_S = 20

# name -> (file, kind). simple_add_kineto and simple_add_et are a pair
# (crosscheck matches all 36 ops); memory has [memory] events with Addr and
# Total Allocated; gpu_steps has ProfilerStep#N, kernels, memcpy, memset;
# nccl has NCCL kernels, GPU user annotations and fractional ts.
SEEDS = {
    "gpu_steps": ("gpu_steps.json", "kineto"),
    "memory": ("memory.json", "kineto"),
    "nccl": ("nccl.json", "kineto"),
    "simple_add_kineto": ("simple_add_kineto.json", "kineto"),
    "simple_add_et": ("simple_add_et.json", "et"),
}
SEED_WEIGHTS = [("gpu_steps", 3), ("memory", 3), ("nccl", 2),
                ("simple_add_kineto", 2), ("simple_add_et", 2)]
PAIR_ET = "simple_add_et"
PAIR_KINETO = "simple_add_kineto"
MEM_SEED = "memory"

# Documented exit codes (README "Exit codes", `tracetool help CMD`). 2 (usage)
# is documented too, but every command line here is valid, so a 2 is a finding.
ALLOWED = {
    "ingest": {0, 3, 4, 5},
    "info": {0, 3, 4},
    "averages": {0, 3, 4},
    "kernels": {0, 3, 4},
    "breakdown": {0, 3, 4},
    "memtimeline": {0, 3, 4},
    "crosscheck": {0, 1, 3, 4},
    "diff": {0, 1, 3, 4, 6},
    "export": {0, 3, 4},
    # issue 25's analyses: 4 when the trace has nothing they count (no
    # collective, no gpu_user_annotation, no step N)
    "queue": {0, 3, 4},
    "bandwidth": {0, 3, 4},
    "collectives": {0, 3, 4},
    "critical-path": {0, 3, 4},
}

# ---------------------------------------------------------------------------
# JSON model: objects are Obj (a list of [key, value] pairs, so keys can repeat
# and keep their order), Raw is JSON text written verbatim.


class Obj(list):
    pass


class Raw:
    __slots__ = ("b",)

    def __init__(self, b):
        self.b = b

    def __repr__(self):
        return "Raw(%r)" % (self.b[:40],)


def parse(data):
    return json.loads(data.decode("utf-8", "surrogatepass"),
                      object_pairs_hook=lambda pairs: Obj([list(p) for p in pairs]))


def enc_str(s):
    return json.dumps(s, ensure_ascii=False).encode("utf-8", "surrogatepass")


def dump(v, out):
    if isinstance(v, Raw):
        out.append(v.b)
    elif isinstance(v, Obj):
        out.append(b"{")
        for i, (k, x) in enumerate(v):
            if i:
                out.append(b",")
            out.append(k.b if isinstance(k, Raw) else enc_str(k))
            out.append(b":")
            dump(x, out)
        out.append(b"}")
    elif isinstance(v, list):
        out.append(b"[")
        for i, x in enumerate(v):
            if i:
                out.append(b",")
            dump(x, out)
        out.append(b"]")
    elif v is None:
        out.append(b"null")
    elif v is True:
        out.append(b"true")
    elif v is False:
        out.append(b"false")
    elif isinstance(v, int):
        out.append(str(v).encode())
    elif isinstance(v, float):
        if v != v:
            out.append(b"NaN")
        elif v in (float("inf"), float("-inf")):
            out.append(b"Infinity" if v > 0 else b"-Infinity")
        else:
            out.append(repr(v).encode())
    elif isinstance(v, str):
        out.append(enc_str(v))
    else:
        raise TypeError(type(v))


def serialize(doc):
    """One top-level event / node per line, as the seeds are written."""
    out = []
    if not isinstance(doc, Obj):
        out.append(b"[\n")
        for i, e in enumerate(doc):
            if i:
                out.append(b",\n")
            dump(e, out)
        out.append(b"\n]\n")
        return b"".join(out)
    out.append(b"{")
    for i, (k, x) in enumerate(doc):
        if i:
            out.append(b",")
        out.append(b"\n")
        out.append(k.b if isinstance(k, Raw) else enc_str(k))
        out.append(b": ")
        if isinstance(x, list) and not isinstance(x, Obj) and k in ("traceEvents", "nodes"):
            out.append(b"[\n")
            for j, e in enumerate(x):
                if j:
                    out.append(b",\n")
                dump(e, out)
            out.append(b"\n]")
        else:
            dump(x, out)
    out.append(b"\n}\n")
    return b"".join(out)


def oget(o, key, default=None):
    if isinstance(o, Obj):
        for k, v in o:
            if k == key:
                return v
    return default


def oset(o, key, value):
    for p in o:
        if p[0] == key:
            p[1] = value
            return
    o.append([key, value])


# ---------------------------------------------------------------------------
# Values

I64 = [2**63 - 1, -2**63, 2**63, 2**64, 2**70, -1, 0]
SPECIAL = I64 + [
    1e308, -1e308, 1e-308, "a string", [1, "x", None], lambda: Obj([["k", 1]]),
    None, True, False, "", [], lambda: Obj(), 0.5, -0.0, 2**31, -2**31 - 1, 2**53 + 1,
    Raw(b"NaN"), Raw(b"Infinity"), Raw(b"-Infinity"), Raw(b"1e400"), Raw(b"-1e400"),
    Raw(b"-0"), Raw(b"1E+2"), Raw(b"9223372036854775807.9"), Raw(b"1e-400"),
    "9223372036854775808", "-1", "1e308", "0x10", Raw(b"[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]"),
]
# ts / dur in us; 9.2e15 us and 9223372036854775 us are ~9.2e18 ns (int64 max
# is 9223372036854775807 ns, so x1000 overflows or almost does).
TIMES = [
    2**63 - 1, -2**63, 2**63, 2**64, 9200000000000000, -9200000000000000,
    9223372036854775, 9223372036854776, -9223372036854775, -9223372036854776,
    9223372036854775807 // 1000 + 1, 18446744073709551, 0, -1,
    Raw(b"9.2e15"), Raw(b"9223372036854775.807"), Raw(b"9223372036854775.808"),
    Raw(b"-9223372036854775.808"), Raw(b"9223372036854775807.999"), Raw(b"1e308"),
    Raw(b"-1e308"), Raw(b"1e-308"), Raw(b"NaN"), Raw(b"Infinity"), Raw(b"1e19"),
    "9200000000000000", "9223372036854775.807", "-9223372036854775808", "", "x",
    4611686018427387, 4611686018427388,
]
STEP_N = ["0", "-1", "2147483647", "2147483648", "4294967295", "4294967296",
          "9223372036854775807", "9223372036854775808", "-9223372036854775808",
          "-9223372036854775809", "18446744073709551615", "18446744073709551616",
          "99999999999999999999999999999999", "", "x", "1e3", " 7", "+7", "007",
          "0x1f", "1.5", "5 ", "3#4", "-0", "9" * 400]
CONTROL = [b"\x00", b"\x1b", b"\xc2\x85", b"\x01", b"\x7f", b"\n", b"\r", b"\t",
           b"\x08", b"\x1f", b"\xe2\x80\xa8", b"\\u0000", b"\\u001b", b"\\u0085",
           b"\\ud800", b"\\udc00", b"\\ud83d\\ude00", b"\\u0000\\u0000", b"\\\\",
           b"\\/", b"\\b\\f"]
BAD_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82(",
            b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\x80",
            b"\xbf\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xf0\x9f\x98",
            b"\xe0\x80\xaf"]
PH = ["X", "B", "E", "i", "I", "s", "f", "t", "M", "C", "b", "e", "n", "P", "O",
      "N", "D", "R", "(", ")", "", "XX", "x"]
CATS = ["cpu_op", "user_annotation", "gpu_user_annotation", "cuda_runtime",
        "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "ac2g",
        "python_function", "cpu_instant_event", "Trace", "Operator", "Runtime",
        "Kernel", "Memcpy", "Memset", "async", "fwdbwd", "", "overhead",
        "cuda_profiler_range", "Kernel "]
ID_KEYS = ["External id", "external id", "correlation", "Record function id",
           "Ev Idx", "Addr", "id", "rf_id", "parent", "fw_parent", "Sequence number",
           "Fwd thread id", "stream", "device", "pid", "tid", "seq_id", "fw_tid",
           "Profiler Event Index", "Python id", "Python parent id"]


def special(rng):
    v = rng.choice(SPECIAL)
    return clone(v() if callable(v) else v)  # never share a list between mutants


def long_name(rng):
    n = 100 * 1024
    kind = rng.randrange(7)
    if kind == 0:
        return "a" * n
    if kind == 1:
        return "ProfilerStep#" + "9" * n
    if kind == 2:
        return "void k<" + "int, " * (n // 5) + "float>(float*)"
    if kind == 3:
        return "nccl" + "Kernel_AllReduce_RING_LL_Sum_float" * (n // 34)
    if kind == 4:
        return "(" * (n // 2) + ")" * (n // 2)
    if kind == 5:
        return "\u00e9\u4e2d\U0001f600" * (n // 9)
    return ("aten::" + "x" * 60 + ";") * (n // 67)


def raw_str_with(rng, s, inj):
    """String s as JSON text with the raw bytes inj at a random place."""
    body = enc_str(s)[1:-1]
    # Do not cut an escape or a UTF-8 sequence in two: insert at an ASCII
    # boundary that is not inside a backslash escape.
    cuts = [0, len(body)]
    i = 0
    while i < len(body):
        c = body[i]
        if c == 0x5C:  # backslash
            i += 6 if body[i + 1:i + 2] == b"u" else 2
            cuts.append(min(i, len(body)))
            continue
        i += 1
        if c < 0x80 or (i < len(body) and (body[i] & 0xC0) != 0x80):
            cuts.append(i)
    at = rng.choice(cuts)
    return Raw(b'"' + body[:at] + inj + body[at:] + b'"')


# ---------------------------------------------------------------------------
# Mutations


def containers(v, path="", depth=0):
    """Every object and array inside v (v included), with a path for the log."""
    found = [(v, path or ".")]
    if depth > 6:
        return found
    if isinstance(v, Obj):
        for k, x in v:
            if isinstance(x, list):
                found += containers(x, "%s.%s" % (path, k if isinstance(k, str) else "?"), depth + 1)
    elif isinstance(v, list):
        for i, x in enumerate(v[:50]):
            if isinstance(x, list):
                found += containers(x, "%s[%d]" % (path, i), depth + 1)
    return found


def strings_in(v, path="", depth=0):
    """(container, key-or-index, path) of every string value inside v."""
    found = []
    if depth > 6:
        return found
    if isinstance(v, Obj):
        for p in v:
            if isinstance(p[1], str):
                found.append((p, 1, "%s.%s" % (path, p[0])))
            elif isinstance(p[1], list):
                found += strings_in(p[1], "%s.%s" % (path, p[0]), depth + 1)
    elif isinstance(v, list):
        for i, x in enumerate(v[:50]):
            if isinstance(x, str):
                found.append((v, i, "%s[%d]" % (path, i)))
            elif isinstance(x, list):
                found += strings_in(x, "%s[%d]" % (path, i), depth + 1)
    return found


class Mutator:
    def __init__(self, rng, doc, kind):
        self.rng = rng
        self.doc = doc
        self.kind = kind
        if isinstance(doc, Obj):
            self.events = oget(doc, "nodes" if kind == "et" else "traceEvents")
        else:
            self.events = doc
        if not isinstance(self.events, list) or not self.events:
            raise ValueError("seed without events")
        self.log = []

    def interesting(self, e):
        name = oget(e, "name")
        if isinstance(name, str) and (name.startswith("ProfilerStep") or name == "[memory]"):
            return True
        cat = oget(e, "cat")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                   "gpu_user_annotation", "ac2g", "Kernel", "Runtime", "Memcpy", "Memset"):
            return True
        return self.kind == "et" and isinstance(oget(e, "rf_id"), int)

    def event(self):
        rng = self.rng
        evs = [e for e in self.events if isinstance(e, Obj)]
        if not evs:
            evs = self.events
        if rng.random() < 0.6:
            pool = [e for e in evs if isinstance(e, Obj) and self.interesting(e)]
            if pool:
                evs = pool
        e = rng.choice(evs)
        return e, self.events.index(e) if len(self.events) < 5000 else -1

    def target(self):
        """An object inside an event (or the top level) to mutate."""
        rng = self.rng
        if isinstance(self.doc, Obj) and rng.random() < 0.1:
            top = [(v, p) for v, p in containers(self.doc, "top")
                   if v is not self.events and v is not self.doc]
            if top:
                return rng.choice(top)
            return self.doc, "top"
        e, i = self.event()
        cs = [(v, p) for v, p in containers(e, "ev%d" % i) if isinstance(v, Obj)]
        if rng.random() < 0.5:
            return cs[0]
        return rng.choice(cs)

    # -- operations, each returns a description or None (not applicable)

    def op_remove_key(self):
        o, path = self.target()
        if not isinstance(o, Obj) or not o:
            return None
        p = o.pop(self.rng.randrange(len(o)))
        return "remove %s.%s" % (path, p[0])

    def op_dup_key(self):
        rng = self.rng
        o, path = self.target()
        if not isinstance(o, Obj) or not o:
            return None
        k, v = rng.choice(o)
        nv = v if rng.random() < 0.3 else special(rng)
        at = rng.randrange(len(o) + 1)
        o.insert(at, [k, nv])
        return "duplicate %s.%s = %r at %d" % (path, k, short(nv), at)

    def op_special_value(self):
        rng = self.rng
        o, path = self.target()
        if not isinstance(o, Obj) or not o:
            return None
        p = rng.choice(o)
        p[1] = special(rng)
        return "set %s.%s = %r" % (path, p[0], short(p[1]))

    def op_id_value(self):
        """An id-like key: a special value, or another event's value (aliasing)."""
        rng = self.rng
        e, i = self.event()
        objs = [e] + [v for k, v in e if k == "args" and isinstance(v, Obj)]
        pairs = [(o, p) for o in objs for p in o if p[0] in ID_KEYS]
        if not pairs:
            return None
        o, p = rng.choice(pairs)
        if rng.random() < 0.5:
            others = []
            for f in rng.sample(self.events, min(len(self.events), 40)):
                for oo in [f] + [v for k, v in f if k == "args" and isinstance(v, Obj)] \
                        if isinstance(f, Obj) else []:
                    x = oget(oo, p[0])
                    if x is not None:
                        others.append(x)
            if others:
                p[1] = clone(rng.choice(others))
                return "alias ev%d %s = %r" % (i, p[0], short(p[1]))
        p[1] = rng.choice(I64 + [2**32, -2**32, 2**31 - 1, 1, 2, Raw(b"1e19"), "7", None])
        return "id ev%d %s = %r" % (i, p[0], short(p[1]))

    def op_time(self):
        rng = self.rng
        e, i = self.event()
        keys = ["ts", "dur"] if self.kind == "kineto" else ["start_ts", "dur", "ts"]
        which = rng.randrange(4)
        if which == 3:  # both huge: ts + dur overflows in ns
            a, b = rng.choice([(9200000000000000, 9200000000000000),
                               (9223372036854775, 9223372036854775),
                               (9223372036854775807, 9223372036854775807),
                               (-9223372036854775808, -9223372036854775808),
                               (4611686018427388, 4611686018427388),
                               (-9200000000000000, 9200000000000000)])
            oset(e, keys[0], a)
            oset(e, "dur", b)
            return "ev%d ts = %d, dur = %d" % (i, a, b)
        k = keys[which % 2] if which < 2 else rng.choice(keys)
        v = rng.choice(TIMES)
        oset(e, k, v)
        return "ev%d %s = %r" % (i, k, short(v))

    def op_control_chars(self, table=CONTROL, what="control"):
        rng = self.rng
        e, i = self.event()
        ss = strings_in(e, "ev%d" % i)
        if not ss:
            return None
        c, key, path = rng.choice(ss)
        inj = b"".join(rng.choice(table) for _ in range(rng.randint(1, 3)))
        c[key] = raw_str_with(rng, c[key], inj)
        return "%s bytes %r in %s" % (what, inj, path)

    def op_bad_utf8(self):
        return self.op_control_chars(BAD_UTF8, "invalid UTF-8")

    def op_raw_key(self):
        """A key with control characters / invalid UTF-8 in it."""
        rng = self.rng
        o, path = self.target()
        if not isinstance(o, Obj) or not o:
            return None
        p = rng.choice(o)
        if not isinstance(p[0], str):
            return None
        inj = rng.choice(CONTROL + BAD_UTF8)
        p[0] = raw_str_with(rng, p[0], inj)
        return "key %s.%r gets %r" % (path, short(p[0]), inj)

    def op_long_name(self):
        rng = self.rng
        e, i = self.event()
        s = long_name(rng)
        if rng.random() < 0.7 or not strings_in(e):
            key = "name" if rng.random() < 0.8 else rng.choice(
                ["cat", "op_schema", "Call stack", "Module Hierarchy"])
            oset(e, key, s)
            return "ev%d %s = %d-char %r..." % (i, key, len(s), s[:20])
        c, key, path = rng.choice(strings_in(e, "ev%d" % i))
        c[key] = s
        return "%s = %d-char %r..." % (path, len(s), s[:20])

    def op_step(self):
        rng = self.rng
        n = rng.choice(STEP_N)
        steps = [e for e in self.events if isinstance(e, Obj)
                 and str(oget(e, "name", "")).startswith("ProfilerStep#")]
        if steps and rng.random() < 0.6:
            e = rng.choice(steps)
            oset(e, "name", "ProfilerStep#" + n)
            how = "rename"
        else:
            cands = [e for e in self.events if isinstance(e, Obj)
                     and oget(e, "cat") in ("cpu_op", "user_annotation", "Operator")]
            if not cands:
                cands = [e for e in self.events if isinstance(e, Obj)]
            e = rng.choice(cands)
            if rng.random() < 0.5:
                oset(e, "name", "ProfilerStep#" + n)
                how = "rename op"
            else:
                e = clone(e)
                oset(e, "name", "ProfilerStep#" + n)
                self.events.insert(rng.randrange(len(self.events) + 1), e)
                how = "add"
        if rng.random() < 0.3:
            oset(e, "ts" if self.kind == "kineto" else "rf_id", rng.choice(TIMES))
            how += " +ts"
        if rng.random() < 0.3:
            oset(e, "dur", rng.choice(TIMES))
            how += " +dur"
        return "%s ProfilerStep#%s" % (how, short(n))

    def op_ph_cat(self):
        rng = self.rng
        e, i = self.event()
        if self.kind == "et":
            return None
        if rng.random() < 0.5:
            v = rng.choice(PH)
            oset(e, "ph", v)
            return "ev%d ph = %r" % (i, v)
        v = rng.choice(CATS)
        oset(e, "cat", v)
        return "ev%d cat = %r" % (i, v)

    def op_events(self):
        """Duplicate, remove or move a whole event."""
        rng = self.rng
        evs = self.events
        i = rng.randrange(len(evs))
        how = rng.randrange(3)
        if how == 0:
            e = evs[i]
            evs.insert(rng.randrange(len(evs) + 1), clone(e))
            return "duplicate event %d" % i
        if how == 1 and len(evs) > 1:
            evs.pop(i)
            return "remove event %d" % i
        e = evs.pop(i)
        j = rng.choice([0, len(evs), rng.randrange(len(evs) + 1)])
        evs.insert(j, e)
        return "move event %d to %d" % (i, j)

    def op_et_link(self):
        """ET: parent / ctrl_deps pointing at itself, a cycle or nowhere."""
        rng = self.rng
        if self.kind != "et":
            return None
        e, i = self.event()
        ids = [oget(f, "id") for f in self.events if isinstance(f, Obj)]
        own = oget(e, "id")
        v = rng.choice([own, rng.choice(ids), -1, 0, 2**63 - 1, 2**64, None, "1"])
        key = rng.choice(["parent", "parent", "fw_parent", "ctrl_deps", "rf_id", "id"])
        oset(e, key, v)
        return "et node %d %s = %r" % (i, key, short(v))

    def op_top(self):
        """Top-level keys: rank, world size, GPU model, base time, schema."""
        rng = self.rng
        if not isinstance(self.doc, Obj):
            return None
        if self.kind == "et":
            key = rng.choice(["schema", "pid", "start_ts", "time", "finish_ts"])
            v = rng.choice(["1.0.1", "1.1.1-chakra.0.0.4", "99.0", "", "1.0.2-chakra.0.0.4"]
                           + SPECIAL[:12]) if key == "schema" else special(rng)
            v = clone(v() if callable(v) else v)
            oset(self.doc, key, v)
            return "top %s = %r" % (key, short(v))
        key = rng.choice(["distributedInfo", "baseTimeNanoseconds", "deviceProperties",
                          "schemaVersion", "traceEvents", "displayTimeUnit"])
        if key == "distributedInfo":
            sub = rng.choice(["rank", "world_size", "backend", "pg_count"])
            di = oget(self.doc, key)
            if not isinstance(di, Obj):
                di = Obj()
                oset(self.doc, key, di)
            v = special(rng)
            oset(di, sub, v)
            return "top distributedInfo.%s = %r" % (sub, short(v))
        if key == "baseTimeNanoseconds":
            v = rng.choice(TIMES + [1700000000000000000])
            oset(self.doc, key, v)
            return "top baseTimeNanoseconds = %r" % (short(v),)
        if key == "deviceProperties":
            dp = oget(self.doc, key)
            if isinstance(dp, list) and dp and isinstance(dp[0], Obj) and rng.random() < 0.7:
                d0 = rng.choice(dp)
                sub = rng.choice(["id", "name", "totalGlobalMem", "numSms", "computeMajor"])
                v = special(rng) if rng.random() < 0.7 else long_name(rng)
                oset(d0, sub, v)
                return "top deviceProperties[].%s = %r" % (sub, short(v))
            v = special(rng)
            oset(self.doc, key, v)
            return "top deviceProperties = %r" % (short(v),)
        if key == "traceEvents":  # a second traceEvents array
            extra = [clone(e) for e in rng.sample(self.events, min(3, len(self.events)))]
            self.doc.append(["traceEvents", extra])
            return "second traceEvents of %d events" % len(extra)
        v = special(rng)
        oset(self.doc, key, v)
        return "top %s = %r" % (key, short(v))

    OPS = [("op_remove_key", 6), ("op_dup_key", 6), ("op_special_value", 10),
           ("op_id_value", 6), ("op_time", 10), ("op_control_chars", 4),
           ("op_bad_utf8", 4), ("op_raw_key", 2), ("op_long_name", 3), ("op_step", 6),
           ("op_ph_cat", 3), ("op_events", 3), ("op_et_link", 3), ("op_top", 4)]

    def mutate(self, n):
        names = [o for o, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        done = 0
        tries = 0
        while done < n and tries < 50:
            tries += 1
            op = self.rng.choices(names, weights)[0]
            desc = getattr(self, op)()
            if desc:
                self.log.append(desc)
                done += 1


def clone(v):
    if isinstance(v, Obj):
        return Obj([[k, clone(x)] for k, x in v])
    if isinstance(v, list):
        return [clone(x) for x in v]
    return v


def serialize_one(v):
    out = []
    dump(v, out)
    return b"".join(out)


def short(v):
    if isinstance(v, Raw):
        return v.b[:60].decode("latin-1")
    if isinstance(v, str) and len(v) > 60:
        return v[:40] + "...(%d chars)" % len(v)
    if isinstance(v, Obj):
        return "{...}" if v else "{}"
    if isinstance(v, list) and len(v) > 4:
        return "[...]"
    return v


# ---------------------------------------------------------------------------
# Mutants


def seed_path(name):
    return os.path.join(SEED_DIR, SEEDS[name][0])


_seed_bytes = {}


def seed_bytes(name):
    if name not in _seed_bytes:
        with open(seed_path(name), "rb") as f:
            _seed_bytes[name] = f.read()
    return _seed_bytes[name]


def make_mutant(mseed):
    """(seed name, bytes, description list, gzipped) for this mutant seed."""
    rng = random.Random(mseed)
    names = [n for n, _ in SEED_WEIGHTS]
    name = rng.choices(names, [w for _, w in SEED_WEIGHTS])[0]
    kind = SEEDS[name][1]
    doc = parse(seed_bytes(name))
    m = Mutator(rng, doc, kind)
    m.mutate(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8]))
    data = serialize(doc)
    log = list(m.log)
    r = rng.random()
    gz = False
    if r < 0.12:  # truncate the text
        at = rng.randrange(len(data))
        data = data[:at]
        log.append("truncate at byte %d" % at)
    if rng.random() < 0.12:
        data = gzip.compress(data, compresslevel=1, mtime=0)
        gz = True
        log.append("gzip")
        if rng.random() < 0.3:
            at = rng.randrange(len(data))
            data = data[:at]
            log.append("truncate gzip at byte %d" % at)
    return name, data, log, gz


def commands(tt, name, mutant, d, orig):
    """[(label, argv, needs_db)] for a mutant file in directory d."""
    db = os.path.join(d, "m.db")
    kind = SEEDS[name][1]
    et = seed_path(PAIR_ET)
    kin = seed_path(PAIR_KINETO)
    mem = seed_path(MEM_SEED)
    if kind == "et":
        cmds = [
            ("ingest", [tt, "ingest", db, kin, mutant], False),
            ("info", [tt, "info", mutant], False),
            ("averages", [tt, "averages", mutant], False),
            ("crosscheck", [tt, "crosscheck", mutant, kin], False),
            ("crosscheck", [tt, "crosscheck", "--format", "json", "--strict", mutant, kin], False),
            ("memtimeline", [tt, "memtimeline", "--et", mutant, mem,
                             os.path.join(d, "mem.html")], False),
            ("info", [tt, "info", db], True),
            ("crosscheck", [tt, "crosscheck", db], True),
            ("averages", [tt, "averages", db], True),
            ("export", [tt, "export", db, os.path.join(d, "export-db.json")], True),
        ]
        return cmds
    ing = [tt, "ingest", db, mutant] + ([et] if name == PAIR_KINETO else [])
    cmds = [
        ("ingest", ing, False),
        ("info", [tt, "info", mutant], False),
        ("averages", [tt, "averages", mutant], False),
        ("averages", [tt, "averages", "--group-by-shape", mutant], False),
        ("kernels", [tt, "kernels", mutant], False),
        ("kernels", [tt, "kernels", "--by", "op", mutant], False),
        ("breakdown", [tt, "breakdown", mutant], False),
        ("breakdown", [tt, "breakdown", "--format", "json", mutant], False),
        ("memtimeline", [tt, "memtimeline", mutant, os.path.join(d, "mem.html")], False),
        ("crosscheck", [tt, "crosscheck", et, mutant], False),
        ("diff", [tt, "diff", orig, mutant], False),
        ("diff", [tt, "diff", mutant, orig], False),
        ("export", [tt, "export", mutant, os.path.join(d, "export.json")], False),
        ("queue", [tt, "queue", mutant], False),
        ("bandwidth", [tt, "bandwidth", "--series", mutant], False),
        ("collectives", [tt, "collectives", "--per-call", mutant], False),
        ("critical-path", [tt, "critical-path", "--overlay", os.path.join(d, "cp.json"), mutant],
         False),
        ("kernels", [tt, "kernels", "--sequences", "3", mutant], False),
        ("breakdown", [tt, "breakdown", "--by", "annotation", "--kernels", mutant], False),
        ("averages", [tt, "averages", "--under", "ProfilerStep#.*", "--name", "aten", mutant],
         False),
        ("export", [tt, "export", "--counters", mutant, os.path.join(d, "export-c.json")], False),
        ("info", [tt, "info", db], True),
        ("queue", [tt, "queue", db], True),
        ("critical-path", [tt, "critical-path", db], True),
        ("averages", [tt, "averages", db], True),
        ("kernels", [tt, "kernels", db], True),
        ("breakdown", [tt, "breakdown", "--by", "step", db], True),
        ("memtimeline", [tt, "memtimeline", db, os.path.join(d, "mem-db.html")], True),
        ("export", [tt, "export", db, os.path.join(d, "export-db.json")], True),
    ]
    if name == PAIR_KINETO:
        cmds.append(("crosscheck", [tt, "crosscheck", db], True))
    return cmds


def sanitizer_env(d, all_sites=False):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1"
    env["UBSAN_OPTIONS"] = "halt_on_error=%d:print_stacktrace=1" % (0 if all_sites else 1)
    supp = os.path.join(REPO, "tests", "lsan.supp")
    if os.path.exists(supp):
        env["LSAN_OPTIONS"] = "suppressions=" + supp
    env["TMPDIR"] = d
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.pop("TT_DEBUG_AVG", None)
    return env


ENV_SHOWN = "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"

SAN_LINE = re.compile(r"runtime error:|AddressSanitizer|LeakSanitizer|MemorySanitizer|"
                      r"ThreadSanitizer|UndefinedBehaviorSanitizer")
UBSAN_AT = re.compile(r"^(\S+?):(\d+):(?:\d+:)? runtime error:")
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in \S+ (\S+?):(\d+)(?::\d+)?\s*$")


def rel(path):
    p = os.path.normpath(path)
    if p.startswith(REPO + os.sep):
        return p[len(REPO) + 1:]
    return p


def in_repo(path):
    p = os.path.normpath(path)
    return p.startswith(REPO + os.sep) or not os.path.isabs(p)


def classify(label, rc, err, timed_out, all_sites=False):
    """[(site, first sanitizer line)]: empty when the run is fine. With
    all_sites (UBSan not halting), one entry per distinct UBSan site."""
    text = err.decode("utf-8", "replace")
    lines = text.splitlines()
    first = next((ln.strip() for ln in lines if SAN_LINE.search(ln)), None)
    if first is not None:
        found = []
        for ln in lines:
            m = UBSAN_AT.match(ln.strip())
            if m:
                site = "%s:%s" % (rel(m.group(1)), m.group(2))
                if site not in [f[0] for f in found]:
                    found.append((site, ln.strip()))
                if not all_sites:
                    break
        asan = next((ln.strip() for ln in lines if "AddressSanitizer" in ln
                     or "LeakSanitizer" in ln), None)
        if asan is not None and (all_sites or not found):
            kind = "sanitizer"
            mk = re.search(r"(AddressSanitizer|LeakSanitizer)[: ]+([\w-]+)?", asan)
            if mk:
                kind = mk.group(1) + (":" + mk.group(2) if mk.group(2) else "")
            if "LeakSanitizer" in asan:
                kind = "LeakSanitizer"
            site = kind + " (no frame in the project)"
            start = next(i for i, ln in enumerate(lines) if ln.strip() == asan)
            for ln in lines[start:]:
                m = FRAME.match(ln)
                if m and in_repo(m.group(1)) and "sanitizer" not in m.group(1):
                    site = "%s %s:%s" % (kind, rel(m.group(1)), m.group(2))
                    break
            found.append((site, asan))
        if found:
            return found
        return [("sanitizer (unparsed)", first)]
    if timed_out:
        return [("hang (%d s): %s" % (TIMEOUT_S, label), "timeout after %d s" % TIMEOUT_S)]
    if rc < 0:
        return [("signal %d: %s" % (-rc, label),
                 lines[-1] if lines else "killed by signal %d" % -rc)]
    if rc not in ALLOWED[label]:
        last = next((ln for ln in reversed(lines) if ln.strip()), "")
        return [("exit %d: %s" % (rc, label), last)]
    return []


def run_one(argv, env, cwd):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env, cwd=cwd, timeout=TIMEOUT_S)
        return p.returncode, p.stderr, False
    except subprocess.TimeoutExpired as e:
        return -9, e.stderr or b"", True


def write_mutant(mseed, d):
    name, data, log, gz = make_mutant(mseed)
    path = os.path.join(d, "mutant-%d.json%s" % (mseed, ".gz" if gz else ""))
    with open(path, "wb") as f:
        f.write(data)
    return name, path, log


def fuzz_one(tt, mseed, keep_dir, base_tmp, all_sites=False):
    """Generate one mutant and run every command on it.
    Returns (runs, findings, seed name, mutation log, [(label, rc)])."""
    d = tempfile.mkdtemp(prefix="mut-%d-" % mseed, dir=base_tmp)
    try:
        name, path, log = write_mutant(mseed, d)
        env = sanitizer_env(d, all_sites)
        findings = []
        rcs = []
        ingest_rc = None
        for label, argv, needs_db in commands(tt, name, path, d, seed_path(name)):
            if needs_db and ingest_rc != 0:
                continue
            rc, err, to = run_one(argv, env, d)
            rcs.append((label, rc))
            if label == "ingest" and ingest_rc is None:
                ingest_rc = rc
            for site, first in classify(label, rc, err, to, all_sites):
                findings.append({"seed": mseed, "site": site, "first": first, "rc": rc,
                                 "cmd": argv, "label": label, "timeout": to})
        if findings and keep_dir:
            os.makedirs(keep_dir, exist_ok=True)
            shutil.copy(path, os.path.join(keep_dir, os.path.basename(path)))
        return len(rcs), findings, name, log, rcs
    finally:
        shutil.rmtree(d, ignore_errors=True)


def show_cmd(argv, all_sites=False):
    env = ENV_SHOWN.replace("halt_on_error=1", "halt_on_error=0") if all_sites else ENV_SHOWN
    return env + " " + " ".join(shlex.quote(a) for a in argv)


def mutant_seeds(seed, count):
    rng = random.Random(seed)
    return [rng.getrandbits(40) for _ in range(count)]


def check_seeds():
    missing = [f for f, _ in SEEDS.values() if not os.path.exists(os.path.join(SEED_DIR, f))]
    if missing:
        sys.exit("mutate_traces.py: missing seeds in %s: %s (run --make-seeds)"
                 % (SEED_DIR, ", ".join(missing)))


def replay(args, tt):
    d = args.keep_dir or tempfile.mkdtemp(prefix="mut-replay-")
    os.makedirs(d, exist_ok=True)
    for f in ("m.db", "m.db-journal", "mem.html", "mem-db.html", "export.json", "export-db.json"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    name, path, log = write_mutant(args.replay, d)
    print("mutant %d: %s (from seed %s)" % (args.replay, path, seed_path(name)))
    for x in log:
        print("  mutation: %s" % x)
    if not tt:
        for label, argv, needs_db in commands("tracetool", name, path, d, seed_path(name)):
            print(("[after ingest] " if needs_db else "") + show_cmd(argv))
        return 0
    env = sanitizer_env(d, args.all_sites)
    ingest_rc = None
    bad = 0
    for label, argv, needs_db in commands(tt, name, path, d, seed_path(name)):
        print(("[after ingest] " if needs_db else "") + show_cmd(argv, args.all_sites))
        if needs_db and ingest_rc != 0:
            print("  skipped: ingest failed")
            continue
        rc, err, to = run_one(argv, env, d)
        if label == "ingest" and ingest_rc is None:
            ingest_rc = rc
        cs = classify(label, rc, err, to, args.all_sites)
        print("  exit %d" % rc)
        for site, first in cs:
            print("  FINDING %s: %s" % (site, first[:300]))
        bad += bool(cs)
    print("files kept in %s" % d)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tracetool", help="the tracetool binary (an ASan+UBSan build)")
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--count", type=int, default=100, help="mutants (default 100)")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="stop starting mutants after SEC seconds (0: no limit)")
    ap.add_argument("--keep-dir", help="copy mutants with findings here (replay: write the mutant here)")
    ap.add_argument("--jobs", type=int, default=0, help="mutants run at once (default: CPUs)")
    ap.add_argument("--replay", type=int, metavar="SEED",
                    help="regenerate the mutant of this mutant seed, print its path and commands, run them")
    ap.add_argument("--make-seeds", metavar="SHARED_TESTDATA",
                    help="rewrite seeds_structured/ from the team's shared test data")
    ap.add_argument("--dump", type=int, metavar="SEED", help="write the mutant of SEED to stdout")
    ap.add_argument("--all-sites", action="store_true",
                    help="UBSan does not halt: report every distinct UBSan site of a run "
                         "(finds sites hidden behind an earlier one)")
    ap.add_argument("--stats", action="store_true",
                    help="also print the exit codes of each command and the seeds used")
    args = ap.parse_args()

    if args.make_seeds:
        make_seeds(args.make_seeds)
        return 0
    check_seeds()
    if args.dump is not None:
        sys.stdout.buffer.write(make_mutant(args.dump)[1])
        return 0
    tt = os.path.abspath(args.tracetool) if args.tracetool else None
    if args.replay is not None:
        if tt and not os.access(tt, os.X_OK):
            print("mutate_traces.py: %s: no such executable, skipped" % tt, file=sys.stderr)
            return 77
        return replay(args, tt)
    if not tt or not os.path.isfile(tt) or not os.access(tt, os.X_OK):
        print("mutate_traces.py: tracetool binary %r missing, skipped" % args.tracetool,
              file=sys.stderr)
        return 77
    jobs = args.jobs or os.cpu_count() or 1
    t0 = time.monotonic()
    seeds = mutant_seeds(args.seed, args.count)
    base_tmp = tempfile.mkdtemp(prefix="mutate-traces-")
    total_runs = 0
    all_findings = []
    done = 0
    used = {}
    codes = {}
    lock = threading.Lock()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            it = iter(seeds)
            pending = []  # futures in mutant order

            def submit():
                if args.time_limit and time.monotonic() - t0 > args.time_limit:
                    return False
                s = next(it, None)
                if s is None:
                    return False
                pending.append(ex.submit(fuzz_one, tt, s, args.keep_dir, base_tmp,
                                         args.all_sites))
                return True

            for _ in range(jobs * 2):
                if not submit():
                    break
            while pending:
                f = pending.pop(0)
                runs, findings, name, log, rcs = f.result()
                with lock:
                    done += 1
                    total_runs += runs
                    used[name] = used.get(name, 0) + 1
                    for label, rc in rcs:
                        codes.setdefault(label, {}).setdefault(rc, 0)
                        codes[label][rc] += 1
                    for fd in findings:
                        all_findings.append(fd)
                        print("FINDING mutant seed %d (%s: %s)" % (fd["seed"], name, "; ".join(log)[:300]))
                        print("  site: %s   exit %d" % (fd["site"], fd["rc"]))
                        print("  cmd:  %s" % show_cmd(fd["cmd"], args.all_sites))
                        print("  %s" % fd["first"][:300])
                        print("  replay: %s --tracetool %s --replay %d"
                              % (sys.argv[0], args.tracetool, fd["seed"]))
                    sys.stdout.flush()
                submit()
    finally:
        shutil.rmtree(base_tmp, ignore_errors=True)
    if args.stats:
        print("seeds: " + ", ".join("%s %d" % kv for kv in sorted(used.items())))
        for label in sorted(codes):
            print("exit codes of %-11s " % label + ", ".join(
                "%d: %d" % kv for kv in sorted(codes[label].items())))
    if all_findings:
        sites = {}
        for fd in all_findings:
            sites.setdefault(fd["site"], []).append(fd)
        print("findings by site:")
        for site, fds in sorted(sites.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            fd = fds[0]
            print("  %s: %d run(s), %d mutant(s); e.g. --replay %d: tracetool %s"
                  % (site, len(fds), len({x["seed"] for x in fds}), fd["seed"],
                     " ".join(shlex.quote(os.path.basename(a)) for a in fd["cmd"][1:])))
    print("%d mutants, %d runs, %d findings, %.1f s, seed %d"
          % (done, total_runs, len(all_findings), time.monotonic() - t0, args.seed))
    return 1 if all_findings else 0


# ---------------------------------------------------------------------------
# Seeds: cut from the shared test data (../shared/testdata, see its SOURCES.md)


def make_seeds(shared):
    def load(rel_path):
        p = os.path.join(shared, rel_path)
        with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
            return parse(f.read())

    def write(fname, doc):
        os.makedirs(SEED_DIR, exist_ok=True)
        with open(os.path.join(SEED_DIR, fname), "wb") as f:
            f.write(serialize(doc))

    def cut(doc, windows, keep_extra=lambda e: False):
        """Metadata, ProfilerStep spans and the events starting in the windows;
        runtime calls and flows only where their kernel is kept."""
        evs = oget(doc, "traceEvents")
        inwin = []
        for e in evs:
            ts = oget(e, "ts")
            if oget(e, "ph") == "M" or str(oget(e, "name", "")).startswith("ProfilerStep#") \
                    or keep_extra(e):
                inwin.append(e)
            elif isinstance(ts, (int, float)) and any(a <= ts <= b for a, b in windows):
                inwin.append(e)
        corr = set()
        for e in inwin:
            if oget(e, "cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                corr.add(oget(oget(e, "args", Obj()), "correlation"))
        kept = []
        for e in inwin:
            cat = oget(e, "cat")
            if cat in ("cuda_runtime", "cuda_driver"):
                if oget(oget(e, "args", Obj()), "correlation") not in corr:
                    continue
            if cat == "ac2g" and oget(e, "id") not in corr:
                continue
            kept.append(e)
        oset(doc, "traceEvents", kept)
        return doc

    # A GPU trace with ProfilerStep#1009/#1010, kernels, memcpy, memset (HTA's
    # TraceDiff test base, whole).
    write("gpu_steps.json", load("hta/trace_compare/base/base.json.gz"))
    # The ET / Kineto pair (crosscheck: 36 of 36 ops match), whole.
    write("simple_add_kineto.json", load("hta/execution_trace/benchmark_simple_add_trace.json.gz"))
    write("simple_add_et.json", load("hta/execution_trace/benchmark_simple_add_et.json.gz"))
    # [memory] events with Addr / Total Allocated (HTA's df_index_resolver):
    # 4 ms around the first [memory] event, and the first 2 ms of step 3.
    doc = load("hta/df_index_resolver/df_index_resolver.json.gz")
    evs = oget(doc, "traceEvents")
    m0 = min(oget(e, "ts") for e in evs if oget(e, "name") == "[memory]")
    steps = sorted(oget(e, "ts") for e in evs if str(oget(e, "name", "")).startswith("ProfilerStep#"))
    doc = cut(doc, [(m0 - 2000, m0 + 2000), (steps[1], steps[1] + 1500)])
    oset(doc, "traceEvents", [e for e in oget(doc, "traceEvents")
                              if not str(oget(e, "name", "")).startswith("ProfilerStep#")
                              or oget(e, "ts") <= steps[1]])
    write("memory.json", doc)
    # NCCL kernels, GPU user annotations, fractional ts (HTA's nccl_data).
    doc = load("hta/nccl_parser_config/nccl_data.json.gz")
    evs = oget(doc, "traceEvents")
    nk = sorted(oget(e, "ts") for e in evs if oget(e, "cat") == "kernel"
                and "nccl" in str(oget(e, "name", "")))
    steps = sorted(oget(e, "ts") for e in evs if str(oget(e, "name", "")).startswith("ProfilerStep#"))
    doc = cut(doc, [(nk[0] - 3000, nk[0] + 3000), (steps[1] - 500, steps[1] + 1500)])
    oset(doc, "traceEvents", [e for e in oget(doc, "traceEvents")
                              if not str(oget(e, "name", "")).startswith("ProfilerStep#")
                              or oget(e, "ts") <= steps[1]])
    write("nccl.json", doc)
    for f in sorted(os.listdir(SEED_DIR)):
        print("%s %d bytes" % (f, os.path.getsize(os.path.join(SEED_DIR, f))))


if __name__ == "__main__":
    sys.exit(main())
