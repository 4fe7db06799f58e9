#!/usr/bin/env bash
# Install what tracetool needs to build and test on Debian 12 (run as root).
# Idempotent: only missing packages are installed.
set -euo pipefail
pkgs=(build-essential cmake pkg-config zlib1g-dev libisal-dev libsqlite3-dev libcriterion-dev libcairo2-dev chromium
      sqlite3 python3 gzip strace)
pkgs+=(python3-distributed python3-pip python3-setuptools) # python/: tracetool.dask; pip install ./python
pkgs+=(python3-pandas) # python/: import tracetool (DataFrames); tests/cli/test_python.py
if [ "${TT_WITH_FUZZ:-0}" = 1 ]; then pkgs+=(clang); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
