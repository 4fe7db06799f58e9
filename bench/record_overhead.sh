#!/usr/bin/env bash
# The cost of `tracetool record` on a CPU-bound program without GPU work
# (tests/capture/cpu_prog.c, about 0.5 s): plain, under record (libcupti is
# looked for and loaded; without a GPU it says so and goes on), and under
# record --activities none (CPU only, no CUPTI). Runs alternate (A B C A B C
# ...) so a drifting machine hits all three alike; prints each one's median
# wall time and its ratio to the plain run. A benchmark, not a test.
#
#   bench/record_overhead.sh [--runs N]     (default 15; TRACETOOL=build/tracetool)
#
# With hyperfine installed, it is run too (its own statistics, same commands).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=15
[ "${1:-}" = "--runs" ] && runs=${2:?--runs N}
tt=${TRACETOOL:-build/tracetool}
[ -x "$tt" ] || { echo "record_overhead: $tt not built (cmake --build build)" >&2; exit 1; }
out=bench/out/record
rm -rf "$out"
mkdir -p "$out"
${CC:-cc} -O2 -o "$out/cpu_prog" tests/capture/cpu_prog.c
prog="$out/cpu_prog"
echo "$(date -u +%F) $(nproc) cores, $(uname -m); $runs runs each, alternating"
python3 - "$runs" "$prog" "$tt" "$out" <<'PY'
import statistics, subprocess, sys, time
runs, prog, tt, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = [("plain", [prog]),
        ("record", [tt, "record", "--no-summary", "-o", out + "/all", "--", prog]),
        ("record --activities none",
         [tt, "record", "--no-summary", "--activities", "none", "-o", out + "/none", "--", prog])]
times = dict((k, []) for k, _ in cmds)
for i in range(runs + 1):  # the first round warms up, not counted
    for k, argv in cmds:
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if i:
            times[k].append(time.perf_counter() - t)
base = statistics.median(times["plain"])
for k, _ in cmds:
    v = times[k]
    print("%-26s median %.3f s  (min %.3f, max %.3f)  ratio %.3f"
          % (k, statistics.median(v), min(v), max(v), statistics.median(v) / base))
PY
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 2 --runs "$runs" "$prog" \
    "$tt record --no-summary -o $out/hf -- $prog"
fi
rm -rf "$out/all" "$out/none" "$out/hf"
