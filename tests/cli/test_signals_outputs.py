#!/usr/bin/env python3
"""Outputs and signals (issue 29: D13 and the low items on outputs).

- `export` run under nohup (SIGHUP ignored when it starts) and sent SIGHUP
  all through its run finishes its work and exits 0 (it used to install its
  own handler and die with 129).
- A command interrupted by SIGINT, SIGTERM or SIGHUP while it writes its
  output leaves no temporary file beside it (memtimeline's OUT.XXXXXX,
  export's OUT.tmp), and dies of that signal.
- `breakdown --rank 99 DIR` names DIR in its error, not a temporary
  database.

Environment: TRACETOOL. Needs no shared data (traces are made here).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("signals_outputs")
TT = os.path.abspath(os.environ.get("TRACETOOL", "build/tracetool"))


def memory_trace(path, n):
    """n [memory] allocations and frees on cuda:0 under one op per 100."""
    with open(path, "w") as f:
        f.write('{"schemaVersion":1,"traceEvents":[\n')
        first = True
        for i in range(n):
            ts = 1000 + i * 10
            if i % 100 == 0:
                f.write('%s{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,'
                        '"ts":%d,"dur":995}' % ("" if first else ",\n", ts))
                first = False
            f.write(',\n{"ph":"i","cat":"cpu_instant_event","name":"[memory]","s":"t","pid":1,'
                    '"tid":1,"ts":%d,"args":{"Device Type":1,"Device Id":0,"Addr":%d,'
                    '"Bytes":%d,"Total Allocated":%d,"Total Reserved":%d}}'
                    % (ts + 1, 4096 * (i % 977 + 1), 512 if i % 2 == 0 else -512,
                       512 * ((i + 1) % 2), 1 << 20))
        f.write("\n]}\n")


def gpu_rank(path, rank, n):
    """A rank's trace: n launches of a kernel, with distributedInfo."""
    evs = []
    for i in range(n):
        ts = 1000 + i * 100
        evs.append('{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":%d,"dur":50,'
                   '"args":{"External id":%d}}' % (ts, i + 1))
        evs.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                   '"ts":%d,"dur":10,"args":{"correlation":%d,"External id":%d}}'
                   % (ts + 5, i + 1, i + 1))
        evs.append('{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%d,"dur":40,'
                   '"args":{"device":0,"stream":7,"correlation":%d,"External id":%d}}'
                   % (ts + 20, i + 1, i + 1))
    with open(path, "w") as f:
        f.write('{"schemaVersion":1,"distributedInfo":{"rank":%d,"world_size":2},'
                '"traceEvents":[\n%s\n]}\n' % (rank, ",\n".join(evs)))


def leftovers(d, name):
    return sorted(x for x in os.listdir(d) if x.startswith(name) and x != name)


def interrupt_while_writing(tmp, args, out, sig, label):
    """Start args, send sig as soon as a temporary file beside out exists;
    True when it was caught mid-write (then checks it died of sig and left
    nothing), False when the run finished before (retry with more data)."""
    d, name = os.path.split(out)
    for f in os.listdir(d):
        if f.startswith(name):
            os.remove(os.path.join(d, f))
    def default_signals():
        # as from a terminal: a test run in the background of a shell
        # inherits SIGINT ignored, which tracetool (rightly) keeps
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)

    p = subprocess.Popen([TT] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp,
                         preexec_fn=default_signals)
    caught = False
    while p.poll() is None:
        if leftovers(d, name):
            p.send_signal(sig)
            caught = True
            break
        time.sleep(0.0005)
    p.communicate(timeout=120)
    if not caught:
        return False
    C.eq(p.returncode, -sig, "%s: died of the signal" % label)
    C.eq(leftovers(d, name), [], "%s: no temporary file left beside the output" % label)
    # the output itself may exist: a signal that lands just after the rename
    # finds it complete (written whole or not at all)
    return True


def test_interrupted(tmp):
    for kind, sig in (("json", signal.SIGINT), ("json.gz", signal.SIGTERM),
                      ("html", signal.SIGHUP)):
        ok = False
        for n in (200000, 800000):
            trace = os.path.join(tmp, "mem%d.json" % n)
            if not os.path.exists(trace):
                memory_trace(trace, n)
            db = os.path.join(tmp, "mem%d.db" % n)
            if not os.path.exists(db):
                subprocess.run([TT, "ingest", "-q", db, trace], check=True)
            out = os.path.join(tmp, "out." + kind)
            if interrupt_while_writing(tmp, ["memtimeline", db, out], out, sig,
                                       "memtimeline -> .%s, %s" % (kind, signal.Signals(sig).name)):
                ok = True
                break
        if not ok:
            C.skip("memtimeline .%s" % kind, "the output was written before a signal could land")
    ranks = os.path.join(tmp, "ranks")
    os.makedirs(ranks, exist_ok=True)
    for r in range(2):
        gpu_rank(os.path.join(ranks, "rank%d.json" % r), r, 100000)
    db = os.path.join(tmp, "ranks.db")
    subprocess.run([TT, "ingest", "-q", db, ranks], check=True)
    out = os.path.join(tmp, "export.json")
    if not interrupt_while_writing(tmp, ["export", db, out], out, signal.SIGINT,
                                   "export, SIGINT"):
        C.skip("export SIGINT", "the output was written before a signal could land")
    return db


def test_nohup(tmp, db):
    """SIGHUP ignored at start stays ignored: the export completes."""
    out = os.path.join(tmp, "nohup.json")

    def ignore_hup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    p = subprocess.Popen([TT, "export", db, out], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=tmp, preexec_fn=ignore_hup)
    sent = 0
    while p.poll() is None:
        try:
            p.send_signal(signal.SIGHUP)
            sent += 1
        except ProcessLookupError:
            break
        time.sleep(0.002)
    err = p.communicate(timeout=120)[1].decode("utf-8", "replace")
    C.eq(p.returncode, 0, "export under nohup, %d SIGHUPs: exits 0 (%s)" % (sent, err.strip()[:200]))
    C.check(os.path.exists(out) and not leftovers(tmp, "nohup.json"),
            "export under nohup: the output written, nothing beside it")


def test_rank_message(tmp):
    ranks = os.path.join(tmp, "ranks")
    p = subprocess.run([TT, "breakdown", "--rank", "99", ranks], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace")
    C.check(p.returncode != 0 and err.startswith("tracetool: %s: " % ranks)
            and "tracetool-" not in err, "breakdown --rank 99 DIR names DIR", err.strip())


def main():
    if not os.path.exists(TT):
        C.skip("all", "no tracetool binary at %s" % TT)
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        db = None
        try:
            db = test_interrupted(tmp)
        except Exception as e:  # noqa: BLE001
            C.check(False, "interrupted outputs", repr(e))
        if db:
            C.section("nohup", test_nohup, tmp, db)
            C.section("rank message", test_rank_message, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
