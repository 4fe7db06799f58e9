#!/usr/bin/env bash
# `tracetool.averages` in Python against the CLI on a ~1 GB trace (issue 27's
# must-show: at most 1.2x the CLI's time and peak memory).
#
#   bench/python_bench.sh [TRACE] [RUNS]
#
# TRACE: default /tmp/big/big.json, made when missing with
# ../shared/tools/scale_trace.py --target-mb 1000 from the shared
# tb_plugin_2021-06 trace. RUNS (default 3) of each, alternated:
#   tracetool averages --format json TRACE > /dev/null
#   python3 -c "import tracetool; tracetool.averages(TRACE)"
# with the package from python/ and build/libtracetool.so; the medians of
# wall time and peak RSS (the child's ru_maxrss from wait4) and their ratios;
# and the call alone in an interpreter that has imported tracetool and
# pandas already (a notebook): its time, and the peak RSS it adds.
# PYTHON: an interpreter with pandas (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-/tmp/big/big.json}
runs=${2:-3}
py=${PYTHON:-/usr/bin/python3}
tt=${TRACETOOL:-build/tracetool}
lib=${TRACETOOL_LIB:-build/libtracetool.so}
shared=${TT_SHARED:-../shared}
for f in "$tt" "$lib"; do
  [ -e "$f" ] || { echo "python_bench: $f missing: cmake --build build --target tracetool tracetool_shared" >&2; exit 2; }
done
"$py" -c 'import pandas' 2>/dev/null || { echo "python_bench: $py has no pandas (apt-get install python3-pandas)" >&2; exit 2; }
if [ ! -e "$trace" ]; then
  mkdir -p "$(dirname "$trace")"
  echo "making $trace (about 1 GB)"
  python3 "$shared/tools/scale_trace.py" \
    "$shared/testdata/kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz" "$trace" --target-mb 1000
fi
export PYTHONPATH=$PWD/python TRACETOOL_LIB=$PWD/$lib
"$py" - "$trace" "$runs" "$tt" "$py" <<'PY'
import os, statistics, subprocess, sys, time
trace, runs, tt, py = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cmds = {"cli": [tt, "averages", "--format", "json", trace],
        "python": [py, "-c", "import tracetool; tracetool.averages(%r)" % trace]}
# a notebook's view: the interpreter, tracetool and pandas already loaded;
# the call alone is timed, and its memory is the peak RSS it adds (VmHWM
# reset through /proc/self/clear_refs just before the call, less VmRSS then)
NOTEBOOK = r"""
import sys, time, tracetool, pandas
def vm(k):
    for line in open("/proc/self/status"):
        if line.startswith(k):
            return int(line.split()[1]) / 1024.0
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = vm("VmRSS:")
t0 = time.monotonic()
tracetool.averages(sys.argv[1])
dt = time.monotonic() - t0
print("%f %f" % (dt, vm("VmHWM:") - before))
"""
got = {k: [] for k in cmds}
got["in-notebook"] = []
for i in range(runs):
    p = subprocess.run([py, "-c", NOTEBOOK, trace], stdout=subprocess.PIPE, check=True, text=True)
    dt, mb = map(float, p.stdout.split())
    got["in-notebook"].append((dt, mb))
    print("run %d %-6s %7.2f s %8.1f MB (the call alone: time, peak RSS added)"
          % (i + 1, "in-notebook", dt, mb), flush=True)
    for k, c in cmds.items():
        t0 = time.monotonic()
        p = subprocess.Popen(c, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.monotonic() - t0
        if status != 0:
            sys.exit("python_bench: %s failed (status %d)" % (" ".join(c), status))
        got[k].append((dt, ru.ru_maxrss / 1024.0))
        print("run %d %-6s %7.2f s %8.1f MB" % (i + 1, k, dt, ru.ru_maxrss / 1024.0), flush=True)
print("trace: %s (%.0f MB)" % (trace, os.path.getsize(trace) / 1e6))
med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v)) for k, v in got.items()}
for k, (t, m) in med.items():
    print("median %-6s %7.2f s %8.1f MB peak RSS" % (k, t, m))
rt, rm = med["python"][0] / med["cli"][0], med["python"][1] / med["cli"][1]
print("ratio python/cli, whole processes (interpreter and pandas start included):"
      " time %.3f, peak RSS %.3f" % (rt, rm))
rt, rm = med["in-notebook"][0] / med["cli"][0], med["in-notebook"][1] / med["cli"][1]
print("ratio in-notebook call/cli: time %.3f, peak RSS %.3f (must-show: both <= 1.2)" % (rt, rm))
PY
