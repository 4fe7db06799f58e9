#!/usr/bin/env python3
"""`tracetool record [options] -- PROG [ARGS...]` and the injection library
(libtracetool_inject.so) on programs that know nothing of tracetool, built here:
tests/capture/cpu_prog.c (cc) and tests/capture/cuda_prog.cu ($TT_CUDA_ROOT/bin/nvcc).

- the program is unchanged: exit status, stdout and stderr (but for tracetool's
  own lines) are those of a plain run, for the CPU program and for the CUDA one
  (which fails with "no CUDA-capable device" / a driver error on a host without
  a GPU, the same way both times); stdin passes through; an exit code (3) and a
  death by a signal (SIGTERM, SIGKILL) are passed on as they are;
- the trace is written to DIR and `tracetool info` reads it; record lists it and
  summarises it on stderr, --no-summary only lists it; --memory gives the heap's
  [memory] events in one profile (the malloc interposer starts none of its own);
  --delay past the program's end writes nothing (and record says so without
  pointing at capture lines that were never written; after a failure the
  library logs, it points at them), --duration writes at its end;
- PROG not found: 127, not executable: 126; bad options: 2; no injection
  library: 4; TT_CAPTURE_ACTIVITIES=bogus: a log line, the program unharmed.
- `--gpu-only` (ctest gpu/record_kernels, label gpu): on a host where
  `nvidia-smi -L` works, the kernels in the trace are the program's launches
  (3 vec_add, 1 scale; 2 vec_add inside --capture-range cuda-profiler-api);
  without a GPU it is reported skipped (exit 77).

The cases that preload the library are not run in a sanitizer build (the
sanitizer's runtime must come first in LD_PRELOAD), as test_capture.py does.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("record")
INJECT = os.path.abspath(os.environ.get("TT_INJECT") or
                         os.path.join(ROOT, "build", "capture", "libtracetool_inject.so"))
CUDA_ROOT = os.environ.get("TT_CUDA_ROOT") or "/usr/local/cuda"
SANITIZED = os.environ.get("TT_SANITIZED", "")
TIMEOUT = 180


def run(argv, env=None, input_bytes=None):
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    return subprocess.run(argv, input=input_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=TIMEOUT, env=full)


def record(args, prog, env=None, input_bytes=None):
    return run([te.tracetool_path(), "record"] + args + ["--"] + prog, env, input_bytes)


def lines(b):
    return b.decode("utf-8", "replace").splitlines()


def split_stderr(cp):
    """(the program's stderr lines, record's lines): tracetool capture's log
    lines dropped, record's part starts at its first line"""
    ls = [l for l in lines(cp.stderr) if not l.startswith("tracetool capture:")]
    k = next((i for i, l in enumerate(ls) if l.startswith("tracetool record:")), len(ls))
    return ls[:k], ls[k:]


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.pt.trace.json")) +
                  glob.glob(os.path.join(d, "*.pt.trace.json.gz")))


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        import gzip
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def same_as_plain(label, plain, rec):
    """exit status, stdout, and stderr but for tracetool's lines"""
    C.eq(rec.returncode, plain.returncode, label + ": exit status as a plain run")
    C.eq(rec.stdout, plain.stdout, label + ": stdout as a plain run")
    prog_err, rec_err = split_stderr(rec)
    C.eq(prog_err, lines(plain.stderr), label + ": the program's stderr as a plain run")
    odd = [l for l in rec_err if l and not l.startswith(("tracetool record:", "  "))]
    C.eq(odd, [], label + ": after the program, only record's lines (and its tables)")
    return rec_err


def build(tmp):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    cpu = os.path.join(tmp, "cpu_prog")
    cp = subprocess.run([cc, "-O2", "-o", cpu, os.path.join(ROOT, "tests", "capture", "cpu_prog.c")],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    C.eq(cp.returncode, 0, "cpu_prog builds (%s)" % cc)
    nvcc = os.path.join(CUDA_ROOT, "bin", "nvcc")
    cuda = None
    if os.access(nvcc, os.X_OK):
        cuda = os.path.join(tmp, "cuda_prog")
        cp = subprocess.run([nvcc, "-o", cuda, os.path.join(ROOT, "tests", "capture", "cuda_prog.cu")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        if not C.eq(cp.returncode, 0, "cuda_prog builds with nvcc"):
            print(cp.stderr.decode("utf-8", "replace")[-2000:])
            cuda = None
    return cpu, cuda, nvcc


def check_usage(tmp, cpu):
    """record's own errors: no preload involved"""
    d = os.path.join(tmp, "usage")
    cp = run([te.tracetool_path(), "record", "--help"])
    C.check(cp.returncode == 0 and b"usage: tracetool record" in cp.stdout and
            b"--capture-range" in cp.stdout, "--help", cp.stdout[:200])
    for args, what in ((["-o", d], "need a program"), (["--bogus", "--", "true"], "unknown option"),
                       (["--activities", "kernal", "--", "true"], "did you mean 'kernel'"),
                       (["--delay", "-1", "--", "true"], "bad delay"),
                       (["--duration", "x", "--", "true"], "bad duration"),
                       (["--capture-range", "nvtx", "--", "true"], "unknown capture range"),
                       (["--worker", "a/b", "--", "true"], "bad worker")):
        cp = run([te.tracetool_path(), "record"] + args)
        C.check(cp.returncode == 2 and what.encode() in cp.stderr and not cp.stdout,
                "usage error %s: exit 2, %r" % (args, what), (cp.returncode, cp.stderr))
    cp = record(["-o", d], ["no-such-program-tt"])
    C.eq((cp.returncode, lines(cp.stderr)),
         (127, ["tracetool record: no-such-program-tt: command not found"]), "PROG not found: 127")
    cp = record(["-o", d], [os.path.join(tmp, "no", "such")])
    C.eq(cp.returncode, 127, "PROG path missing: 127")
    noexec = os.path.join(tmp, "noexec")
    open(noexec, "w").write("#!/bin/sh\necho hi\n")
    os.chmod(noexec, 0o644)
    cp = record(["-o", d], [noexec])
    C.check(cp.returncode == 126 and b"Permission denied" in cp.stderr, "PROG not executable: 126",
            (cp.returncode, cp.stderr))
    cp = record(["-o", d], ["true"], env={"TT_INJECT": os.path.join(tmp, "missing.so")})
    C.check(cp.returncode == 4 and b"injection library" in cp.stderr, "TT_INJECT missing: exit 4",
            (cp.returncode, cp.stderr))
    cp = record(["-o", d, "--lib", os.path.join(tmp, "missing.so")], ["true"])
    C.check(cp.returncode == 4 and b"--lib" in cp.stderr, "--lib missing: exit 4",
            (cp.returncode, cp.stderr))
    cp = record(["-o", "/proc/version/x"], ["true"])
    C.check(cp.returncode == 4 and b"cannot make the directory" in cp.stderr,
            "DIR cannot be made: exit 4", (cp.returncode, cp.stderr))


def check_cpu(tmp, cpu):
    """a CPU-bound program: unchanged, and its (empty) profile written"""
    d = os.path.join(tmp, "cpu")
    plain = run([cpu, "--iters", "20000000"])
    C.check(plain.returncode == 0 and b"checksum" in plain.stdout, "cpu_prog plain", plain.stdout)
    # its own --iters is not record's: options end at PROG, even without "--"
    rec = run([te.tracetool_path(), "record", "-o", d, "--worker", "cpu", cpu, "--iters", "20000000"])
    rec_err = same_as_plain("cpu_prog", plain, rec)
    files = traces(d)
    C.eq([os.path.basename(f).split(".")[0] for f in files], ["cpu"], "cpu_prog: one trace in DIR")
    C.check(any(files and files[0] in l for l in rec_err), "cpu_prog: record lists the trace", rec_err)
    if files:
        cp = te.run_tool(["info", files[0]])
        C.eq(cp.returncode, 0, "cpu_prog: tracetool info reads the trace")
    # a second run into the same DIR lists only its own trace
    rec = record(["-o", d, "--gzip"], [cpu, "--iters", "1000"])
    _, rec_err = split_stderr(rec)
    C.check(rec.returncode == 0 and len(traces(d)) == 2 and
            any("1 trace written" in l for l in rec_err) and
            sum(1 for l in rec_err if ".pt.trace.json" in l and l.startswith("  ")) == 1,
            "second run: lists only the new trace (gzip)", rec_err)
    C.eq(len(glob.glob(os.path.join(d, "*.pt.trace.json.gz"))), 1, "--gzip: .pt.trace.json.gz")


def check_passthrough(tmp, cpu):
    d = os.path.join(tmp, "pass")
    data = os.urandom(3 << 20)
    plain = run([cpu, "--stdin", "--iters", "1000"], input_bytes=data)
    rec = record(["-o", d], [cpu, "--stdin", "--iters", "1000"], input_bytes=data)
    C.check(b"stdin 3145728 bytes" in plain.stdout, "stdin read plain", plain.stdout)
    same_as_plain("stdin", plain, rec)
    for args, want in ((["--exit", "3"], 3), (["--kill", "15"], -15), (["--kill", "9"], -9)):
        plain = run([cpu, "--iters", "1000"] + args)
        rec = record(["-o", d], [cpu, "--iters", "1000"] + args)
        C.eq(plain.returncode, want, "plain %s" % args)
        same_as_plain("status %s" % args, plain, rec)
        if want < 0:
            C.check(any("no trace written" in l for l in lines(rec.stderr)),
                    "killed by signal %d: record says no trace was written" % -want, rec.stderr)


def check_signals(tmp):
    """SIGTERM sent to record is passed on to the program; Ctrl-C (SIGINT to
    the process group) is the program's to handle: record waits for it (a
    shell that traps the signal, says so and exits 5)"""
    import signal
    import time
    d = os.path.join(tmp, "sig")
    for sig, group in ((signal.SIGTERM, False), (signal.SIGINT, True)):
        # the signal goes once the shell has set its trap (it makes READY),
        # not after a fixed sleep that a loaded machine may spend starting it
        ready = os.path.join(tmp, "ready-" + sig.name)
        script = "trap 'echo got-%s; kill $!; exit 5' %s; : > %s; sleep 30 & wait" % (
            sig.name, sig.name[3:], ready)
        p = subprocess.Popen([te.tracetool_path(), "record", "--no-summary", "-o", d, "--", "sh", "-c",
                              script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=group)
        deadline = time.monotonic() + 120  # a hang guard only
        while not os.path.exists(ready) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if group:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
        try:
            out, _ = p.communicate(timeout=120)  # a hang guard
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        C.eq((p.returncode, out), (5, ("got-%s\n" % sig.name).encode()),
             "%s to %s: the program's to handle, record waits for it" %
             (sig.name, "the process group" if group else "record"))


def check_summary(tmp, cpu):
    """--memory: the heap's events in the one profile; summary vs --no-summary"""
    d = os.path.join(tmp, "mem")
    plain = run([cpu, "--alloc", "1000", "--iters", "1000"])
    rec = record(["-o", d, "--memory", "--worker", "m"], [cpu, "--alloc", "1000", "--iters", "1000"])
    rec_err = same_as_plain("--memory", plain, rec)
    files = traces(d)
    C.eq(len(files), 1, "--memory: exactly one profile (the interposer starts none of its own)")
    if files:
        doc = load(files[0])
        C.eq(doc.get("tracetool_capture", {}).get("ignored_starts"), 0,
             "--memory: no second start was tried (and ignored)")
        mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
        C.check(len([e for e in mem if e["args"]["Bytes"] > 0]) >= 1000 and
                len([e for e in mem if e["args"]["Bytes"] < 0]) >= 1000,
                "--memory: [memory] events of 1000 blocks", len(mem))
    C.check(any("ops by self time" in l for l in rec_err) and
            any("[memory]" in l for l in rec_err), "summary: the top ops on stderr", rec_err)
    d2 = os.path.join(tmp, "nosum")
    rec = record(["-o", d2, "--memory", "--no-summary"], [cpu, "--alloc", "10", "--iters", "1000"])
    _, rec_err = split_stderr(rec)
    C.check(rec.returncode == 0 and len(traces(d2)) == 1 and
            not any("ops by self time" in l or "kernels" in l for l in rec_err) and
            any(".pt.trace.json" in l for l in rec_err), "--no-summary: listed, not summarised",
            rec_err)


def check_summary_kernels(tmp):
    """the summary of a trace with kernels: a program that writes one into DIR
    (cp of a bundled Kineto trace) is summarised like a recorded one"""
    src = os.path.join(os.environ.get("TT_TESTDATA") or os.path.join(ROOT, "testdata"), "kineto",
                       "simple_add_trace.json.gz")
    if not os.path.exists(src):
        C.skip("summary of kernels", "no %s" % src)
        return
    d = os.path.join(tmp, "sumk")
    os.makedirs(d)
    rec = record(["-o", d, "--activities", "none"], ["cp", src, os.path.join(d, "t.pt.trace.json.gz")])
    _, rec_err = split_stderr(rec)
    k = next((i for i, l in enumerate(rec_err) if l.startswith("tracetool record: top 2 of 2 kernels")),
             None)
    C.check(rec.returncode == 0 and k is not None, "summary: the kernels table", rec_err)
    if k is not None:
        rows = [l.split() for l in rec_err[k + 3:k + 5]]
        C.eq(sorted(r[-4] for r in rows), ["2", "2"], "summary: kernels' counts")
    C.check(any(l.startswith("tracetool record: top 10 of 25 ops by self time") for l in rec_err),
            "summary: the ops table", rec_err)


def check_env(tmp, cpu):
    """the injection library under LD_PRELOAD, configured by hand"""
    plain = run([cpu, "--iters", "1000"])
    d = os.path.join(tmp, "env")
    pre = run([cpu, "--iters", "1000"],
              env={"LD_PRELOAD": INJECT, "TT_CAPTURE_DIR": d, "TT_CAPTURE_ACTIVITIES": "bogus"})
    C.eq((pre.returncode, pre.stdout), (plain.returncode, plain.stdout),
         "TT_CAPTURE_ACTIVITIES=bogus: the program unharmed")
    C.check(b"tracetool capture: TT_CAPTURE_ACTIVITIES: unknown activity 'bogus'" in pre.stderr,
            "TT_CAPTURE_ACTIVITIES=bogus: a clear log line", pre.stderr)
    C.eq(len(traces(d)), 1, "TT_CAPTURE_ACTIVITIES=bogus: the trace still written")
    pre = run([cpu, "--iters", "1000"],
              env={"LD_PRELOAD": INJECT, "TT_CAPTURE_DIR": d, "TT_CAPTURE_ACTIVITIES": "none",
                   "TT_CAPTURE_DELAY": "soon", "TT_CAPTURE_QUIET": "1"})
    C.check(pre.returncode == 0 and pre.stderr == plain.stderr,
            "TT_CAPTURE_QUIET=1: no log line (even for a bad TT_CAPTURE_DELAY)", pre.stderr)
    cwd = os.path.join(tmp, "nodir")
    os.makedirs(cwd)
    pre = subprocess.run([cpu, "--iters", "1000"], cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=TIMEOUT,
                         env=dict((k, v) for k, v in list(os.environ.items()) + [("LD_PRELOAD", INJECT)]
                                  if not k.startswith("TT_CAPTURE_")))
    C.check(pre.stdout == plain.stdout and pre.stderr == plain.stderr and not os.listdir(cwd),
            "no TT_CAPTURE_DIR: the library does nothing", (pre.stderr, os.listdir(cwd)))


def check_window(tmp, cpu):
    d = os.path.join(tmp, "delay")
    rec = record(["-o", d, "--delay", "30", "--activities", "none"], [cpu, "--iters", "1000"])
    C.check(rec.returncode == 0 and not traces(d) and
            any("no trace written" in l for l in lines(rec.stderr)),
            "--delay past the program's end: no trace, said", rec.stderr)
    said = [l for l in lines(rec.stderr) if l.startswith("tracetool capture:")]
    C.eq(said, [], "--delay past the program's end: the capture library said nothing")
    C.check(not any("lines above" in l for l in lines(rec.stderr)) and
            any("before the --delay of 30 s" in l for l in lines(rec.stderr)),
            "--delay past the program's end: record says why, pointing at no lines", rec.stderr)
    # a failure the capture library says (out of memory): record points at its lines
    d = os.path.join(tmp, "fault")
    own_tmp = os.path.join(tmp, "fault_tmpdir")
    os.makedirs(own_tmp)
    rec = record(["-o", d, "--activities", "none"], [cpu, "--iters", "1000"],
                 env={"TT_CAPTURE_FAULT": "alloc", "TMPDIR": own_tmp})
    said = [l for l in lines(rec.stderr) if l.startswith("tracetool capture:")]
    C.check(rec.returncode == 0 and not traces(d) and said and
            any("no trace written" in l and "see the 'tracetool capture' lines above" in l
                for l in lines(rec.stderr)),
            "a capture failure: no trace, record points at the lines above", rec.stderr)
    C.eq(os.listdir(own_tmp), [], "record leaves no file of its own in TMPDIR")
    d = os.path.join(tmp, "duration")
    rec = record(["-o", d, "--duration", "0.05", "--activities", "none"], [cpu])
    files = traces(d)
    C.check(rec.returncode == 0 and len(files) == 1, "--duration: the trace written", rec.stderr)
    if files:  # the window's span (Kineto's "Trace" event), not the whole run (~0.5 s)
        span = [e["dur"] for e in load(files[0])["traceEvents"] if e.get("cat") == "Trace"]
        C.check(len(span) == 1 and 45e3 <= span[0] <= 300e3, "--duration 0.05: a 50 ms window",
                span)


def check_cuda(tmp, cuda):
    """the CUDA program: here (no GPU) it fails at its first CUDA call, the
    same way with and without record; the trace is written all the same"""
    d = os.path.join(tmp, "cuda")
    plain = run([cuda])
    C.check(b"cuda_prog: vector add" in plain.stdout, "cuda_prog plain prints", plain.stdout)
    rec = record(["-o", d, "--worker", "cu"], [cuda])
    same_as_plain("cuda_prog", plain, rec)
    files = traces(d)
    C.eq(len(files), 1, "cuda_prog: the trace written")
    if files:
        cp = te.run_tool(["info", "--format", "json", files[0]])
        C.eq(cp.returncode, 0, "cuda_prog: tracetool info reads the trace")
        json.loads(cp.stdout)
    if plain.returncode != 0:
        print("note: cuda_prog failed plainly, as expected without a GPU: %s"
              % plain.stderr.decode("utf-8", "replace").strip())
    d = os.path.join(tmp, "cuda_range")
    plain = run([cuda, "--range"])
    rec = record(["-o", d, "--capture-range", "cuda-profiler-api"], [cuda, "--range"])
    same_as_plain("cuda_prog --range", plain, rec)
    # a range is recorded only where CUDA works (then cuda_prog succeeds)
    C.eq(len(traces(d)), 1 if plain.returncode == 0 else 0,
         "--capture-range cuda-profiler-api: a trace per range that ran")
    if plain.returncode != 0:
        C.check(any("no trace written" in l for l in lines(rec.stderr)),
                "--capture-range without CUDA: record says no trace was written", rec.stderr)


def kernel_counts(path):
    cp = te.run_tool(["kernels", "--only", "kernels", "--format", "csv", path])
    if not C.eq(cp.returncode, 0, "tracetool kernels on %s" % os.path.basename(path)):
        return {}
    rows = lines(cp.stdout)
    head = rows[0].split(",") if rows else []
    if "name" not in head or "count" not in head:
        C.check(False, "kernels csv has name and count", rows[:2])
        return {}
    ni, ci = head.index("name"), head.index("count")
    import csv
    return dict((r[ni], int(r[ci])) for r in csv.reader(rows[1:]) if len(r) > max(ni, ci))


def by_kernel(got):
    """launch counts per kernel of cuda_prog, whatever the naming (demangled or not)"""
    out = {}
    for name, n in got.items():
        key = "vec_add" if "vec_add" in name else "scale" if "scale" in name else name
        out[key] = out.get(key, 0) + n
    return out


def check_gpu(tmp, cuda):
    """a real GPU: the program's launches are the trace's kernels"""
    d = os.path.join(tmp, "gpu")
    plain = run([cuda])
    C.eq((plain.returncode, lines(plain.stdout)[-1:]), (0, ["cuda_prog: ok (0 wrong)"]),
         "gpu: cuda_prog runs")
    rec = record(["-o", d], [cuda])
    same_as_plain("gpu cuda_prog", plain, rec)
    files = traces(d)
    if C.eq(len(files), 1, "gpu: one trace"):
        got = kernel_counts(files[0])
        C.eq(by_kernel(got), {"vec_add": 3, "scale": 1}, "gpu: kernels = the program's launches")
        C.check(any("kernels" in l for l in lines(rec.stderr)), "gpu: the summary has kernels")
    d = os.path.join(tmp, "gpu_range")
    rec = record(["-o", d, "--capture-range", "cuda-profiler-api"], [cuda, "--range"])
    files = traces(d)
    if C.eq((rec.returncode, len(files)), (0, 1), "gpu range: one trace for one range"):
        got = kernel_counts(files[0])
        C.eq(by_kernel(got), {"vec_add": 2}, "gpu range: only the launches inside the range")


def have_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        cp = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return cp.returncode == 0 and b"GPU" in cp.stdout


def main():
    gpu_only = "--gpu-only" in sys.argv[1:]
    preload_ok = not SANITIZED
    with tempfile.TemporaryDirectory(prefix="tt_record_") as tmp:
        if gpu_only:
            if not have_gpu():
                C.skip("gpu", "no GPU here (nvidia-smi -L fails)")
                return C.finish()
            if SANITIZED:
                C.skip("gpu", "preloading is not tested in a sanitizer build")
                return C.finish()
        cpu, cuda, nvcc = build(tmp)
        if gpu_only:
            if cuda:
                C.section("gpu", check_gpu, tmp, cuda)
            else:
                C.skip("gpu", "no nvcc at %s" % nvcc)
            return C.finish()
        C.section("usage", check_usage, tmp, cpu)
        if not preload_ok:
            print("note: the preloading cases are not run in a sanitizer build (%s)" % SANITIZED)
            return C.finish()
        if not os.path.exists(INJECT):
            C.check(False, "the injection library is built", INJECT)
            return C.finish()
        C.section("cpu", check_cpu, tmp, cpu)
        C.section("pass-through", check_passthrough, tmp, cpu)
        C.section("signals", check_signals, tmp)
        C.section("summary", check_summary, tmp, cpu)
        C.section("summary of kernels", check_summary_kernels, tmp)
        C.section("env", check_env, tmp, cpu)
        C.section("window", check_window, tmp, cpu)
        if cuda:
            C.section("cuda", check_cuda, tmp, cuda)
        else:
            C.skip("cuda_prog", "no nvcc at %s" % nvcc)
        print("note: the GPU case runs as ctest gpu/record_kernels (label gpu)")
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
