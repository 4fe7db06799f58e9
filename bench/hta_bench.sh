#!/usr/bin/env bash
# bench/hta_bench.sh - issue 25's analyses (queue, bandwidth, critical-path,
# collectives, kernels --sequences, breakdown --by annotation, the filters)
# on one large trace, each next to `tracetool averages` on the same input in
# the same session: wall time, CPU time (user + sys), peak RSS, and the CPU
# ratio to averages (the issue asks for at most 1.5).
#
#   bench/hta_bench.sh [--trace FILE] [--mb N] [--runs R]
#
#   --trace FILE  the trace to read (default: bench/out/big.json, made with
#                 ../shared/tools/scale_trace.py from df_index_resolver when
#                 missing, as bench/ingest_bench.sh makes it)
#   --mb N        the size to make (default 1050)
#   --runs R      time each command R times, keep the fastest (default 1)
#   --annot-trace FILE  the trace for `breakdown --by annotation`, which
#                 needs gpu_user_annotation events (default: bench/out/annot.json,
#                 nccl_parser_config scaled to --mb); averages is run on it too
#
# Environment: TRACETOOL (default build/tracetool), TT_SHARED (default
# ../shared). Commands the binary does not have are listed as absent.
# A benchmark, not a test: nothing runs it automatically. bench/README.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TRACE=
ATRACE=
MB=1050
RUNS=1
while [ $# -gt 0 ]; do
    case $1 in
    --trace) TRACE=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --annot-trace) ATRACE=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "hta_bench: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
TT=${TRACETOOL:-build/tracetool}
SHARED=${TT_SHARED:-$ROOT/../shared}
[ -x "$TT" ] || { echo "hta_bench: no $TT (build first)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
if [ -z "$TRACE" ]; then
    mkdir -p bench/out
    TRACE=bench/out/big.json
    if [ ! -s "$TRACE" ]; then
        python3 "$SHARED/tools/scale_trace.py" \
            "$SHARED/testdata/hta/df_index_resolver/df_index_resolver.json.gz" \
            "$TRACE" --target-mb "$MB"
    fi
fi
[ -s "$TRACE" ] || { echo "hta_bench: no trace $TRACE" >&2; exit 2; }
if [ -z "$ATRACE" ]; then
    mkdir -p bench/out
    ATRACE=bench/out/annot.json
    if [ ! -s "$ATRACE" ]; then
        python3 "$SHARED/tools/scale_trace.py" \
            "$SHARED/testdata/hta/nccl_parser_config/nccl_data.json.gz" \
            "$ATRACE" --target-mb "$MB"
    fi
fi

# name | command line after "tracetool"
rows=(
  "averages|averages"
  "queue|queue"
  "bandwidth|bandwidth"
  "critical-path|critical-path --rank 1 --step 3"
  "collectives|collectives"
  "kernels --sequences 3|kernels --sequences 3"
  "kernels --by op|kernels --by op"
  "averages --name|averages --name ^aten::"
  "averages --under|averages --under ProfilerStep#.*"
  "averages --time-range|averages --time-range 0:"
)
table() { # TRACE ROW...
    local trace=$1 bytes name args sub best_cpu best_wall best_rss wall user sys rss cpu base=
    shift
    bytes=$(stat -c %s "$trace")
    cat "$trace" > /dev/null
    printf '\n%s: %.1f MB, %s\n\n' "$trace" "$(echo "$bytes / 1000000" | bc -l)" "$("$TT" --version 2>/dev/null | head -1)"
    printf '| command | wall s | CPU s | MB/s | peak RSS MB | CPU / averages |\n|---|---:|---:|---:|---:|---:|\n'
    for r in "$@"; do
        name=${r%%|*}
        args=${r#*|}
        sub=${args%% *}
        # shellcheck disable=SC2086
        if ! "$TT" $sub --help >/dev/null 2>&1; then
            printf '| %s | absent | | | | |\n' "$name"
            continue
        fi
        best_cpu=; best_wall=; best_rss=
        for _ in $(seq "$RUNS"); do
            # shellcheck disable=SC2086
            /usr/bin/time -o "$tf" -f '%e %U %S %M' "$TT" $args "$trace" >/dev/null 2>"$tf.err" ||
                { printf '| %s | failed: %s | | | | |\n' "$name" "$(head -1 "$tf.err")"; continue 2; }
            read -r wall user sys rss <"$tf"
            cpu=$(echo "$user + $sys" | bc -l)
            if [ -z "$best_cpu" ] || [ "$(echo "$cpu < $best_cpu" | bc -l)" = 1 ]; then
                best_cpu=$cpu; best_wall=$wall; best_rss=$rss
            fi
        done
        [ -n "$base" ] || base=$best_cpu
        printf '| %s | %.2f | %.2f | %.0f | %.0f | %.2f |\n' "$name" "$best_wall" "$best_cpu" \
            "$(echo "$bytes / 1000000 / $best_wall" | bc -l)" "$(echo "$best_rss / 1024" | bc -l)" \
            "$(echo "$best_cpu / $base" | bc -l)"
    done
}
tf=$(mktemp)
trap 'rm -f "$tf" "$tf.err"' EXIT
table "$TRACE" "${rows[@]}"
table "$ATRACE" "averages|averages" "breakdown --by annotation|breakdown --by annotation" \
    "breakdown --by annotation --kernels|breakdown --by annotation --kernels"
