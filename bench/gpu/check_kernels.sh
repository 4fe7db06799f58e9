#!/usr/bin/env bash
# NEEDS A GPU. Builds tests/capture/cuda_prog.cu with nvcc, runs it under
# `tracetool record` and checks the trace's kernels against the launches the
# program is known to make (3 vec_add, 1 scale; with --capture-range
# cuda-profiler-api and `cuda_prog --range`, the 2 vec_add inside the range),
# read back with `tracetool kernels --format csv`. Exit 0 when they match,
# 1 when not, 77 without a GPU (nvidia-smi -L fails) or without nvcc.
#
#   bench/gpu/check_kernels.sh     (TRACETOOL=build/tracetool, TT_CUDA_ROOT=/usr/local/cuda)
set -euo pipefail
cd "$(dirname "$0")/../.."
tt=${TRACETOOL:-build/tracetool}
cuda=${TT_CUDA_ROOT:-/usr/local/cuda}
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "check_kernels: needs a GPU (nvidia-smi -L fails here): skipped" >&2
  exit 77
fi
[ -x "$cuda/bin/nvcc" ] || { echo "check_kernels: no $cuda/bin/nvcc: skipped" >&2; exit 77; }
[ -x "$tt" ] || { echo "check_kernels: $tt not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cuda/bin/nvcc" -o "$tmp/cuda_prog" tests/capture/cuda_prog.cu
nvidia-smi -L

# kernels per name of the one trace in $1 (names containing vec_add / scale)
counts() {
  local f
  f=$(ls "$1"/*.pt.trace.json 2>/dev/null | head -1 || true)
  [ -n "$f" ] || { echo "no-trace"; return; }
  "$tt" kernels --only kernels --format csv "$f" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
got = {}
for r in rows:
    k = "vec_add" if "vec_add" in r["name"] else "scale" if "scale" in r["name"] else r["name"]
    got[k] = got.get(k, 0) + int(r["count"])
print(" ".join("%s=%d" % kv for kv in sorted(got.items())))'
}

fail=0
"$tt" record -o "$tmp/all" -- "$tmp/cuda_prog" || { echo "cuda_prog failed under record"; fail=1; }
got=$(counts "$tmp/all")
want="scale=1 vec_add=3"
echo "whole run: $got (want $want)"
[ "$got" = "$want" ] || fail=1

"$tt" record --no-summary --capture-range cuda-profiler-api -o "$tmp/range" -- "$tmp/cuda_prog" --range ||
  { echo "cuda_prog --range failed under record"; fail=1; }
got=$(counts "$tmp/range")
want="vec_add=2"
echo "cudaProfilerStart/Stop range: $got (want $want)"
[ "$got" = "$want" ] || fail=1

[ $fail = 0 ] && echo "check_kernels: ok" || echo "check_kernels: MISMATCH"
exit $fail
