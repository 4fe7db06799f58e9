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
