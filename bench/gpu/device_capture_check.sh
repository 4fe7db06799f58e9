#!/usr/bin/env bash
# NEEDS A GPU. The GPU capture path on real hardware, without the rest of
# tracetool (the device machine has nvcc and python3 but not necessarily
# sqlite3/cairo headers): builds libtracetool_inject.so from capture/ with
# gcc alone, tests/capture/cuda_prog.cu with nvcc, runs the program with the
# library as CUDA_INJECTION64_PATH and LD_PRELOAD (as `tracetool record`
# sets them up), and checks the Kineto trace with bench/gpu/check_trace.py
# (Python standard library): the program's kernels, copies and runtime calls,
# each kernel linked to its launch, ac2g flows, deviceProperties; then the
# cudaProfilerStart/Stop range. Writes what it saw to $OUT (or /tmp).
#
#   bash bench/gpu/device_capture_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
cuda=${TT_CUDA_ROOT:-/usr/local/cuda}
out=${OUT:-$(mktemp -d)}
b=$(mktemp -d)
nvidia-smi -L || { echo "no GPU: skipped"; exit 77; }
"$cuda/bin/nvcc" --version | tail -1
gcc --version | head -1
src="capture/src/core.c capture/src/buffer.c capture/src/schedule.c capture/src/log.c
     capture/src/metrics.c capture/src/out.c capture/src/kineto_out.c capture/src/et_out.c
     capture/src/cupti.c capture/src/cupti_conv.c capture/src/gpu_out.c
     common/i64map.c common/buf.c report/out.c capture/inject/inject.c"
# shellcheck disable=SC2086
gcc -std=c11 -O2 -g -shared -fPIC -DTT_CAPTURE_BUILD -DTT_HAVE_CUPTI -I. -Iinclude \
  -Icapture/include -isystem "$cuda/include" $src -lz -lpthread -ldl \
  -o "$b/libtracetool_inject.so" 2>"$out/gcc.txt" || { cat "$out/gcc.txt"; exit 1; }
"$cuda/bin/nvcc" -o "$b/cuda_prog" tests/capture/cuda_prog.cu || exit 1
lib="$b/libtracetool_inject.so"
cupti=$(ls "$cuda"/extras/CUPTI/lib64/libcupti.so* "$cuda"/lib64/libcupti.so* 2>/dev/null | head -1)
echo "libcupti: ${cupti:-not found}"
export LD_LIBRARY_PATH="$(dirname "${cupti:-$cuda/lib64/x}"):$cuda/lib64:${LD_LIBRARY_PATH:-}"
fail=0
run() { # dir args...
  local d=$1; shift
  mkdir -p "$d"
  TT_CAPTURE_DIR="$d" CUDA_INJECTION64_PATH="$lib" LD_PRELOAD="$lib" "$b/cuda_prog" "$@" \
    >"$d.stdout" 2>"$d.stderr"
  echo "cuda_prog $* exit $?; stderr:"; cat "$d.stderr"
}
run "$b/all"
python3 bench/gpu/check_trace.py "$b/all" --kernels vec_add=3,scale=1 --memcpy 3 \
  | tee "$out/all.txt" || fail=1
TT_CAPTURE_RANGE=cuda-profiler-api run "$b/range" --range
python3 bench/gpu/check_trace.py "$b/range" --kernels vec_add=2 | tee "$out/range.txt" || fail=1
f=$(ls "$b"/all/*.json* 2>/dev/null | head -1)
[ -n "$f" ] && cp "$f" "$out/cuda_prog.pt.trace.json"
echo "device_capture_check: $([ $fail = 0 ] && echo ok || echo MISMATCH)"
exit $fail
