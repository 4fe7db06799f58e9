#!/usr/bin/env bash
# Quick start: install what is missing, build, then ingest a bundled trace and
# summarise it, from the CLI and from Python (import tracetool). Usage: scripts/quickstart.sh [TRACE]
# Says each stage as it starts and the build's progress every 10%; the whole
# build log is kept in build/quickstart-build.log (its end is shown on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 1/5 packages: installing what is missing (Debian)"
scripts/install-deps.sh
echo "== 2/5 configuring (cmake)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTT_WERROR=ON >/dev/null
log=build/quickstart-build.log
echo "== 3/5 building with $(nproc) jobs (2-3 minutes on 2 cores; log: $log)"
if ! cmake --build build -j"$(nproc)" 2>&1 | tee "$log" | awk '
    /^\[ *[0-9]+%\]/ {
      p = $0; sub(/^\[ */, "", p); sub(/%.*/, "", p); p += 0
      if (p >= next_pct) { printf "   built %d%%\n", p; fflush(); next_pct = p - p % 10 + 10 }
    }'; then
  echo "quickstart: the build failed; the end of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
trace=${1:-testdata/kineto/resnet50_2021-06_trace.json.gz}
echo "== 4/5 ingest $trace into quickstart.db, then info"
rm -f quickstart.db
./build/tracetool ingest quickstart.db "$trace"
./build/tracetool info quickstart.db
# import tracetool: the package installed into build/python (no network, no
# change to the system's Python), then the same table as DataFrames
py=${PYTHON:-/usr/bin/python3}
echo "== 5/5 python: pip install ./python into build/python, then tracetool.averages in process"
"$py" -m pip install -q --root-user-action=ignore --no-build-isolation --no-index --upgrade --target build/python ./python
PYTHONPATH=build/python TRACETOOL_LIB=$PWD/build/libtracetool.so "$py" -c \
  'import tracetool; print(tracetool.averages("quickstart.db")[["name", "count", "self_cpu_time_total_us"]].head())'
