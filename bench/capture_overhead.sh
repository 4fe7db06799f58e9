#!/usr/bin/env bash
# Build bench/capture_overhead.c against the capture library (optimised, as
# the release build) and run it: ns per scope beside its yardsticks, the
# allocations of recorded scopes after warm-up, and the write-out in MB/s.
# NVTX3 push/pop is measured when the CUDA toolkit's headers are there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
nvtx=()
if [ -f /usr/local/cuda/include/nvtx3/nvToolsExt.h ]; then
  nvtx=(-DHAVE_NVTX3 -I/usr/local/cuda/include -ldl)
fi
gcc -std=c11 -O2 -g -DTT_CAPTURE_BUILD -I. -Iinclude -Icapture/include capture/src/*.c \
  common/i64map.c common/buf.c report/out.c bench/capture_overhead.c "${nvtx[@]}" -lz -lpthread -o "$out/capture_overhead"
echo "$(date -u +%F) $(nproc) cores, $(uname -m)"
"$out/capture_overhead"
