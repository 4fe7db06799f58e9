#!/usr/bin/env bash
# bench/jobs_bench.sh - `tracetool ingest --jobs N` against --jobs 1.
#
# Makes RANKS rank files of about MB MB each with ../shared/tools/scale_trace.py
# (from param/dlrm_8rank/kineto/worker{0..}), then ingests them all into a
# fresh database with --jobs 1 (everything on one thread), --jobs 2 and each
# further N given, RUNS times each, and prints the median wall time, CPU
# time and peak RSS (GNU time), the ratio to --jobs 1, and whether `averages`
# of every database is identical to --jobs 1's. Also the previous default
# (one reader thread and the writer per file, files one after another) when
# OLD is set to a tracetool built before --jobs (e.g. main's build/tracetool).
#
# A benchmark, not a test: nothing runs it automatically; it prints numbers.
#
#   bench/jobs_bench.sh [--ranks 4] [--mb 60] [--runs 3] [--jobs "2 4"] [--keep]
#
# Environment: TRACETOOL (default build/tracetool), TT_SHARED (default
# ../shared), OLD (optional), TT_BENCH_DIR (default /tmp/tt_jobs_bench),
# TASKSET (optional, e.g. "taskset -c 0,1" to pin to two cores).
set -euo pipefail

ranks=4 mb=60 runs=3 jobs="2 4" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--ranks N] [--mb MB] [--runs R] [--jobs \"2 4\"] [--keep]" >&2; exit 2 ;;
  esac
done

TT=${TRACETOOL:-build/tracetool}
SHARED=${TT_SHARED:-../shared}
DIR=${TT_BENCH_DIR:-/tmp/tt_jobs_bench}
TS=${TASKSET:-}
src=$SHARED/testdata/param/dlrm_8rank/kineto
[ -x "$TT" ] || { echo "no $TT: build it first" >&2; exit 1; }
[ -d "$src" ] || { echo "no $src" >&2; exit 1; }
mkdir -p "$DIR"

# the rank files (reused when they are there and of the asked size)
mapfile -t srcs < <(ls "$src"/worker*.json.gz | sort)
inputs=()
for ((r = 0; r < ranks; r++)); do
  f=$DIR/rank$r.json
  s=${srcs[$((r % ${#srcs[@]}))]}
  if [ ! -f "$f" ] || [ "$(cat "$f.mb" 2>/dev/null)" != "$mb" ]; then
    python3 "$SHARED/tools/scale_trace.py" --target-mb "$mb" "$s" "$f" >/dev/null
    # ranks made from the same worker file would have the same content (an
    # ingest refuses a duplicate): a key of its own makes each one distinct
    sed -i "1s/^{/{\"bench_rank\": $r, /" "$f"
    head -c 20 "$f" | grep -q bench_rank || { echo "$f: cannot make it distinct" >&2; exit 1; }
    echo "$mb" > "$f.mb"
  fi
  inputs+=("$f")
done
total=$(du -cm "${inputs[@]}" | tail -1 | cut -f1)

# every configuration RUNS times, interleaved (run 1 of each, then run 2 of
# each, ...) so that a shared machine's load drifts over all of them alike;
# per configuration the median wall with its CPU and peak RSS, and the
# fastest wall (noise only ever adds time)
declare -A times
one_run() { # label cmd...
  local label=$1; shift
  rm -f "$DIR/$label.db" "$DIR/$label.db-journal"
  if ! /usr/bin/time -f "%e %U %S %M" -o "$DIR/time.txt" $TS "$@" -q "$DIR/$label.db" "${inputs[@]}"; then
    echo "$label: the ingest failed" >&2; exit 1
  fi
  times[$label]+="$(cat "$DIR/time.txt")"$'\n'
}
summary() { # label -> "wall user sys rss minwall"
  local sorted
  sorted=$(printf '%s' "${times[$1]}" | sort -n)
  echo "$(echo "$sorted" | sed -n "$(((runs + 1) / 2))p")" "$(echo "$sorted" | head -1 | cut -d' ' -f1)"
}

averages_of() { "$TT" averages "$1" | sed "s|$1|DB|g" | md5sum | cut -d' ' -f1; }

echo "$ranks rank files, $total MB in all, $runs runs each (median); $(nproc) CPUs"
[ -n "$TS" ] && echo "pinned: $TS"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-12s | %8s | %8s | %8s | %9s | %8s | %8s | %-10s |\n' run "wall s" "CPU s" "min wall" \
  "peak MB" "x jobs 1" "min x" "averages"
printf '|%s|\n' "--------------|----------|----------|----------|-----------|----------|----------|------------"
base="" mbase=""
ref=""
row() { # label wall user sys rss minwall
  local cpu ratio mratio same
  cpu=$(echo "$3 + $4" | bc)
  [ -z "$base" ] && base=$2 mbase=$6
  ratio=$(echo "scale=2; $2 / $base" | bc)
  mratio=$(echo "scale=2; $6 / $mbase" | bc)
  same=$(averages_of "$DIR/$1.db")
  [ -z "$ref" ] && ref=$same
  [ "$same" = "$ref" ] && same="identical" || same="DIFFERENT"
  printf '| %-12s | %8s | %8s | %8s | %9s | %8s | %8s | %-10s |\n' "$1" "$2" "$cpu" "$6" \
    "$(($5 / 1024))" "$ratio" "$mratio" "$same"
}
labels=(jobs1)
for j in $jobs; do labels+=("jobs$j"); done
[ -n "${OLD:-}" ] && labels+=(old-default)
for ((i = 0; i < runs; i++)); do
  one_run jobs1 "$TT" ingest --jobs 1
  for j in $jobs; do one_run "jobs$j" "$TT" ingest --jobs "$j"; done
  if [ -n "${OLD:-}" ]; then one_run old-default "$OLD" ingest; fi
done
for l in "${labels[@]}"; do
  # shellcheck disable=SC2046  # summary prints five words
  row "$l" $(summary "$l")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$keep" = 1 ] || rm -f "$DIR"/*.db "$DIR"/rank*.json "$DIR"/rank*.json.mb
