#!/usr/bin/env bash
# Run every test: a -Werror build with ctest (Criterion unit tests and the
# Python standard-library CLI/data tests), then the same suite built with
# AddressSanitizer + UndefinedBehaviorSanitizer, then the fuzz-corpus replay.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
run_suite() { # build-dir extra-cmake-args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DTT_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}
echo "== release build, all tests"
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build, all tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DTT_SANITIZE=address,undefined
echo "== structure-aware mutation fuzzer: mutants of real traces through every command (ASan+UBSan build)"
# tests/fuzz/mutate_traces.py (tests/fuzz/README.md): a fixed seed, so the same
# mutants every run; --time-limit stops starting mutants on a slow machine.
# Replay a finding with: python3 tests/fuzz/mutate_traces.py --tracetool build-asan/tracetool --replay SEED
fuzz_rc=0
python3 tests/fuzz/mutate_traces.py --tracetool build-asan/tracetool \
  --seed 20261127 --count 80 --time-limit 210 --jobs "$jobs" || fuzz_rc=$?
if [ "$fuzz_rc" -eq 77 ]; then echo "   skipped: build-asan/tracetool missing"
elif [ "$fuzz_rc" -ne 0 ]; then exit "$fuzz_rc"; fi
echo "== ThreadSanitizer: the capture library (threads racing the schedule, fork, exit)"
mkdir -p build-tsan
cuda=${TT_CUDA_ROOT:-/usr/local/cuda}
cupti=()
if [ -f "$cuda/include/cupti.h" ]; then cupti=(-DTT_HAVE_CUPTI -isystem "$cuda/include"); fi
gcc -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wall -Wextra -Werror \
  -I. -Iinclude -Icapture/include "${cupti[@]}" capture/src/*.c common/i64map.c common/buf.c tests/capture/capture_scenarios.c \
  -lz -lpthread -o build-tsan/capture_scenarios
gcc -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wall -Wextra -Werror \
  -I. -Iinclude -Icapture/include "${cupti[@]}" capture/src/*.c common/i64map.c common/buf.c capture/examples/capture_demo.c \
  -lz -lpthread -o build-tsan/capture-demo
TT_CUDA_ROOT=$cuda TSAN_OPTIONS=halt_on_error=1 CAPTURE_SCENARIOS=$PWD/build-tsan/capture_scenarios \
  CAPTURE_DEMO=$PWD/build-tsan/capture-demo \
  CAPTURE_MALLOC=$PWD/build/capture/libtracetool_capture_malloc.so ALLOC_PROG=$PWD/build/tests/alloc_prog \
  TRACETOOL=$PWD/build/tracetool TT_SHARED=$PWD/../shared python3 tests/cli/test_capture.py
