#!/usr/bin/env bash
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#
# The fuzzers (docs/fuzzing.md): the libFuzzer targets of tests/fuzz/ (built with clang in their
# own build directory), the RTL fuzzer fuzz_rtl among them, and the CLI mutator scripts/fuzz_cli.py.
#
#   fuzz.sh build  FUZZ_DIR                    configure and build the libFuzzer targets
#   fuzz.sh lib    FUZZ_DIR TARGET SECONDS     run one host target (npy, onnx, report, options)
#   fuzz.sh replay FUZZ_DIR                    run fuzz_rtl on every input of tests/fuzz/regressions/rtl
#   fuzz.sh rtl    FUZZ_DIR SECONDS [JSON]     replay, then run fuzz_rtl for SECONDS; with JSON, its
#                                              figures are merged into that benchmark file
#   fuzz.sh all    FUZZ_DIR NMSA CASES SECONDS [JSON [RTL_SECONDS]]
#                  every host target for SECONDS each, then CASES CLI cases, then fuzz_rtl for
#                  RTL_SECONDS (default 120); with JSON, the figures are merged into that file
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
  "$dir/fuzz_rtl_seeds" "$dir/seeds/rtl"
}

# The RTL fuzzer's options: a hang is caught by its own cycle watchdog, -timeout (wall clock) only
# backs it up; inputs up to 2 KiB (a few dozen commands and CSR accesses).
rtl_opts=(-timeout=60 -rss_limit_mb=2048 -max_len=2048)

replay() {  # every saved finding must pass now
  local inputs=("$root"/tests/fuzz/regressions/rtl/*)
  [ -e "${inputs[0]}" ] || { echo "fuzz: no RTL regression inputs"; return 0; }
  if ! "$dir/fuzz_rtl" "${rtl_opts[@]}" -runs=1 "${inputs[@]}" >"$dir/rtl-replay.log" 2>&1; then
    echo "fuzz: an RTL regression input fails again (log $dir/rtl-replay.log):" >&2
    grep -E 'FINDING|ERROR|Running: ' "$dir/rtl-replay.log" >&2 || tail -20 "$dir/rtl-replay.log" >&2
    return 1
  fi
  echo "fuzz: rtl: ${#inputs[@]} regression inputs replayed, no finding"
}

rtl() {  # rtl SECONDS [JSON]
  local seconds=$1 json=${2:-}
  replay
  mkdir -p "$dir/corpus/rtl" "$dir/artifacts"
  local log="$dir/rtl.log" status=0
  "$dir/fuzz_rtl" "${rtl_opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/rtl-" "$dir/corpus/rtl" "$dir/seeds/rtl" >"$log" 2>&1 || status=$?
  local runs rate cov ft hangs=0 findings=0
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  if [ "$status" -ne 0 ]; then
    findings=1
    grep -qE 'FINDING: hang|ERROR: libFuzzer: timeout' "$log" && hangs=1
    echo "fuzz: rtl found an input that fails (log $log, input in $dir/artifacts; save it under" \
         "tests/fuzz/regressions/rtl/ once understood):" >&2
    grep -E 'FINDING|ERROR|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
  else
    echo "fuzz: rtl: ${runs:-0} inputs in ${seconds} s (${rate:-0}/s), cov ${cov:-0}, ft ${ft:-0}, no finding"
  fi
  if [ -n "$json" ]; then
    python3 - "$json" "${runs:-0}" "${rate:-0}" "${cov:-0}" "${ft:-0}" "$hangs" "$findings" \
        "$seconds" <<'PY'
import json, os, sys
path = sys.argv[1]
runs, rate, cov, ft, hangs, findings, seconds = (int(v) for v in sys.argv[2:])
data = {}
if os.path.exists(path):
    with open(path) as f:
        data = json.load(f)
data.update({
    "fuzz_execs": runs, "fuzz_execs_per_s": rate, "fuzz_hangs": hangs,
    "fuzz_rtl_findings": findings, "fuzz_rtl_coverage_features": ft,
    "fuzz_rtl_coverage_edges": cov, "fuzz_rtl_seconds": seconds,
})
with open(path + ".tmp", "w") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
os.replace(path + ".tmp", path)
PY
  fi
  return "$status"
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
  replay) replay ;;
  rtl) rtl "$3" "${4:-}" ;;
  all)
    nmsa=$3 cases=$4 seconds=$5 json=${6:-} rtl_seconds=${7:-120}
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
    rtl "$rtl_seconds" "$json"
    ;;
  *) echo "usage: fuzz.sh build|lib|replay|rtl|all FUZZ_DIR ..." >&2; exit 2 ;;
esac
