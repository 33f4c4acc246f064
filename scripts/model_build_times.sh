#!/usr/bin/env bash
# Measures how long Verilator takes to build each configuration's array model from scratch
# (verilate + C++ compile, ccache off so the figure is real), for `make bench`.
# Usage: scripts/model_build_times.sh OUT_FILE   (writes lines "name seconds")
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench/build_times.txt}
work=$(dirname "$out")/models
mkdir -p "$work"
: > "$out"

mapfile -t sources < <(grep -v '^\s*//' rtl/files.f | grep -v '^\s*$')
mapfile -t configs < <(python3 -c '
import json
d = json.load(open("rtl/configs.json"))
for name, c in d["configs"].items():
    if name not in d.get("bench_configs", []):  # no array model is built of those
        print(name, c["rows"], c["cols"], c["n"], c["m"], c["data_w"], c["acc_w"])')

for line in "${configs[@]}"; do
  read -r name rows cols n m dw aw <<< "$line"
  rm -rf "$work/$name"
  start=$(date +%s.%N)
  CCACHE_DISABLE=1 verilator --cc -Wall --assert --x-assign unique --x-initial unique -O3 \
    --top-module nmsa_array -GRows="$rows" -GCols="$cols" -GN="$n" -GM="$m" \
    -GDataW="$dw" -GAccW="$aw" --prefix "Vnmsa_array_$name" --Mdir "$work/$name" \
    --build -j "$(nproc)" "${sources[@]}" > "$work/$name.log" 2>&1
  end=$(date +%s.%N)
  secs=$(python3 -c "print(round($end - $start, 1))")
  echo "$name $secs" >> "$out"
  echo "model build time: $name ${secs}s"
done
