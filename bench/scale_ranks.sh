#!/usr/bin/env bash
# bench/scale_ranks.sh - many ranks: ingest --jobs 1 / --jobs 2, summarize
# (each file, one after another) + merge, and the Dask fan-out
# (python3 -m tracetool.dask --workers 2), for R scaled rank files.
#
#   bench/scale_ranks.sh [--ranks "8 32 128"] [--mb-per-rank M] [--keep] [--no-dask]
#
# The rank files are made from param/dlrm_8rank with
# $TT_SHARED/tools/scale_trace.py (rank r from dlrm's rank r % 8, scaled to
# about M MB of JSON, its distributedInfo rank set to r and world_size to R,
# so every file differs),
# plain JSON under bench/out/ranks-M/ (R x M MB of disk: check `df -h`);
# they are kept for a later run with --keep. Each command is timed with
# GNU time ('%e %M': wall seconds, peak RSS of the largest process - for Dask
# that is one process of the client or a worker, not their sum). The last
# column says whether `averages --format json` of the result equals that of
# the --jobs 1 database. Prints a Markdown table (also bench/out/scale_ranks.md).
#
# Environment: TRACETOOL (default build/tracetool), TT_SHARED (default
# ../shared), PYTHON (for scale_trace.py; default python3), DASK_PYTHON (an
# interpreter with Dask distributed; default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS="8 32 128"
MB=4
KEEP=0
DASK=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) RANKS="$2"; shift 2 ;;
    --mb-per-rank) MB="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-dask) DASK=0; shift ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "scale_ranks.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
TT=$(realpath "${TRACETOOL:-build/tracetool}")
SHARED=${TT_SHARED:-../shared}
PY=${PYTHON:-python3}
DPY=${DASK_PYTHON:-/usr/bin/python3}
SRC="$SHARED/testdata/param/dlrm_8rank/kineto"
[ -x "$TT" ] || { echo "scale_ranks.sh: no tracetool at $TT (build it, or set TRACETOOL)" >&2; exit 2; }
[ -d "$SRC" ] || { echo "scale_ranks.sh: $SRC missing (set TT_SHARED)" >&2; exit 2; }
[ -x /usr/bin/time ] || apt-get install -y -qq time >/dev/null
if [ "$DASK" = 1 ] && ! "$DPY" -c 'import distributed' 2>/dev/null; then
  echo "scale_ranks.sh: $DPY has no Dask distributed (apt-get install python3-distributed); --no-dask leaves it out" >&2
  exit 2
fi
HAVE_JOBS=0
"$TT" help ingest 2>&1 | grep -q -- '--jobs' && HAVE_JOBS=1
OUT=bench/out
mkdir -p "$OUT"
BASE="$OUT/ranks-$MB/base"
mkdir -p "$BASE"
mapfile -t SRCS < <(ls "$SRC"/*.json* | sort)

# base[k]: dlrm rank k scaled to about MB MB (made once per size)
for k in "${!SRCS[@]}"; do
  b="$BASE/base$k.json"
  [ -s "$b" ] || "$PY" "$SHARED/tools/scale_trace.py" "${SRCS[$k]}" "$b" --target-mb "$MB" >/dev/null
done

# the R rank files of one run: rank r = base[r % 8] with its rank set to r
make_ranks() {
  local r=$1 d="$OUT/ranks-$MB/r$1"
  if [ ! -f "$d/.done" ]; then
    rm -rf "$d"; mkdir -p "$d"
    "$PY" - "$BASE" "$d" "$r" "${#SRCS[@]}" <<'EOF'
import re, shutil, sys
base, d, r, nb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(r):
    with open("%s/base%d.json" % (base, i % nb), "rb") as f, \
         open("%s/rank%04d.pt.trace.json" % (d, i), "wb") as o:
        for line in f:  # scale_trace.py writes each top-level key on its own line
            if line.startswith(b'"distributedInfo"'):
                line = re.sub(rb'"rank": *[0-9]+', b'"rank": %d' % i, line)
                line = re.sub(rb'"world_size": *[0-9]+', b'"world_size": %d' % r, line)
            o.write(line)
            if line.startswith(b'"traceEvents"'):
                break
        shutil.copyfileobj(f, o, 1 << 20)
EOF
    touch "$d/.done"
  fi
  echo "$d"
}

# "wall_s peak_rss_mb" of a command (its output to $LOG)
LOG="$OUT/scale_ranks.log"
: > "$LOG"
timed() {
  local t="$OUT/.time.$$"
  if ! /usr/bin/time -o "$t" -f '%e %M' "$@" >>"$LOG" 2>&1; then
    echo "failed: $*" >>"$LOG"; rm -f "$t"; echo "failed -"; return
  fi
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$t"; rm -f "$t"
}

same() { # averages of $1 == averages of the reference database?
  if cmp -s <("$TT" averages --format json "$1" 2>/dev/null) "$OUT/.avg_ref"; then echo yes; else echo NO; fi
}

serial_summaries() { # summarize each file of $1 into $2, then merge into $3
  local f i=0
  for f in "$1"/*.json; do
    "$TT" summarize -o "$2/$(printf %05d $i).summary.json.gz" "$f" || return 1
    i=$((i + 1))
  done
  "$TT" merge -o "$3" "$2"/*.summary.json.gz
}
export -f serial_summaries
export TT

TABLE="$OUT/scale_ranks.md"
{
  echo "| ranks | MB in | method | wall s | peak RSS MB | averages = --jobs 1's |"
  echo "|---:|---:|---|---:|---:|---|"
} > "$TABLE"
cat "$TABLE"
row() { echo "| $1 | $2 | $3 | $4 | $5 | $6 |" | tee -a "$TABLE"; }

for R in $RANKS; do
  D=$(make_ranks "$R")
  MBIN=$(du -sm --apparent-size "$D" | cut -f1)
  W="$OUT/work-$R"
  rm -rf "$W"; mkdir -p "$W/s"
  if [ "$HAVE_JOBS" = 1 ]; then
    read -r s m < <(timed "$TT" ingest --quiet --jobs 1 "$W/j1.db" "$D")
    "$TT" averages --format json "$W/j1.db" > "$OUT/.avg_ref"
    row "$R" "$MBIN" "ingest --jobs 1" "$s" "$m" "-"
    read -r s m < <(timed "$TT" ingest --quiet --jobs 2 "$W/j2.db" "$D")
    row "$R" "$MBIN" "ingest --jobs 2" "$s" "$m" "$(same "$W/j2.db")"
  else
    read -r s m < <(timed "$TT" ingest --quiet "$W/j1.db" "$D")
    "$TT" averages --format json "$W/j1.db" > "$OUT/.avg_ref"
    row "$R" "$MBIN" "ingest (no --jobs in this build)" "$s" "$m" "-"
  fi
  read -r s m < <(timed bash -c 'serial_summaries "$@"' _ "$D" "$W/s" "$W/serial.summary.json.gz")
  row "$R" "$MBIN" "summarize each + merge" "$s" "$m" "$(same "$W/serial.summary.json.gz")"
  if [ "$DASK" = 1 ]; then
    read -r s m < <(timed env PYTHONPATH="$PWD/python" "$DPY" -m tracetool.dask --workers 2 \
                      --tracetool "$TT" -o "$W/dask.summary.json.gz" "$D")
    row "$R" "$MBIN" "tracetool.dask --workers 2" "$s" "$m" "$(same "$W/dask.summary.json.gz")"
  fi
  rm -rf "$W"
done
rm -f "$OUT/.avg_ref"
[ "$KEEP" = 1 ] || rm -rf "$OUT/ranks-$MB"
echo "(table: $TABLE; commands' output: $LOG)"
