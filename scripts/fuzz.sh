#!/usr/bin/env bash
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#
# The host-side fuzzers (docs/fuzzing.md): the libFuzzer targets of tests/fuzz/ (built with clang
# in their own build directory) and the CLI mutator scripts/fuzz_cli.py.
#
#   fuzz.sh build  FUZZ_DIR                    configure and build the libFuzzer targets
#   fuzz.sh lib    FUZZ_DIR TARGET SECONDS     run one target (npy, onnx, report, options)
#   fuzz.sh all    FUZZ_DIR NMSA CASES SECONDS [JSON]
#                  every target for SECONDS each, then CASES CLI cases; with JSON, the figures
#                  are merged into that benchmark file
#
# A finding of a libFuzzer target leaves its input in FUZZ_DIR/artifacts/ and ends with exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=$1
dir=$2

build() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S "$root/tests/fuzz" -B "$dir" "${gen[@]}" -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
  cmake --build "$dir" -j "$(nproc)"
  python3 "$root/scripts/fuzz_seeds.py" "$dir/seeds"
}

lib() {  # lib TARGET SECONDS: prints the executions per second on its last line
  local target=$1 seconds=$2
  mkdir -p "$dir/corpus/$target" "$dir/artifacts"
  local log="$dir/$target.log"
  # -rss_limit_mb and -timeout make an allocation beyond 2 GiB or a 10 s input a finding.
  if ! "$dir/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$dir/artifacts/$target-" -print_final_stats=1 \
      "$dir/corpus/$target" "$dir/seeds/$target" >"$log" 2>&1; then
    echo "fuzz: $target found an input that fails (log $log, input in $dir/artifacts):" >&2
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    return 1
  fi
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz: $target: ${runs:-0} inputs in ${seconds} s, no finding"
  echo "${runs:-0}"
}

case "$mode" in
  build) build ;;
  lib) lib "$3" "$4" ;;
  all)
    nmsa=$3 cases=$4 seconds=$5 json=${6:-}
    build
    total=0
    for t in npy onnx report options; do
      runs=$(lib "$t" "$seconds" | tail -1)
      total=$((total + runs))
    done
    args=(--nmsa "$nmsa" --cases "$cases" --seed "${NMSA_SEED:-1}")
    [ -n "$json" ] && args+=(--json "$json")
    python3 "$root/scripts/fuzz_cli.py" "${args[@]}"
    if [ -n "$json" ]; then
      python3 - "$json" "$total" "$seconds" <<'PY'
import json, sys
path, runs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with open(path) as f:
    data = json.load(f)
data["host_fuzz_libfuzzer_inputs"] = runs
data["host_fuzz_libfuzzer_seconds_per_target"] = seconds
with open(path + ".tmp", "w") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
import os
os.replace(path + ".tmp", path)
PY
    fi
    ;;
  *) echo "usage: fuzz.sh build|lib|all FUZZ_DIR ..." >&2; exit 2 ;;
esac
