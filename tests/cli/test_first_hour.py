#!/usr/bin/env python3
"""What a new user tripped on in the first hour (issue 23), each checked
against what the trace itself says (Python standard library only):

- long options are taken spelt whole: `averages --top 5` is --row-limit 5
  (it was a prefix of --top-level-only), a prefix of an option is an unknown
  option with the option it may mean suggested;
- `averages --steps 2` on a trace whose steps are ProfilerStep#1009..#1014
  says which steps there are;
- `memtimeline f out.pdf` is a usage error naming the known suffixes, and
  writes nothing;
- scripts/quickstart.sh says each stage and the build's progress (run here
  in a copy of the scripts with stand-ins for cmake and the tool).
"""

import csv
import gzip
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import trace_expect as te  # noqa: E402

C = te.Checker("first_hour")
ROOT = os.path.join(HERE, "..", "..")
CONTROL = os.path.join(te.shared_dir(), "testdata", "hta", "trace_diff", "control", "control.json.gz")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def check_options():
    p = te.run_tool(["averages", "--top", "5", "--format", "csv", CONTROL])
    rows = list(csv.reader(io.StringIO(p.stdout.decode())))
    C.eq((p.returncode, len(rows) - 1), (0, 5), "averages --top 5: five rows (--row-limit 5)")
    full = list(csv.reader(io.StringIO(te.run_tool(["averages", "--format", "csv", CONTROL])
                                       .stdout.decode())))
    C.check(len(full) - 1 > 5, "without --top there are more rows", len(full))
    for args, want in ((["averages", "--top-l", CONTROL], "--top-level-only"),
                       (["averages", "--group", CONTROL], None),
                       (["breakdown", "--comm", CONTROL], None),
                       (["kernels", "--row", CONTROL], "--row-limit")):
        p = te.run_tool(args)
        err = p.stderr.decode()
        C.check(p.returncode == 2 and "unknown option '%s'" % args[1] in err,
                "%s %s: a prefix is an unknown option (exit 2)" % (args[0], args[1]), (p.returncode, err))
        if want:
            C.check(want in err, "%s %s: suggests %s" % (args[0], args[1], want), err)
    p = te.run_tool(["averages", "--top-level-only", "--format", "csv", CONTROL])
    C.eq(p.returncode, 0, "the whole name still works")


def check_steps():
    doc = load(CONTROL)
    nums = sorted({int(e["name"][len("ProfilerStep#"):]) for e in doc["traceEvents"]
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")})
    p = te.run_tool(["averages", "--steps", "2", CONTROL])
    err = p.stderr.decode()
    want = "%d steps, ProfilerStep#%d..#%d" % (len(nums), nums[0], nums[-1])
    C.check(p.returncode == 0 and "--steps 2 selects no event" in err and want in err,
            "averages --steps 2: lists the steps there are (%s)" % want, err)
    p = te.run_tool(["averages", "--steps", "%d" % nums[1], "--format", "csv", CONTROL])
    C.check(p.returncode == 0 and p.stderr == b"" and len(p.stdout.splitlines()) > 1,
            "a step that exists: rows, no warning", p.stderr)


def check_memtimeline_suffix(tmp):
    out = os.path.join(tmp, "out.pdf")
    p = te.run_tool(["memtimeline", CONTROL, out])
    err = p.stderr.decode()
    C.check(p.returncode == 2 and all(s in err for s in (".json", ".json.gz", ".raw.json.gz",
                                                         ".html", ".png")),
            "memtimeline out.pdf: usage error listing the known suffixes", (p.returncode, err))
    C.check(not os.path.exists(out), "memtimeline out.pdf: nothing written")


FAKE_CMAKE = r"""#!/bin/sh
case "$*" in
  *--build*) i=0; while [ $i -le 100 ]; do echo "[ $i%] Building C object x$i.o"; i=$((i + 3)); done
             echo "[100%] Built target tracetool" ;;
esac
exit 0
"""
FAKE_TOOL = "#!/bin/sh\necho \"tool $1\"\n"


def check_quickstart(tmp):
    root = os.path.join(tmp, "qs")
    os.makedirs(os.path.join(root, "scripts"))
    os.makedirs(os.path.join(root, "build"))
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy(os.path.join(ROOT, "scripts", "quickstart.sh"), os.path.join(root, "scripts"))
    for name, body in ((os.path.join("scripts", "install-deps.sh"), "#!/bin/sh\nexit 0\n"),
                       (os.path.join("bin", "cmake"), FAKE_CMAKE),
                       (os.path.join("build", "tracetool"), FAKE_TOOL),
                       (os.path.join("bin", "python"), FAKE_TOOL)):
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=os.path.join(root, "bin") + os.pathsep + os.environ["PATH"],
               PYTHON=os.path.join(root, "bin", "python"))
    p = subprocess.run(["bash", os.path.join(root, "scripts", "quickstart.sh"), "t.json"],
                       capture_output=True, env=env, timeout=60)
    out = p.stdout.decode()
    stages = re.findall(r"^== (\d)/5 ", out, re.M)
    C.check((p.returncode, stages) == (0, ["1", "2", "3", "4", "5"]), "quickstart: a line per stage",
            (p.returncode, out, p.stderr.decode()[-300:]))
    pct = [int(x) for x in re.findall(r"^   built (\d+)%$", out, re.M)]
    C.check(len(pct) >= 9 and pct == sorted(pct) and pct[-1] == 100,
            "quickstart: the build's progress, every 10%", pct)
    C.check(os.path.exists(os.path.join(root, "build", "quickstart-build.log")),
            "quickstart: the build log is kept")


def main():
    if not os.path.exists(CONTROL):
        C.skip(CONTROL, "missing")
        return C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        C.section("whole option names", check_options)
        C.section("--steps lists the steps", check_steps)
        C.section("memtimeline suffix", check_memtimeline_suffix, tmp)
        C.section("quickstart progress", check_quickstart, tmp)
    return C.finish()


if __name__ == "__main__":
    sys.exit(main())
