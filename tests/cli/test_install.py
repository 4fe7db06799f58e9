#!/usr/bin/env python3
"""`cmake --install` of the build this test runs from (the directory of
$TRACETOOL) into a temporary prefix, and the capture library used from there
as a user would, through pkg-config alone (issue 23).

- the install holds bin/tracetool, include/tracetool/capture.h,
  libtracetool_capture.a and .so, libtracetool_capture_malloc.so,
  libtracetool_inject.so and lib/pkgconfig/tracetool-capture.pc (and
  tracetool-capture-static.pc); the .pc files name no build-tree path (they
  are relocatable: the prefix comes from ${pcfiledir}); Libs.private has -lz
  and -lpthread (`pkg-config --static --libs`);
- a tiny C program that records a scope in each of two steps (schedule
  warmup 1, active 2) is compiled with `pkg-config --cflags --libs
  tracetool-capture` (shared: it needs libtracetool_capture.so) and with
  `... tracetool-capture-static` (it does not, and runs without
  LD_LIBRARY_PATH); each writes one trace that Python's json module parses,
  holding ProfilerStep#1 and #2 with one "install_check" cpu_op inside each;
- the installed `tracetool record` finds the installed injection library (and,
  with --memory, the interposer beside it) with no TT_INJECT and no
  LD_LIBRARY_PATH, and writes a trace;
- the capture examples of README.md, capture/README.md and
  capture/include/tracetool/capture.h, compiled against the install as they
  are written: every scope closes inside the ProfilerStep it began in, and
  each step of the loop holds exactly one (a scope left open across
  tt_cap_step() would cross the step boundary, one scope for two steps).

Skipped (exit 77) only when pkg-config or a C compiler is missing.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("install")
TIMEOUT = 300
SANITIZED = os.environ.get("TT_SANITIZED", "")

PROG = r"""
#include <stdio.h>
#include <tracetool/capture.h>

static volatile long sink;

int main(int argc, char **argv)
{
    tt_cap_config c;
    int i;
    long k;
    if (argc < 2)
        return 2;
    tt_cap_config_default(&c);
    c.out_dir = argv[1];
    c.warmup = 1, c.active = 2, c.repeat = 1;
    if (tt_cap_start(&c) != TT_CAP_OK) {
        fprintf(stderr, "tt_cap_start: %s\n", tt_cap_last_error());
        return 1;
    }
    for (i = 0; i < 3; i++) {
        {
            TT_CAP_SCOPE("install_check");
            for (k = 0; k < 100000; k++)
                sink += k;
        }
        tt_cap_step();
    }
    tt_cap_stop();
    printf("install_check ok\n");
    return 0;
}
"""


def run(argv, env=None, cwd=None):
    full = dict(os.environ)
    for k in ("LD_PRELOAD", "LD_LIBRARY_PATH", "TT_INJECT"):
        full.pop(k, None)
    full.update(env or {})
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                          env=full, cwd=cwd)


def text(b):
    return b.decode("utf-8", "replace")


def build_dir():
    return os.path.dirname(te.tracetool_path())


def cache_value(build, key, default):
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip() or default
    except OSError:
        pass
    return default


def events(path):
    return te.parse_json(te.read_bytes(path)).get("traceEvents", [])


def steps_and_scopes(evs, scope):
    steps = sorted((e for e in evs if str(e.get("name", "")).startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    scopes = [e for e in evs if e.get("name") == scope and e.get("cat") == "cpu_op"]
    return steps, scopes


def inside(ev, step):
    eps = 0.0015  # µs with 3 decimals each
    return ev["ts"] >= step["ts"] - eps and ev["ts"] + ev["dur"] <= step["ts"] + step["dur"] + eps


def per_step(steps, scopes):
    """{step number: scopes that lie inside it}; scopes inside none: key None"""
    out = {}
    for s in scopes:
        hit = [int(st["name"][13:]) for st in steps if inside(s, st)]
        out.setdefault(hit[0] if len(hit) == 1 else None, []).append(s)
    return out


def pc_env(prefix, libdir):
    return {"PKG_CONFIG_PATH": os.path.join(prefix, libdir, "pkgconfig")}


def pkg_config(pkgconf, prefix, libdir, args):
    cp = run([pkgconf] + args, env=pc_env(prefix, libdir))
    C.eq(cp.returncode, 0, "pkg-config %s" % " ".join(args))
    return text(cp.stdout).split()


def compile_prog(cc, pkgconf, prefix, libdir, module, src, out):
    flags = pkg_config(pkgconf, prefix, libdir, ["--cflags", "--libs", module])
    # a sanitizer build's libraries need its runtime (scripts/test.sh's ASan build)
    san = ["-fsanitize=" + SANITIZED] if SANITIZED else []
    cp = run([cc, "-std=c11", "-Wall", "-o", out, src] + flags + san)
    C.check(cp.returncode == 0, "%s: compiles with pkg-config's flags alone" % module,
            (flags, text(cp.stderr)[-1500:]))
    return cp.returncode == 0


def check_files(prefix, dirs):
    bindir, libdir, incdir = dirs
    want = [os.path.join(bindir, "tracetool"), os.path.join(incdir, "tracetool", "capture.h")]
    want += [os.path.join(libdir, n) for n in
             ("libtracetool_capture.a", "libtracetool_capture.so",
              "libtracetool_capture_malloc.so", "libtracetool_inject.so",
              "pkgconfig/tracetool-capture.pc", "pkgconfig/tracetool-capture-static.pc")]
    for rel in want:
        C.check(os.path.isfile(os.path.join(prefix, rel)), "installed: %s" % rel)
    C.check(os.access(os.path.join(prefix, bindir, "tracetool"), os.X_OK), "bin/tracetool runs")
    for pc in ("tracetool-capture.pc", "tracetool-capture-static.pc"):
        path = os.path.join(prefix, libdir, "pkgconfig", pc)
        if os.path.exists(path):
            body = open(path).read()
            C.check(build_dir() not in body and ROOT not in body,
                    "%s names no build-tree path (relocatable)" % pc, body)


def check_pc(pkgconf, prefix, libdir, incdir):
    cflags = pkg_config(pkgconf, prefix, libdir, ["--cflags", "tracetool-capture"])
    inc = [os.path.realpath(f[2:]) for f in cflags if f.startswith("-I")]
    C.check(os.path.realpath(os.path.join(prefix, incdir)) in inc,
            "--cflags: -I the installed include directory", cflags)
    libs = pkg_config(pkgconf, prefix, libdir, ["--libs", "tracetool-capture"])
    C.check("-ltracetool_capture" in libs and "-lz" not in libs, "--libs: -ltracetool_capture",
            libs)
    libs = pkg_config(pkgconf, prefix, libdir, ["--static", "--libs", "tracetool-capture"])
    C.check("-ltracetool_capture" in libs and "-lz" in libs and
            ("-lpthread" in libs or "-pthread" in libs),
            "--static --libs: Libs.private has -lz and -lpthread", libs)


def needed(path):
    objdump = shutil.which("objdump")
    if not objdump:
        return None
    cp = run([objdump, "-p", path])
    return [l.split()[-1] for l in text(cp.stdout).splitlines() if l.strip().startswith("NEEDED")]


def check_program(cc, pkgconf, prefix, libdir, tmp):
    src = os.path.join(tmp, "install_check.c")
    with open(src, "w") as f:
        f.write(PROG)
    libpath = os.path.join(prefix, libdir)
    for module, env in (("tracetool-capture", {"LD_LIBRARY_PATH": libpath}),
                        ("tracetool-capture-static", {})):
        exe = os.path.join(tmp, module)
        if not compile_prog(cc, pkgconf, prefix, libdir, module, src, exe):
            continue
        deps = needed(exe)
        if deps is not None:
            C.eq("libtracetool_capture.so" in deps, module == "tracetool-capture",
                 "%s: links libtracetool_capture.so only when shared" % module)
        out = os.path.join(tmp, "out-" + module)
        cp = run([exe, out], env=env)
        C.check(cp.returncode == 0 and b"install_check ok" in cp.stdout,
                "%s: the program runs" % module, (cp.returncode, cp.stderr))
        files = glob.glob(os.path.join(out, "*.pt.trace.json"))
        if not C.eq(len(files), 1, "%s: one trace written" % module):
            continue
        steps, scopes = steps_and_scopes(events(files[0]), "install_check")
        C.eq([s["name"] for s in steps], ["ProfilerStep#1", "ProfilerStep#2"],
             "%s: the trace's steps (warmup 1, active 2)" % module)
        got = dict((k, len(v)) for k, v in per_step(steps, scopes).items())
        C.eq(got, {1: 1, 2: 1}, "%s: one scope inside each step" % module)


def check_record(prefix, bindir, tmp):
    """the installed tracetool record finds the installed injection library"""
    d = os.path.join(tmp, "rec")
    true = shutil.which("true") or "/bin/true"
    cp = run([os.path.join(prefix, bindir, "tracetool"), "record", "--memory", "--no-summary",
              "--activities", "none", "-o", d, "--", true])
    C.check(cp.returncode == 0 and len(glob.glob(os.path.join(d, "*.pt.trace.json"))) == 1,
            "installed tracetool record finds libtracetool_inject.so (and the interposer)",
            (cp.returncode, text(cp.stderr)[-800:]))


# ---- the documented examples ----

def example_blocks():
    """(where, source lines) of each capture example: the ```c blocks of the
    READMEs that call tt_cap_step, and the example in capture.h's comment"""
    out = []
    for rel in ("README.md", os.path.join("capture", "README.md")):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            body = f.read()
        for i, block in enumerate(re.findall(r"```c\n(.*?)```", body, re.S)):
            if "tt_cap_step" in block:
                out.append(("%s example %d" % (rel, i + 1), block.splitlines()))
    rel = os.path.join("capture", "include", "tracetool", "capture.h")
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        head = f.read().split("*/", 1)[0].splitlines()
    k = next((i for i, l in enumerate(head) if "tt_cap_config c;" in l), None)
    if k is not None:
        lines = []
        for l in head[k:]:
            if not l.startswith(" *     "):
                break
            lines.append(l[7:])
        out.append((rel + " comment", ["#include <tracetool/capture.h>"] + lines))
    return out


def example_program(lines):
    incs = [l for l in lines if l.startswith("#include")]
    body = [l for l in lines if not l.startswith("#include")]
    return "\n".join(incs + [
        "static volatile long sink;",
        "static void run_step(void) { long k; for (k = 0; k < 100000; k++) sink += k; }",
        "static void work(void) { run_step(); }",
        "int main(void)", "{"] + body + ["    (void)work; (void)run_step;", "    return 0;", "}", ""])


def check_examples(cc, pkgconf, prefix, libdir, tmp):
    blocks = example_blocks()
    C.check(any(w.startswith("README.md") for w, _ in blocks), "README.md has the capture example")
    for n, (where, lines) in enumerate(blocks):
        m = re.search(r"i < (\d+)", "\n".join(lines))
        loops = int(m.group(1)) if m else None
        d = os.path.join(tmp, "example%d" % n)
        os.makedirs(d)
        src = os.path.join(d, "example.c")
        with open(src, "w") as f:
            f.write(example_program(lines))
        exe = os.path.join(d, "example")
        if not compile_prog(cc, pkgconf, prefix, libdir, "tracetool-capture-static", src, exe):
            continue
        cp = run([exe], cwd=d)
        files = sorted(glob.glob(os.path.join(d, "traces", "*.pt.trace.json")))
        if not C.check(cp.returncode == 0 and files, "%s: runs and writes a trace" % where,
                       (cp.returncode, text(cp.stderr))):
            continue
        for path in files:
            steps, scopes = steps_and_scopes(events(path), "train_step")
            by = per_step(steps, scopes)
            C.check(steps and None not in by,
                    "%s: every scope closes inside the ProfilerStep it began in" % where,
                    [(s["name"], s["ts"], s["dur"]) for s in steps] +
                    [("train_step", s["ts"], s["dur"]) for s in scopes])
            loop_steps = [int(s["name"][13:]) for s in steps]
            loop_steps = [k for k in loop_steps if loops is None or k < loops]
            C.eq(dict((k, len(by.get(k, []))) for k in loop_steps),
                 dict((k, 1) for k in loop_steps),
                 "%s: one scope per step (%s)" % (where, os.path.basename(path)))


def main():
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    pkgconf = shutil.which("pkg-config") or shutil.which("pkgconf")
    if not cc or not pkgconf:
        C.skip("install", "no %s" % ("C compiler" if not cc else "pkg-config"))
        return C.finish()
    build = build_dir()
    if not C.check(os.path.exists(os.path.join(build, "cmake_install.cmake")),
                   "the build directory has install rules", build):
        return C.finish()
    cmake = cache_value(build, "CMAKE_COMMAND:INTERNAL", None) or shutil.which("cmake") or "cmake"
    dirs = (cache_value(build, "CMAKE_INSTALL_BINDIR:PATH", "bin"),
            cache_value(build, "CMAKE_INSTALL_LIBDIR:PATH", "lib"),
            cache_value(build, "CMAKE_INSTALL_INCLUDEDIR:PATH", "include"))
    with tempfile.TemporaryDirectory(prefix="tt_install_") as tmp:
        prefix = os.path.join(tmp, "prefix")
        cp = run([cmake, "--install", build, "--prefix", prefix])
        if not C.eq(cp.returncode, 0, "cmake --install %s --prefix TMP" % build):
            print(text(cp.stdout)[-1500:], text(cp.stderr)[-1500:])
            return C.finish()
        C.section("files", check_files, prefix, dirs)
        C.section("pkg-config", check_pc, pkgconf, prefix, dirs[1], dirs[2])
        C.section("program", check_program, cc, pkgconf, prefix, dirs[1], tmp)
        if SANITIZED:
            print("note: record is not run in a sanitizer build (%s)" % SANITIZED)
        else:
            C.section("record", check_record, prefix, dirs[0], tmp)
        C.section("examples", check_examples, cc, pkgconf, prefix, dirs[1], tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
