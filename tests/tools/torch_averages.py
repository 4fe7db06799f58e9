"""Torch's prof.key_averages() recomputed from a Kineto / Chrome trace file,
independently of tracetool (Python standard library only).

Follows docs/TORCH.md section 3 (3.1-3.4, recipe 3.6):

  * events: "X" events with cat cpu_op / user_annotation / legacy Operator /
    no cat at all (legacy array traces) are CPU ops; cuda_runtime /
    cuda_driver / legacy Runtime are CPU events too (runtime calls); kernel /
    gpu_memcpy / gpu_memset (legacy Kernel / Memcpy / Memset) and
    gpu_user_annotation are device events; python_function, the "Trace" span
    and everything else are ignored. "[memory]" instant events ("i"/"I") are
    allocator records.
  * torch's _filter_name list is dropped; "ProfilerStep#N" -> "ProfilerStep*".
  * times are integer nanoseconds, converted exactly from the microsecond
    text (the JSON is parsed with parse_float=decimal.Decimal).
  * per-thread (pid, tid) trees with torch's stack rule over the events
    sorted by (start, -end) (stable: ties keep file order), then
    _remove_dup_nodes (same-name single child collapse; the parent's
    children and kernels are REPLACED by the child's).
  * kernel attribution: device event (kernel/memcpy/memset) -> runtime call
    with the same args.correlation -> the innermost cpu_op (legacy Operator;
    never user_annotation) on the same (pid, tid) whose [ts, ts+dur] holds
    the call.
  * memory: for every CPU event (ops and runtime calls) the Bytes of every
    [memory] record with start <= t <= end (any thread), split into CPU
    (Device Type 0, 2, 5) and device (1, 6, 12, 20); self = own minus the
    direct children's. Records inside no CPU event are "[memory]" rows.
  * key = (name, device type[, str(input shapes)]), first-occurrence order.

Public API:
  load_events(path)                       the event list (gzip by magic bytes)
  key_averages(events, group_by_shape=False, steps=None) -> [Row]
  format_time(us)                         torch's _format_time
  self_device_total_ns(rows)              the table footer's "Self CUDA time total"
"""

import bisect
import collections
import decimal
import gzip
import json
import re

GZIP_MAGIC = b"\x1f\x8b"

FILTERED_NAMES = frozenset([
    "[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
    "profiler::_record_function_enter_new", "profiler::_record_function_exit",
    "aten::is_leaf", "aten::output_nr", "aten::_version",
])

OP_CATS = frozenset(["cpu_op", "Operator"])          # kernel owners
UA_CATS = frozenset(["user_annotation"])
RUNTIME_CATS = frozenset(["cuda_runtime", "cuda_driver", "Runtime"])
KERNEL_CATS = frozenset(["kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"])
GPU_ANNOT_CATS = frozenset(["gpu_user_annotation"])

MEM_CPU_TYPES = frozenset([0, 2, 5])       # CPU, MKLDNN, IDEEP
MEM_DEV_TYPES = frozenset([1, 6, 12, 20])  # CUDA, HIP, XPU, PrivateUse1

CPU, CUDA = "CPU", "CUDA"


# ---------------------------------------------------------------- loading

def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == GZIP_MAGIC:
        data = gzip.decompress(data)
    return data


def load_events(path):
    """The trace's event list; floats are decimal.Decimal (exact us text)."""
    doc = json.loads(read_bytes(path).decode("utf-8", errors="replace"),
                     parse_float=decimal.Decimal, strict=False)
    if isinstance(doc, dict):
        evs = doc.get("traceEvents")
        return evs if isinstance(evs, list) else []
    return doc if isinstance(doc, list) else []


def to_ns(v):
    """Microseconds (int or Decimal) -> integer nanoseconds, or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return None
        return int(round(v * 1000))
    return None


def norm_id(v):
    """pid/tid key: numeric strings are the same thread as the number."""
    if isinstance(v, str) and re.match(r"^-?[0-9]+$", v):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def int_arg(args, key):
    v = args.get(key) if isinstance(args, dict) else None
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        return int(v)
    return None


def py_repr(v):
    """str() of the value as torch holds it (lists of ints -> "[[64, 64], []]")."""
    if isinstance(v, list):
        return "[" + ", ".join(py_repr(x) for x in v) + "]"
    if isinstance(v, decimal.Decimal):
        return repr(float(v))
    return repr(v)


# ---------------------------------------------------------------- events

class Ev(object):
    __slots__ = ("idx", "name", "kind", "cat", "thread", "start", "end", "shapes",
                 "corr", "parent", "children", "kernels", "cpu_mem", "dev_mem",
                 "is_ua", "removed")

    def __init__(self, idx, name, kind, cat, thread, start, end, shapes=None):
        self.idx = idx          # file order
        self.name = name        # after the ProfilerStep rewrite
        self.kind = kind        # 'op', 'runtime', 'memory' (CPU) / 'device', 'gpu_ua'
        self.cat = cat
        self.thread = thread
        self.start = start      # ns
        self.end = end          # ns
        self.shapes = shapes    # str(list) or None
        self.corr = None
        self.parent = None
        self.children = []
        self.kernels = []       # durations (ns)
        self.cpu_mem = 0
        self.dev_mem = 0
        self.is_ua = False
        self.removed = False

    @property
    def is_cpu(self):
        return self.kind in ("op", "runtime", "memory")


class Row(object):
    """One key_averages() entry; times in us (ns / 1000), memory in bytes."""

    def __init__(self, name, device, shapes):
        self.name = name
        self.device = device
        self.input_shapes = shapes
        self.count = 0
        self.cpu_ns = 0
        self.self_cpu_ns = 0
        self.dev_ns = 0
        self.self_dev_ns = 0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.has_parent = False        # of the first event (top_level_events_only)
        self.is_user_annotation = False
        self.first = None              # (start, -end) of the first event

    cpu_time_total = property(lambda self: self.cpu_ns / 1000.0)
    self_cpu_time_total = property(lambda self: self.self_cpu_ns / 1000.0)
    device_time_total = property(lambda self: self.dev_ns / 1000.0)
    self_device_time_total = property(lambda self: self.self_dev_ns / 1000.0)

    @property
    def key(self):
        return (self.name, self.device, self.input_shapes)

    def __repr__(self):
        return ("Row(%r, %s, count=%d, cpu=%.3f, self_cpu=%.3f, dev=%.3f, self_dev=%.3f, "
                "mem=%d/%d/%d/%d)" % (self.name, self.device, self.count, self.cpu_time_total,
                                      self.self_cpu_time_total, self.device_time_total,
                                      self.self_device_time_total, self.cpu_memory_usage,
                                      self.self_cpu_memory_usage, self.device_memory_usage,
                                      self.self_device_memory_usage))


def rewrite_name(name):
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def step_windows(raw, steps):
    """[start, end] (ns) of every ProfilerStep#N X event with a <= N <= b."""
    a, b = steps
    out = []
    for e in raw:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        name = e.get("name")
        if not isinstance(name, str) or not name.startswith("ProfilerStep#"):
            continue
        m = re.match(r"^ProfilerStep#([0-9]+)", name)
        if not m or not a <= int(m.group(1)) <= b:
            continue
        ts, dur = to_ns(e.get("ts")), to_ns(e.get("dur"))
        if ts is None:
            continue
        out.append((ts, ts + max(dur or 0, 0)))
    return out


def collect(raw, group_by_shape):
    """Classify the raw events: (cpu_events, device_events, memory records)."""
    cpu, dev, mem = [], [], []
    for idx, e in enumerate(raw):
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        name = e.get("name")
        if not isinstance(name, str):
            name = "" if name is None else str(name)
        args = e.get("args")
        if ph in ("i", "I") and name == "[memory]":
            ts = to_ns(e.get("ts"))
            nbytes = int_arg(args, "Bytes")
            dtype = int_arg(args, "Device Type")
            if ts is None or nbytes is None:
                continue
            mem.append((ts, dtype, nbytes, idx, norm_id(e.get("pid")), norm_id(e.get("tid"))))
            continue
        if ph != "X":
            continue
        cat = e.get("cat") if "cat" in e else None
        if cat is not None and not isinstance(cat, str):
            continue
        if cat is None or cat in OP_CATS or cat in UA_CATS:
            kind = "op"
        elif cat in RUNTIME_CATS:
            kind = "runtime"
        elif cat in KERNEL_CATS:
            kind = "device"
        elif cat in GPU_ANNOT_CATS:
            kind = "gpu_ua"
        else:
            continue  # python_function, Trace, overhead, ...
        if name in FILTERED_NAMES:
            continue
        ts = to_ns(e.get("ts"))
        if ts is None:
            continue
        dur = to_ns(e.get("dur"))
        end = ts + (dur if dur is not None and dur > 0 else 0)
        shapes = None
        if group_by_shape and kind == "op" and isinstance(args, dict):
            dims = args.get("Input Dims", args.get("Input dims"))
            if dims is not None:
                shapes = py_repr(dims)
        ev = Ev(idx, rewrite_name(name), kind, cat,
                (norm_id(e.get("pid")), norm_id(e.get("tid"))), ts, end, shapes)
        ev.is_ua = cat in UA_CATS or kind == "gpu_ua"
        if kind in ("runtime", "device"):
            ev.corr = int_arg(args, "correlation")
        (dev if kind in ("device", "gpu_ua") else cpu).append(ev)
    return cpu, dev, mem


def attribute_kernels(cpu, dev):
    """device event -> runtime (same correlation) -> innermost enclosing op."""
    rt_by_corr = {}
    for r in cpu:
        if r.kind == "runtime" and r.corr is not None:
            rt_by_corr.setdefault(r.corr, r)
    ops_by_thread = collections.defaultdict(list)
    for o in cpu:
        if o.kind == "op" and o.cat in OP_CATS:
            ops_by_thread[o.thread].append(o)
    index = {}
    for th, ops in ops_by_thread.items():
        ops.sort(key=lambda o: (o.start, -o.end, o.idx))
        starts = [o.start for o in ops]
        pmax, m = [], None
        for o in ops:
            m = o.end if m is None or o.end > m else m
            pmax.append(m)
        index[th] = (ops, starts, pmax)
    owner_of_rt = {}

    def owner(r):
        if id(r) in owner_of_rt:
            return owner_of_rt[id(r)]
        best = None
        ent = index.get(r.thread)
        if ent is not None:
            ops, starts, pmax = ent
            i = bisect.bisect_right(starts, r.start) - 1
            # latest start that encloses the call; among equal starts the
            # shortest (sorted last); among identical intervals the last in
            # file order (the deepest in torch's tree)
            while i >= 0 and pmax[i] >= r.end:
                if ops[i].end >= r.end:
                    best = ops[i]
                    break
                i -= 1
        owner_of_rt[id(r)] = best
        return best

    for d in dev:
        if d.kind != "device" or d.corr is None:
            continue
        r = rt_by_corr.get(d.corr)
        if r is None:
            continue
        o = owner(r)
        if o is not None:
            o.kernels.append(d.end - d.start)


def build_trees(cpu):
    """torch's _populate_cpu_children over the (start, -end)-sorted events."""
    groups = collections.defaultdict(list)
    for e in cpu:  # already sorted
        groups[e.thread].append(e)
    for evs in groups.values():
        stack = []
        for ev in evs:
            while stack:
                p = stack[-1]
                if ev.start >= p.end or ev.end > p.end:
                    stack.pop()
                else:
                    p.children.append(ev)
                    ev.parent = p
                    break
            stack.append(ev)


def remove_dup_nodes(events):
    """torch's EventList._remove_dup_nodes, on the sorted list."""
    while True:
        to_delete = set()
        for i, ev in enumerate(events):
            p = ev.parent
            if p is not None and p.name == ev.name and len(p.children) == 1:
                p.children = ev.children
                p.kernels = ev.kernels
                for ch in ev.children:
                    ch.parent = p
                to_delete.add(i)
        if not to_delete:
            return events
        events = [ev for i, ev in enumerate(events) if i not in to_delete]


def key_averages(raw, group_by_shape=False, steps=None):
    """Rows in key_averages() order for the raw event list (load_events)."""
    cpu, dev, mem = collect(raw, group_by_shape)
    attribute_kernels(cpu, dev)  # an op's kernels do not depend on --steps
    if steps is not None:
        wins = step_windows(raw, steps)

        def inside(t):
            return any(a <= t <= b for a, b in wins)
        cpu = [e for e in cpu if inside(e.start)]
        dev = [e for e in dev if inside(e.start)]
        mem = [m for m in mem if inside(m[0])]

    # memory: prefix sums over records sorted by time
    mem = [m for m in mem if m[1] in MEM_CPU_TYPES or m[1] in MEM_DEV_TYPES]
    mem.sort(key=lambda m: (m[0], m[3]))
    mts = [m[0] for m in mem]
    pc, pd = [0], [0]
    for m in mem:
        c = m[2] if m[1] in MEM_CPU_TYPES else 0
        pc.append(pc[-1] + c)
        pd.append(pd[-1] + (m[2] - c))
    for e in cpu:
        lo = bisect.bisect_left(mts, e.start)
        hi = bisect.bisect_right(mts, e.end)
        e.cpu_mem = pc[hi] - pc[lo]
        e.dev_mem = pd[hi] - pd[lo]
    # records inside no CPU event interval: standalone "[memory]" events
    ivs = sorted((e.start, e.end) for e in cpu)
    merged = []
    for a, b in ivs:
        if merged and a <= merged[-1][1]:
            if b > merged[-1][1]:
                merged[-1][1] = b
        else:
            merged.append([a, b])
    mstarts = [iv[0] for iv in merged]
    for ts, dtype, nbytes, idx, pid, tid in mem:
        i = bisect.bisect_right(mstarts, ts) - 1
        if i >= 0 and merged[i][1] >= ts:
            continue
        ev = Ev(idx, "[memory]", "memory", None, (pid, tid), ts, ts)
        if dtype in MEM_CPU_TYPES:
            ev.cpu_mem = nbytes
        else:
            ev.dev_mem = nbytes
        cpu.append(ev)

    allev = cpu + dev
    allev.sort(key=lambda e: (e.start, -e.end, e.idx))
    cpu_sorted = [e for e in allev if e.is_cpu]
    build_trees(cpu_sorted)
    allev = remove_dup_nodes(allev)

    # metrics, children before parents (device totals recurse)
    dev_total = {}

    def device_total(e):
        k = id(e)
        if k not in dev_total:
            dev_total[k] = sum(e.kernels) + sum(device_total(c) for c in e.children)
        return dev_total[k]

    for e in sorted((e for e in allev if e.is_cpu), key=lambda e: (-e.start, e.end)):
        device_total(e)  # warm the cache bottom-up (avoids deep recursion)

    rows = collections.OrderedDict()
    for e in allev:
        device = CPU if e.is_cpu else CUDA
        key = (e.name, device, (e.shapes or "[]") if group_by_shape else None)
        r = rows.get(key)
        if r is None:
            r = rows[key] = Row(e.name, device, key[2])
            r.has_parent = e.parent is not None
            r.is_user_annotation = e.is_ua
            r.first = (e.start, -e.end)
        r.count += 1
        if e.is_cpu:
            total = e.end - e.start
            r.cpu_ns += total
            r.self_cpu_ns += total - sum(c.end - c.start for c in e.children)
            dt = device_total(e)
            r.dev_ns += dt
            r.self_dev_ns += dt - sum(device_total(c) for c in e.children)
            r.cpu_memory_usage += e.cpu_mem
            r.device_memory_usage += e.dev_mem
            r.self_cpu_memory_usage += e.cpu_mem - sum(c.cpu_mem for c in e.children)
            r.self_device_memory_usage += e.dev_mem - sum(c.dev_mem for c in e.children)
        else:
            d = e.end - e.start
            r.dev_ns += d
            r.self_dev_ns += d
    return list(rows.values())


def averages_file(path, group_by_shape=False, steps=None):
    return key_averages(load_events(path), group_by_shape, steps)


# ---------------------------------------------------------------- table bits

def format_time(us):
    """torch.autograd.profiler_util._format_time"""
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


def self_device_total_ns(rows):
    """sum_self_cuda_time_total: device rows, gpu_user_annotation excluded."""
    return sum(r.self_dev_ns for r in rows if r.device == CUDA and not r.is_user_annotation)


def self_cpu_total_ns(rows):
    return sum(r.self_cpu_ns for r in rows)


if __name__ == "__main__":
    import sys
    for r in averages_file(sys.argv[1], group_by_shape="--group-by-shape" in sys.argv):
        print(r)
