#!/usr/bin/env bash
# Quick start: install what is missing, build, then ingest a bundled trace and
# summarise it. Usage: scripts/quickstart.sh [TRACE]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTT_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
trace=${1:-testdata/kineto/resnet50_2021-06_trace.json.gz}
rm -f quickstart.db
./build/tracetool ingest quickstart.db "$trace"
./build/tracetool info quickstart.db
