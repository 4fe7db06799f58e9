#!/usr/bin/env bash
# Run every test: a -Werror build with ctest (Criterion unit tests and the
# Python standard-library CLI/data tests), then the same suite built with
# AddressSanitizer + UndefinedBehaviorSanitizer, then the fuzz-corpus replay,
# then the library's threads, the capture library and the JSON parser under
# ThreadSanitizer.
#
# Every phase runs, whatever became of the ones before it (a failed build
# skips only the tests of that build); the end is a table of the phases
# (passed / failed / skipped, with durations), and the exit status is 1 when
# any phase failed, else 0. Build output goes to BUILD_DIR/tt-build.log (its
# last lines are printed when the build fails).
#
#   scripts/test.sh [--all] [PHASE...]
#       PHASE: release asan fuzz tsan (default: all; the others are listed as
#       skipped).
#       Without --all (the quick run, under 10 minutes on a 2-core machine
#       alone): the tests labelled `slow` (the heavy checks over every shared
#       trace and the scaling tests, tests/CMakeLists.txt) are left out of both
#       ctest phases; each other test runs once (the CLI tests labelled
#       asan_covered in the asan+ubsan phase only, when it is selected); the
#       fuzz phase runs 20 mutants instead of 80 and the TSan phase runs the
#       JSON parser's check only (its builds and the other runs are CI's).
#       The summary lists what was left out as skipped.
#       --all (CI, .ci/run) runs every test in every phase.
#
# Two copies in one checkout would share its build directories: the second
# waits for the first (a lock on .test.lock). Copies in different clones run
# side by side.
# shellcheck disable=SC2317  # the phases' functions run through step()
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
trap 'echo; echo "interrupted"; exit 130' INT TERM

all_tests=0
args=()
for a in "$@"; do
  case $a in
    --all) all_tests=1;;
    -h|--help) sed -n '2,/^# shellcheck/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) args+=("$a");;
  esac
done
set -- "${args[@]+"${args[@]}"}"

exec 9>.test.lock
if ! flock -n 9; then
  echo "another scripts/test.sh is running in this checkout; waiting for it to end"
  flock 9
fi

all_phases=(release asan fuzz tsan)
selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then selected=("${all_phases[@]}"); fi
for p in "${selected[@]}"; do
  case " ${all_phases[*]} " in *" $p "*) ;; *) echo "unknown phase '$p' (${all_phases[*]})" >&2; exit 2;; esac
done
wanted() { case " ${selected[*]} " in *" $1 "*) return 0;; esac; return 1; }

jobs=$(nproc)
names=() results=() times=() notes=()
failed=0
# step NAME CMD...: run CMD, record passed (0), skipped (77, the note from
# $TT_STEP_NOTE if set) or failed (anything else) and how long it took
step() {
  local name=$1; shift
  local t0=$SECONDS rc
  echo
  echo "== $name"
  TT_STEP_NOTE=""
  "$@"; rc=$?
  names+=("$name"); times+=($((SECONDS - t0)))
  if [ "$rc" -eq 0 ]; then results+=(passed)
  elif [ "$rc" -eq 77 ]; then results+=(skipped)
  else results+=(failed); failed=1; TT_STEP_NOTE=${TT_STEP_NOTE:-exit status $rc}
  fi
  notes+=("$TT_STEP_NOTE")
  echo "-- $name: ${results[-1]}${notes[-1]:+ (${notes[-1]})}"
  return "$rc"
}
# skip NAME WHY: record a step that did not run
skip() {
  names+=("$1"); results+=(skipped); times+=(0); notes+=("$2")
  echo; echo "== $1"; echo "-- $1: skipped ($2)"
}

build() { # build-dir extra-cmake-args...
  local dir=$1; shift
  mkdir -p "$dir"
  local log=$dir/tt-build.log
  if cmake -S . -B "$dir" -DTT_WERROR=ON "$@" >"$log" 2>&1 &&
     cmake --build "$dir" -j"$jobs" >>"$log" 2>&1; then
    echo "built $dir (log: $log)"
    return 0
  fi
  echo "build of $dir failed; the end of $log:"
  tail -n 40 "$log" | sed 's/^/   | /'
  TT_STEP_NOTE="see $log"
  return 1
}
# the quick run leaves the tests labelled slow out (listed in the summary)
ctest_select=()
if [ "$all_tests" -eq 0 ]; then ctest_select=(-LE slow); fi
run_ctest() { # build-dir
  (cd "$1" && ctest --output-on-failure -j"$jobs" "${ctest_select[@]+"${ctest_select[@]}"}")
}
# slow_left_out BUILD-DIR: a summary line for the slow tests the quick run left out
slow_left_out() {
  local n
  [ "$all_tests" -eq 1 ] && return 0
  n=$(cd "$1" && ctest -N -L slow 2>/dev/null | sed -n 's/^Total Tests: //p')
  skip "$2: ${n:-the} tests labelled slow" "quick run; scripts/test.sh --all runs them (CI does)"
}

# 1. dependencies (a failure here is reported; the builds say what is missing)
step "dependencies" scripts/install-deps.sh

# 2. release build, all tests (the quick run: each test once, so the CLI
# tests whose every check also runs under ASan+UBSan run there only; see
# the asan_covered label in tests/CMakeLists.txt)
release_ctest() {
  if [ "$all_tests" -eq 1 ] || ! wanted asan; then run_ctest build; return; fi
  (cd build && ctest --output-on-failure -j"$jobs" -LE 'slow|asan_covered')
}
asan_only_left_out() {
  local n
  { [ "$all_tests" -eq 1 ] || ! wanted asan; } && return 0
  n=$(cd build && ctest -N -LE slow -L asan_covered 2>/dev/null | sed -n 's/^Total Tests: //p')
  skip "release: ${n:-the} CLI tests labelled asan_covered" \
    "quick run: they run in the asan+ubsan step only; scripts/test.sh --all runs them here too"
}
if wanted release; then
  if step "release: build" build build -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
    step "release: ctest" release_ctest
    slow_left_out build release
    asan_only_left_out
  else
    skip "release: ctest" "its build failed"
  fi
else
  skip "release: build" "not selected"; skip "release: ctest" "not selected"
fi

# 3. AddressSanitizer + UndefinedBehaviorSanitizer build, all tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
asan_built=1
if wanted asan; then
  # -O1 (with asserts: a Debug build): 10% quicker than -O0 under ASan, and
  # gcc's -Wformat-truncation and friends, which need optimisation, see the code
  if step "asan+ubsan: build" build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
       -DTT_SANITIZE=address,undefined; then
    step "asan+ubsan: ctest" run_ctest build-asan
    slow_left_out build-asan asan+ubsan
  else
    asan_built=0
    skip "asan+ubsan: ctest" "its build failed"
  fi
else
  skip "asan+ubsan: build" "not selected"; skip "asan+ubsan: ctest" "not selected"
fi

# 4. structure-aware mutation fuzzer: mutants of real traces through every
# command (ASan+UBSan build). tests/fuzz/mutate_traces.py (tests/fuzz/README.md):
# a fixed seed, so the same mutants every run; --time-limit stops starting
# mutants on a slow machine. Replay a finding with:
#   python3 tests/fuzz/mutate_traces.py --tracetool build-asan/tracetool --replay SEED
fuzz() {
  if [ "$asan_built" -eq 0 ]; then
    TT_STEP_NOTE="the asan+ubsan build failed"; return 77
  fi
  if [ ! -x build-asan/tracetool ]; then
    TT_STEP_NOTE="build-asan/tracetool missing"; return 77
  fi
  local count=20
  if [ "$all_tests" -eq 1 ]; then count=80; fi
  python3 tests/fuzz/mutate_traces.py --tracetool build-asan/tracetool \
    --seed 20261127 --count "$count" --time-limit 210 --jobs "$jobs"
}
if wanted fuzz; then step "fuzz: mutants through every command" fuzz
else skip "fuzz: mutants through every command" "not selected"; fi

# 5. ThreadSanitizer: the capture library (threads racing the schedule, fork,
# exit). The malloc interposer, alloc_prog and tracetool come from the release
# build (test_capture.py reports what it cannot run without them as skipped).
cuda=${TT_CUDA_ROOT:-/usr/local/cuda}
cupti=()
if [ -f "$cuda/include/cupti.h" ]; then cupti=(-DTT_HAVE_CUPTI -isystem "$cuda/include"); fi
tsan_build() {
  mkdir -p build-tsan
  local cc=(gcc -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wall -Wextra -Werror
            -DTT_CAPTURE_BUILD -I. -Iinclude -Icapture/include "${cupti[@]}" capture/src/*.c
            common/i64map.c common/buf.c report/out.c report/json.c)
  "${cc[@]}" tests/capture/capture_scenarios.c -lz -lpthread -o build-tsan/capture_scenarios &&
    "${cc[@]}" capture/examples/capture_demo.c -lz -lpthread -o build-tsan/capture-demo
}
tsan_test() {
  TT_CUDA_ROOT=$cuda TSAN_OPTIONS=halt_on_error=1 CAPTURE_SCENARIOS=$PWD/build-tsan/capture_scenarios \
    CAPTURE_DEMO=$PWD/build-tsan/capture-demo \
    CAPTURE_MALLOC=$PWD/build/capture/libtracetool_capture_malloc.so ALLOC_PROG=$PWD/build/tests/alloc_prog \
    TRACETOOL=$PWD/build/tracetool TT_SHARED=$PWD/../shared python3 tests/cli/test_capture.py
}
# the JSON parser opened on 4 threads at once from a cold start (issue 24:
# nothing it shares may be built lazily)
tsan_json() {
  mkdir -p build-tsan
  gcc -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wall -Wextra -Werror \
    -I. -Iinclude formats/json.c formats/source.c common/error.c common/buf.c common/arena.c \
    common/hash.c common/queue.c tests/tsan/json_threads.c -lz -lpthread -lm -o build-tsan/json_threads &&
    TSAN_OPTIONS=halt_on_error=1 build-tsan/json_threads
}
# the library's own threads (issue 24): the gzip inflater, the reader thread,
# the ingest worker handing jobs to the SQLite writer (all through
# common/queue.h), the averages' spill thread and export's compressor. The
# library and tracetool built with -fsanitize=thread into build-tsan-lib.
# Criterion cannot run under ThreadSanitizer (its workers map an arena at
# fixed addresses: Snaipe/Criterion#274), so tests/tsan/handoff_threads.c
# drives the hand-offs of the queue, reader, ingest and averages (whole,
# cancelled, truncated), and tracetool runs the commands that start threads
# on a gzip trace, then cli/test_memtimeline (~40 s here). The other CLI
# tests take too long under TSan (test_ingest_counts ~3 min, test_truncation
# ~10 min on the 2-core machine).
tsan_trace=testdata/kineto/resnet50_2021-06_trace.json.gz
tsan_lib_build() {
  local dir=build-tsan-lib log=build-tsan-lib/tt-build.log libs
  mkdir -p "$dir"
  libs=("$dir"/libtt_compare.a "$dir"/libtt_export.a "$dir"/libtt_analyze.a "$dir"/libtt_report.a
        "$dir"/libtt_store.a "$dir"/libtt_render.a "$dir"/libtt_formats.a "$dir"/libtt_common.a)
  # shellcheck disable=SC2046  # pkg-config prints several words
  if cmake -S . -B "$dir" -DTT_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_SANITIZE=thread \
       >"$log" 2>&1 && cmake --build "$dir" -j"$jobs" --target tracetool >>"$log" 2>&1 &&
     gcc -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wall -Wextra -Werror -I. -Iinclude \
       tests/tsan/handoff_threads.c "${libs[@]}" $(pkg-config --libs sqlite3 cairo) \
       $(pkg-config --libs libisal 2>/dev/null) -lz -lm -lpthread -o "$dir/handoff_threads" >>"$log" 2>&1
  then
    echo "built $dir (log: $log)"
    return 0
  fi
  echo "build of $dir failed; the end of $log:"
  tail -n 40 "$log" | sed 's/^/   | /'
  TT_STEP_NOTE="see $log"
  return 1
}
tsan_handoffs() {
  TSAN_OPTIONS=halt_on_error=1 build-tsan-lib/handoff_threads "$tsan_trace"
}
tsan_commands() {
  local d rc
  d=$(mktemp -d) || return 1
  (
    set -e
    export TSAN_OPTIONS=halt_on_error=1
    t=build-tsan-lib/tracetool
    "$t" export "$tsan_trace" "$d/e.json.gz"
    "$t" memtimeline "$tsan_trace" "$d/m.json"
    "$t" kernels "$tsan_trace" >/dev/null
    TT_AVG_RUN_RECS=4096 "$t" averages "$tsan_trace" >/dev/null  # spill thread
    "$t" ingest -q "$d/t.db" "$tsan_trace"
    "$t" ingest -q --jobs 3 "$d/j.db" testdata/kineto/*.gz  # files read ahead (issue 26)
    "$t" averages "$d/t.db" >/dev/null
  ); rc=$?
  rm -rf "$d"
  return "$rc"
}
tsan_memtimeline() {
  (cd build-tsan-lib && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R 'cli/test_memtimeline$')
}
if wanted tsan && [ "$all_tests" -eq 0 ]; then
  # the quick run: the TSan builds (the library, the capture programs) and
  # their runs are the heavy part of this phase (2 minutes here): CI runs them
  for s in "build build-tsan-lib" "the library's thread hand-offs" "commands on a gzip trace" \
           "cli/test_memtimeline" "build the capture programs" "test_capture.py"; do
    skip "tsan: $s" "quick run; scripts/test.sh --all runs it (CI does)"
  done
  step "tsan: the JSON parser on 4 threads" tsan_json
elif wanted tsan; then
  if step "tsan: build build-tsan-lib" tsan_lib_build; then
    step "tsan: the library's thread hand-offs" tsan_handoffs
    step "tsan: commands on a gzip trace" tsan_commands
    step "tsan: cli/test_memtimeline" tsan_memtimeline
  else
    for s in "the library's thread hand-offs" "commands on a gzip trace" \
             "cli/test_memtimeline"; do skip "tsan: $s" "its build failed"; done
  fi
  step "tsan: the JSON parser on 4 threads" tsan_json
  if step "tsan: build the capture programs" tsan_build; then
    step "tsan: test_capture.py" tsan_test
  else
    skip "tsan: test_capture.py" "its build failed"
  fi
else
  for s in "build build-tsan-lib" "the library's thread hand-offs" \
           "commands on a gzip trace" "cli/test_memtimeline"; do
    skip "tsan: $s" "not selected"
  done
  skip "tsan: the JSON parser on 4 threads" "not selected"
  skip "tsan: build the capture programs" "not selected"; skip "tsan: test_capture.py" "not selected"
fi

# the summary
fmt_time() { printf "%dm%02ds" $(($1 / 60)) $(($1 % 60)); }
echo
echo "== summary"
printf "%-38s %-8s %8s  %s\n" phase result time note
total=0
for i in "${!names[@]}"; do
  printf "%-38s %-8s %8s  %s\n" "${names[$i]}" "${results[$i]}" "$(fmt_time "${times[$i]}")" "${notes[$i]}"
  total=$((total + times[i]))
done
printf "%-38s %-8s %8s\n" "all" "$([ "$failed" -eq 0 ] && echo passed || echo FAILED)" "$(fmt_time "$total")"
exit "$failed"
