#!/usr/bin/env python3
"""collectives stays linear, and its memory does not follow the calls.

Two inputs at N and 4N, `collectives --per-call --format csv` on each (CPU
time, best of 2): the 4N run must cost between 2 and 8 times the N run.
- a real trace: rank 0 of param/dlrm_8rank repeated N and 4N times by
  /work/shared/tools/scale_trace.py (the shared tool; 8 collectives a copy);
- a synthetic 2-rank job of N and 4N allreduces per rank (a
  record_param_comms op, its nccl:all_reduce, the runtime call and the NCCL
  kernel each; 100000 per rank at 4N, written by a child process so that
  this one stays small): the calls pass through three spills
  (common/spill.h) that write to disk past 4 MiB, so the peak RSS of the 4N
  run stays under 96 MB outside sanitizer builds.
Python standard library only. Run it with --n N to print the figures for a
larger synthetic N (no checks).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

N_COPIES = 40
N_CALLS = 25000
DLRM = "worker0_step_12.1694128201545.pt.trace.json.gz"


def write_job(d, n, ranks=2, seed=1):
    """ranks files of n allreduces each; their kernels start at times that
    differ by rank (the events are written once, shifted per rank)"""
    rnd = random.Random(seed)
    ev = []
    t = 1000.0
    for i in range(n):
        elems = 1024 * (1 + i % 64)
        ev.append('{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1,'
                  ' "tid": 1, "ts": %.3f, "dur": 20, "args": {"Collective name":'
                  ' "allreduce", "In msg nelems": %d, "Out msg nelems": %d, "Group size":'
                  ' %d, "dtype": "Float", "Process Group Name": "0"}},\n'
                  '{"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce",'
                  ' "pid": 1, "tid": 1, "ts": %.3f, "dur": 10},\n'
                  '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",'
                  ' "pid": 1, "tid": 1, "ts": %.3f, "dur": 5, "args": {"correlation": %d}},\n'
                  '{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum'
                  '_float(ncclWorkElem)", "pid": 0, "tid": 7, "ts": %%.3f, "dur": %.3f,'
                  ' "args": {"device": 0, "stream": 7, "correlation": %d}},\n'
                  % (t, elems, elems, ranks, t + 2, t + 4, i + 1,
                     10 + rnd.randrange(20000) / 1000.0, i + 1))
        ev.append(t + 30)
        t += 50
    os.mkdir(d)
    for r in range(ranks):
        with open(os.path.join(d, "rank_%d.json" % r), "w") as f:
            f.write('{"distributedInfo": {"rank": %d, "world_size": %d}, "traceEvents": [\n'
                    % (r, ranks))
            for i in range(0, len(ev), 2):
                f.write(ev[i] % (ev[i + 1] + ((i // 2 * 7 + r * 13) % 50) / 10.0))
            f.write('{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}\n')


def scale_dlrm(path, copies):
    src = os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank", "kineto", DLRM)
    tool = os.path.join(te.shared_dir(), "tools", "scale_trace.py")
    subprocess.run([sys.executable, tool, src, path, "--copies", str(copies)], check=True,
                   stderr=subprocess.DEVNULL)


def spawn_job(d, n):
    """write_job in a child: its strings never make this process large (the
    RSS of a forked child starts from it)"""
    subprocess.run([sys.executable, os.path.abspath(__file__), "--write", d, str(n)],
                   check=True)


def measure(args):
    """best of 2: (CPU seconds, peak RSS in MB), or None when it fails"""
    best = None
    for _ in range(2):
        p = subprocess.Popen([te.tracetool_path()] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        p.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        m = (ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0)
        best = m if best is None else (min(best[0], m[0]), min(best[1], m[1]))
    return best


def compare(c, label, small, large, rss=None):
    args = ["collectives", "--per-call", "--format", "csv"]
    m1, m4 = measure(args + [small]), measure(args + [large])
    if not c.check(m1 and m4, "%s: both runs exit 0" % label):
        return
    ratio = m4[0] / max(m1[0], 0.05)
    print("%s: N %.3f s %.1f MB, 4N %.3f s %.1f MB, ratio %.2f"
          % (label, m1[0], m1[1], m4[0], m4[1], ratio))
    # linear: 4N must not cost more than 8x N; a fixed cost per process (page
    # faults, loading) keeps small inputs under 4x, so the floor only says
    # that the work grows with the input at all
    c.check(1.3 <= ratio <= 8, "%s: 1.3 <= t(4N)/t(N) <= 8" % label, "%.2f" % ratio)
    if rss and not os.environ.get("TT_SANITIZED"):  # ASan's quarantine grows with the work
        c.check(m4[1] <= rss, "%s: RSS(4N) <= %d MB" % (label, rss), "%.1f MB" % m4[1])


def main():
    c = te.Checker("test_scaling_collectives")
    tmp = tempfile.mkdtemp(prefix="tt_scale_coll_")
    try:
        if len(sys.argv) == 3 and sys.argv[1] == "--n":
            spawn_job(os.path.join(tmp, "j"), int(sys.argv[2]))
            m = measure(["collectives", "--per-call", "--format", "csv",
                         os.path.join(tmp, "j")])
            print("N=%s: %s" % (sys.argv[2], m and "%.2f s CPU, %.1f MB" % m))
            return 0
        spawn_job(os.path.join(tmp, "j1"), N_CALLS)
        spawn_job(os.path.join(tmp, "j4"), 4 * N_CALLS)
        compare(c, "synthetic job", os.path.join(tmp, "j1"), os.path.join(tmp, "j4"), 96)
        shutil.rmtree(os.path.join(tmp, "j1"))
        shutil.rmtree(os.path.join(tmp, "j4"))
        if not os.path.isdir(os.path.join(te.shared_dir(), "testdata", "param", "dlrm_8rank")):
            c.skip("dlrm_8rank copies", "shared test data missing")
        else:
            scale_dlrm(os.path.join(tmp, "d1.json"), N_COPIES)
            scale_dlrm(os.path.join(tmp, "d4.json"), 4 * N_COPIES)
            compare(c, "dlrm_8rank rank 0 x scale_trace", os.path.join(tmp, "d1.json"),
                    os.path.join(tmp, "d4.json"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--write":
        write_job(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    sys.exit(main())
