#!/usr/bin/env python3
"""Synthetic Kineto traces whose rows a single reading cannot link (the
three shapes that once sent a trace file through a temporary database),
and an Execution Trace of their CPU ops. Python standard library only.

    rare_traces.py SHAPE SCALE OUT.json [ET.json]

SHAPE:
  late_b   'B' slices closed after their row was handed over: every
           ProfilerStep#N is a 'B' ... 'E' pair around hundreds of events
  gpu_late GPU activities far from their runtime call: the kernels of a
           block of launches written before the calls (more than the
           in-stream linker holds back), correlations used by two calls,
           a kernel that starts before its call
  rt_dirty ops out of order on a thread: on one thread each call comes
           before the op that encloses it, ops written latest-first (their
           nesting out of order), ops with the same start and length, a
           'B' cpu_op
  all      the three together
  plain    none of them (read in one pass)
SCALE multiplies the number of events (about 2,700 per unit).
Every trace also has memory events, user annotations on the CPU and the GPU
(joined by External id) and Record function ids (the ET's rf_id).
"""

import json
import sys

UNIT = 100  # launches per step and unit of scale


def X(name, ts, dur, cat, pid, tid, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


class Gen(object):
    def __init__(self, shape):
        self.shape = shape
        self.ev = []
        self.et = []
        self.corr = 0
        self.rf = 0
        self.ext = 0
        self.nid = 10

    def op(self, name, ts, dur, tid, parent):
        self.rf += 1
        self.ext += 1
        self.nid += 1
        self.et.append({"name": name, "id": self.nid, "rf_id": self.rf, "parent": parent,
                        "fw_parent": 0, "seq_id": -1, "scope": 0, "tid": tid, "fw_tid": 0,
                        "op_schema": "", "inputs": [], "input_shapes": [], "input_types": [],
                        "outputs": [], "output_shapes": [], "output_types": []})
        return (X(name, ts, dur, "cpu_op", 1, tid, **{"Record function id": self.rf,
                                                         "External id": self.ext,
                                                         "Input Dims": [[4, 4], [4]]}),
                self.nid)

    def launch(self, ts, tid, corr=None):
        if corr is None:
            self.corr += 1
            corr = self.corr
        return X("cudaLaunchKernel", ts, 4, "cuda_runtime", 1, tid, correlation=corr,
                 **{"External id": self.ext}), corr

    def kernel(self, name, ts, dur, corr):
        return X(name, ts, dur, "kernel", 0, 7, correlation=corr, device=0, stream=7,
                 grid=[64, 1, 1], block=[128, 1, 1], **{"External id": self.ext})

    def step(self, s, t0, n):
        """one ProfilerStep#s of n launches from t0: its events in file order"""
        late_b = self.shape in ("late_b", "all")
        far = self.shape in ("gpu_late", "all")
        cpu, gpu, calls = [], [], []
        end = t0 + 40 * n + 100
        if late_b:
            cpu.append({"ph": "B", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                        "pid": 1, "tid": 1, "ts": t0})
        else:
            cpu.append(X("ProfilerStep#%d" % s, t0, end - t0, "user_annotation", 1, 1))
        root = self.nid
        for i in range(n):
            t = t0 + 10 + 40 * i
            o, oid = self.op("aten::op%d" % (i % 9), t, 30, 1, root)
            cpu.append(o)
            inner, _ = self.op("aten::inner%d" % (i % 4), t + 2, 20, 1, oid)
            cpu.append(inner)
            if i % 10 == 0:
                self.ext += 1
                cpu.append(X("annot%d" % (i % 3), t + 1, 25, "user_annotation", 1, 1,
                             **{"External id": self.ext}))
                gpu.append(X("annot%d" % (i % 3), t + 6, 20, "gpu_user_annotation", 0, 7,
                             **{"External id": self.ext}))
            c, corr = self.launch(t + 5, 1)
            calls.append(c)
            gpu.append(self.kernel("gemm%d" % (i % 5), t + 12, 3 + i % 7, corr))
            if i % 25 == 0 and far:  # one correlation, two calls, kernels after each
                c2, _ = self.launch(t + 15, 1, corr)
                calls.append(c2)
                gpu.append(self.kernel("graph_k", t + 17, 2, corr))
                gpu.append(self.kernel("graph_k", t + 13, 2, corr))
            if i % 50 == 7:  # a kernel that starts before its call
                gpu.append(self.kernel("early", t + 1, 1, corr))
            cpu.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                        "pid": 1, "tid": 1, "ts": t + 3,
                        "args": {"Device Type": 1, "Device Id": 0, "Addr": 1000 + i % 13,
                                 "Bytes": 256 * (1 if i % 2 else -1),
                                 "Total Allocated": 4096 + 256 * (i % 2),
                                 "Total Reserved": 8192}})
        if late_b:
            cpu.append({"ph": "E", "pid": 1, "tid": 1, "ts": end})
        # in order: ops (and calls, by start) on the CPU thread, then the GPU
        out = sorted(cpu + calls, key=lambda e: (e["ts"], -e.get("dur", 0)))
        return gpu + out  # Kineto's order: a step's kernels before their calls

    def far_block(self, t0, n):
        """n launches on thread 3 whose kernels all come before the calls:
        more than the in-stream linker holds back (4,096)"""
        calls, gpu = [], []
        for i in range(n):
            t = t0 + 10 * i
            c, corr = self.launch(t, 3)
            calls.append(c)
            gpu.append(self.kernel("far_k%d" % (i % 4), t + 3, 2, corr))
        return gpu + calls

    def dirty_thread(self, t0, n):
        """thread 2: each call before the op enclosing it, ops latest first,
        twin ops (same start and length), a 'B' cpu_op never closed early"""
        ev = [{"ph": "B", "cat": "cpu_op", "name": "aten::b_op", "pid": 1, "tid": 2, "ts": t0}]
        for i in reversed(range(n)):
            t = t0 + 10 + 40 * i
            c, corr = self.launch(t + 5, 2)
            ev.append(c)
            ev.append(self.kernel("dirty_k%d" % (i % 3), t + 9, 2, corr))
            o, oid = self.op("aten::twin_a", t, 30, 2, 1)
            ev.append(o)
            o2, _ = self.op("aten::twin_b", t, 30, 2, oid)
            ev.append(o2)
        ev.append({"ph": "E", "pid": 1, "tid": 2, "ts": t0 + 40 * n + 50})
        return ev

    def trace(self, scale):
        steps = 3
        t = 1000
        n = UNIT * scale
        for s in range(steps):
            self.ev += self.step(s + 1, t, n)
            t += 40 * n + 200
        if self.shape in ("rt_dirty", "all"):
            self.ev += self.dirty_thread(1000, n)
        if self.shape in ("gpu_late", "all"):
            self.ev += self.far_block(1000, 5000 + 500 * scale)
        self.ev.append({"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "CPU"}})
        return {"schemaVersion": 1, "deviceProperties": [],
                "distributedInfo": {"rank": 0, "world_size": 1},
                "traceEvents": self.ev}

    def et_doc(self):
        root = [{"name": "[pytorch|profiler|execution_graph|thread]", "id": 1, "rf_id": 0,
                 "parent": 1, "fw_parent": 0, "seq_id": -1, "scope": 7, "tid": 1, "fw_tid": 0,
                 "op_schema": "", "inputs": [], "input_shapes": [], "input_types": [],
                 "outputs": [], "output_shapes": [], "output_types": []}]
        return {"schema": "1.0.1", "pid": 1, "time": "2024-01-01 00:00:00",
                "start_ts": 0, "finish_ts": 1, "nodes": root + self.et}


def write(shape, scale, out, et=None):
    g = Gen(shape)
    doc = g.trace(scale)
    with open(out, "w") as f:
        json.dump(doc, f)
    if et:
        with open(et, "w") as f:
            json.dump(g.et_doc(), f)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    write(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
