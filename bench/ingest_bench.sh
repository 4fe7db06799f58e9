#!/usr/bin/env bash
# bench/ingest_bench.sh - throughput and peak memory of `tracetool ingest`
# on a large Kineto trace, next to the floor (cat, zcat) and the usual
# baseline (Python's json.load, what HTA / TensorBoard do first).
#
#   bench/ingest_bench.sh [--mb N] [--keep] [--no-python] [--runs R]
#
#   --mb N        size of the generated trace in MB (10^6 bytes, default 1050)
#   --keep        keep the generated trace and databases in bench/out/
#                 (the default removes everything but results.md at the end)
#   --no-python   skip the json.load row (it needs several GB of RAM per GB
#                 of trace)
#   --runs R      time every command R times and report the fastest (default 1)
#
# Environment: TT_SHARED (default ../shared relative to the repository root),
# TRACETOOL (default build/tracetool; built with cmake if missing),
# PYTHON (default python3).
#
# This is a benchmark, not a test: it is not run by ctest or scripts/test.sh.
# See bench/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

MB=1050
KEEP=0
PY_ROW=1
RUNS=1
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [ $# -gt 0 ]; do
    case $1 in
    --mb) [ $# -ge 2 ] || { usage >&2; exit 2; }; MB=$2; shift 2 ;;
    --mb=*) MB=${1#--mb=}; shift ;;
    --keep) KEEP=1; shift ;;
    --no-python) PY_ROW=0; shift ;;
    --runs) [ $# -ge 2 ] || { usage >&2; exit 2; }; RUNS=$2; shift 2 ;;
    --runs=*) RUNS=${1#--runs=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "ingest_bench: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case $MB in
''|*[!0-9]*) echo "ingest_bench: --mb needs a whole number of MB, got '$MB'" >&2; exit 2 ;;
esac
[ "$MB" -gt 0 ] || { echo "ingest_bench: --mb must be > 0" >&2; exit 2; }
case $RUNS in
''|*[!0-9]*|0) echo "ingest_bench: --runs needs a whole number > 0, got '$RUNS'" >&2; exit 2 ;;
esac

SHARED=${TT_SHARED:-$ROOT/../shared}
PYTHON=${PYTHON:-python3}
TRACETOOL=${TRACETOOL:-$ROOT/build/tracetool}
SCALE=$SHARED/tools/scale_trace.py
SRC=$SHARED/testdata/hta/df_index_resolver/df_index_resolver.json.gz
OUT=$ROOT/bench/out
BIG=$OUT/big.json
BIGGZ=$OUT/big.json.gz
STAMP=$OUT/big.json.stamp

for f in "$SCALE" "$SRC"; do
    [ -f "$f" ] || { echo "ingest_bench: missing $f (set TT_SHARED)" >&2; exit 2; }
done
command -v "$PYTHON" >/dev/null || { echo "ingest_bench: $PYTHON not found" >&2; exit 2; }

# GNU time, for wall clock and peak RSS of each command.
if [ ! -x /usr/bin/time ]; then
    echo "ingest_bench: installing GNU time (/usr/bin/time)" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get install -y time >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y time >/dev/null; }
fi

if [ ! -x "$TRACETOOL" ]; then
    echo "ingest_bench: $TRACETOOL missing, building it" >&2
    cmake -S "$ROOT" -B "$ROOT/build" >/dev/null
    cmake --build "$ROOT/build" -j"$(nproc)" --target tracetool >/dev/null
    TRACETOOL=$ROOT/build/tracetool
fi

mkdir -p "$OUT"
filesize() { stat -c %s "$1"; }

# ---- input: big.json (reused when it was made for the same --mb) ----
if [ -f "$BIG" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$MB $(filesize "$BIG")" ]; then
    echo "ingest_bench: reusing $BIG ($(filesize "$BIG") bytes)" >&2
else
    rm -f "$BIG" "$BIGGZ" "$STAMP"
    echo "ingest_bench: generating $BIG (~$MB MB)" >&2
    "$PYTHON" "$SCALE" "$SRC" "$BIG.tmp" --target-mb "$MB"
    mv "$BIG.tmp" "$BIG"
    echo "$MB $(filesize "$BIG")" > "$STAMP"
fi
if [ -f "$BIGGZ" ] && [ "$BIGGZ" -nt "$BIG" ]; then
    echo "ingest_bench: reusing $BIGGZ" >&2
else
    echo "ingest_bench: compressing to $BIGGZ (gzip -1)" >&2
    gzip -1 -c "$BIG" > "$BIGGZ.tmp"
    mv "$BIGGZ.tmp" "$BIGGZ"
fi
BYTES=$(filesize "$BIG")
GZBYTES=$(filesize "$BIGGZ")

# ---- measurements ----
TIMEF=$OUT/time.txt
DB=$OUT/bench.db
ROWS=()   # "label|seconds|peak_kb|counts_events|cpu_seconds"

# time1 CMD...: run once under GNU time; sets T_WALL T_KB T_CPU, returns the exit status
time1() {
    local rc=0 t0 t1
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$TIMEF" "$@" > "$OUT/last.out" 2> "$OUT/last.err" || rc=$?
    t1=$EPOCHREALTIME
    [ $rc -eq 0 ] || return $rc
    # GNU time reports wall clock in centiseconds; when the shell has
    # EPOCHREALTIME (bash >= 5) use that for microsecond resolution.
    if [ -n "$t0" ] && [ -n "$t1" ]; then
        T_WALL=$(awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.3f", b - a }')
    else
        T_WALL=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time[^:]*: *//p' "$TIMEF" |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.3f", s }')
    fi
    T_KB=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): *//p' "$TIMEF")
    T_CPU=$(sed -n 's/^[[:space:]]*\(User\|System\) time (seconds): *//p' "$TIMEF" |
        awk '{ s += $1 } END { printf "%.2f", s }')
}

# run LABEL EVENTS(0/1) SETUP CMD...: time CMD $RUNS times (SETUP before
# each), keep the fastest run; stdout of the last run is in $OUT/last.out
run() {
    local label=$1 ev=$2 setup=$3 i rc best= bkb= bcpu=
    shift 3
    for ((i = 1; i <= RUNS; i++)); do
        echo "ingest_bench: $label (run $i/$RUNS)" >&2
        $setup
        rc=0
        time1 "$@" || rc=$?
        if [ $rc -ne 0 ]; then
            echo "ingest_bench: '$label' failed (exit $rc):" >&2
            tail -n 20 "$OUT/last.err" >&2
            ROWS+=("$label|FAILED|0|0|0")
            return 0
        fi
        if [ -z "$best" ] || awk -v a="$T_WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$T_WALL bkb=$T_KB bcpu=$T_CPU
        fi
    done
    ROWS+=("$label|$best|$bkb|$ev|$bcpu")
}

fresh_db() { rm -f "$DB" "$DB-journal" "$DB-wal" "$DB-shm"; }

# warm the page cache so that every row reads the files from memory
cat "$BIG" "$BIGGZ" > /dev/null

run '`cat big.json > /dev/null`' 0 : sh -c 'cat "$1" > /dev/null' sh "$BIG"
run '`zcat big.json.gz > /dev/null`' 0 : sh -c 'zcat "$1" > /dev/null' sh "$BIGGZ"
if [ $PY_ROW = 1 ]; then
    run '`python3 json.load(big.json)`' 1 : "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$BIG"
fi
run '`tracetool ingest -q` big.json' 1 fresh_db "$TRACETOOL" ingest -q "$DB" "$BIG"
run '`tracetool ingest -q` big.json.gz' 1 fresh_db "$TRACETOOL" ingest -q "$DB" "$BIGGZ"
DBBYTES=$( [ -f "$DB" ] && filesize "$DB" || echo 0)
run '`tracetool info big.json`' 1 : "$TRACETOOL" info "$BIG"
# events: the count `tracetool info` reports
EVENTS=$(sed -n 's/^[[:space:]]*events:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$OUT/last.out" | head -n 1)
if [ -z "$EVENTS" ]; then
    EVENTS=$("$TRACETOOL" info --format json "$BIG" 2>/dev/null |
        "$PYTHON" -c 'import json,sys; print(sum(t["events"] for t in json.load(sys.stdin)["traces"]))' || echo 0)
fi

# the analyses, from the file and from the database ingested above
run '`tracetool averages big.json`' 1 : "$TRACETOOL" averages "$BIG"
run '`tracetool averages` database' 0 : "$TRACETOOL" averages "$DB"
run '`tracetool kernels` database' 0 : "$TRACETOOL" kernels "$DB"
run '`tracetool memtimeline` database -> .html' 0 : "$TRACETOOL" memtimeline "$DB" "$OUT/memtimeline.html"
run '`tracetool kernels big.json`' 0 : "$TRACETOOL" kernels "$BIG"
run '`tracetool memtimeline big.json` -> .html' 0 : "$TRACETOOL" memtimeline "$BIG" "$OUT/memtimeline.html"
run '`tracetool kernels --by op big.json`' 0 : "$TRACETOOL" kernels --by op "$BIG"
run '`tracetool kernels --by op` database' 0 : "$TRACETOOL" kernels --by op "$DB"
run '`tracetool breakdown big.json`' 0 : "$TRACETOOL" breakdown "$BIG"
run '`tracetool breakdown` database' 0 : "$TRACETOOL" breakdown "$DB"
run '`tracetool diff big.json big.json`' 0 : "$TRACETOOL" diff --format json "$BIG" "$BIG"
run '`tracetool diff` database database' 0 : "$TRACETOOL" diff --format json "$DB" "$DB"
run '`tracetool export big.json` -> .json' 0 : "$TRACETOOL" export "$BIG" "$OUT/export.json"
run '`tracetool export` database -> .json' 0 : "$TRACETOOL" export "$DB" "$OUT/export.json"

# ---- report ----
RESULTS=$OUT/results.md
{
    echo "## tracetool ingest benchmark"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -n), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- tracetool: $TRACETOOL, $("$TRACETOOL" --version 2>/dev/null || echo '?')" \
        "(checkout $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no git')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ', modified'): the binary's own commit when TRACETOOL is another build's)," \
        "build type $(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$(dirname "$TRACETOOL")/CMakeCache.txt" 2>/dev/null || echo '?')"
    echo "- input: big.json $BYTES bytes ($((BYTES / 1000000)) MB, --mb $MB), big.json.gz $GZBYTES bytes (gzip -1), $EVENTS events"
    echo "- database after ingest of big.json.gz: $DBBYTES bytes"
    echo "- MB = 10^6 bytes; MB/s = big.json bytes / wall seconds (also for the .gz rows); events/s = events / wall seconds; CPU s = user + system seconds; page cache warm; fastest of $RUNS run(s)"
    echo
    echo "| command | seconds | MB/s | peak RSS MB | events/s | CPU s |"
    echo "|---|---:|---:|---:|---:|---:|"
    for r in "${ROWS[@]}"; do
        IFS='|' read -r label secs kb ev cpu <<< "$r"
        if [ "$secs" = FAILED ]; then
            echo "| $label | failed | | | | |"
            continue
        fi
        awk -v l="$label" -v s="$secs" -v kb="$kb" -v ev="$ev" -v b="$BYTES" -v n="$EVENTS" -v c="$cpu" 'BEGIN {
            t = (s > 0) ? s : 0.001
            eps = ev ? sprintf("%.0f", n / t) : "-"
            printf "| %s | %.3f | %.1f | %.1f | %s | %s |\n", l, s, b / 1e6 / t, kb / 1024, eps, c
        }'
    done
    echo
    py=; ing=
    for r in "${ROWS[@]}"; do
        IFS='|' read -r label secs kb ev cpu <<< "$r"
        case $label in
        *json.load*) py=$secs ;;
        '`tracetool ingest -q` big.json') ing=$secs ;;
        esac
    done
    if [ -n "$py" ] && [ -n "$ing" ] && [ "$py" != FAILED ] && [ "$ing" != FAILED ]; then
        awk -v p="$py" -v i="$ing" 'BEGIN {
            printf "python json.load / tracetool ingest (big.json): %.2fx (%.3f s / %.3f s)\n", p / (i > 0 ? i : 0.001), p, i }'
    fi
} > "$RESULTS"
cat "$RESULTS"

rm -f "$TIMEF" "$OUT/last.out" "$OUT/last.err"
if [ $KEEP = 0 ]; then
    rm -f "$BIG" "$BIGGZ" "$STAMP" "$DB" "$DB-journal" "$DB-wal" "$DB-shm" "$OUT/export.json"
    echo "ingest_bench: removed the generated files (--keep keeps them); results in $RESULTS" >&2
else
    echo "ingest_bench: kept $BIG, $BIGGZ and $DB; results in $RESULTS" >&2
fi
