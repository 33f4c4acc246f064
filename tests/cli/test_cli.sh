#!/usr/bin/env bash
# The nmsa CLI from the outside: help, a GEMM on each backend (the board one on the simulated
# board of nmsa_board_sim), and bad input that must end with exit code 2 and a message naming
# what is wrong (never a crash or a silent wrong result).
# Usage: test_cli.sh PATH/TO/nmsa PATH/TO/nmsa_board_sim
set -uo pipefail
nmsa=$1
board_sim=$2
passed=0
failed=0

expect() {  # expect NAME EXIT_CODE OUTPUT_REGEX -- ARGS...
  local name=$1 code=$2 regex=$3
  shift 4
  local out rc
  out=$("$nmsa" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && grep -Eq -- "$regex" <<< "$out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $rc (want $code), output:"
    echo "$out" | head -20
  fi
}

expect help            0 'Subcommands:'                       -- --help
expect gemm-help       0 'Usage: nmsa gemm'                   -- gemm --help
expect info-model      0 'array +4 x 4 PEs, 2:4'              -- info --backend model --config small
expect info-rtl        0 'device +rtl:small'                  -- info --config small
expect gemm-rtl        0 'effective speedup .*x'              -- gemm --m 20 --k 40 --n 9 --config small
expect gemm-model-json 0 '"bit_exact":true.*"bit_exact":true' -- gemm --m 20 --k 40 --n 9 --backend model --json
expect no-command      2 'A subcommand is required'           --
expect bad-command     2 "unknown command 'frob'"              -- frob
expect missing-k       2 '--k is required'                     -- gemm --m 3 --n 3
expect bad-number      2 "--k: 'x' is not a number"            -- gemm --m 3 --k x --n 3
expect out-of-range    2 '--m: 0 is outside \[1, 65535\]'      -- gemm --m 0 --k 3 --n 3
expect bad-sparsity    2 'sparsity .*expected N:M'             -- gemm --m 3 --k 3 --n 3 --sparsity 2-4
expect wrong-pattern   2 'device rtl:small is 2:4'             -- gemm --m 3 --k 3 --n 3 --sparsity 2:8 --config small
expect bad-backend     2 '--backend must be rtl, model or uart' -- info --backend fpga
# The board backend without a board: the port's problem, named, and exit code 1 (a device error).
expect uart-help       0 'uart:/dev/ttyUSB0'                  -- info --help
expect uart-not-a-tty  1 'uart:/dev/null: not a serial port'  -- info --backend uart:/dev/null
expect uart-no-port    1 'uart:/nonexistent/ttyUSB9: cannot open' -- gemm --m 2 --k 8 --n 2 --backend uart:/nonexistent/ttyUSB9
expect uart-no-device  2 "'uart:' names no device"            -- info --backend uart:
expect uart-bad-baud   2 "baud rate 'fast' is not a number"  -- info --backend uart:/dev/ttyUSB0@fast
expect uart-config     2 '--config does not apply'            -- info --backend uart:/dev/ttyUSB0 --config small
expect bad-config      2 "unknown accelerator configuration 'huge'" -- info --config huge
expect unknown-option  2 'not expected: .*--frob'              -- gemm --m 1 --k 4 --n 1 --frob 1

# .npy files written byte by byte (no Python needed): a float32 [1 x 3] and an int8 [2 x 8].
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npy() {  # npy FILE DESCR SHAPE DATA_PRINTF
  local header="{'descr': '$2', 'fortran_order': False, 'shape': ($3), }"
  local len=$(( ${#header} + 11 ))
  local pad=$(( (64 - len % 64) % 64 ))
  header="$header$(printf '%*s' "$pad" '')"
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf '%02x' $(( (${#header} + 1) % 256 )))\\x00";
    printf '%s\n' "$header"; printf "$4"; } > "$1"
}
npy "$tmp/x13.npy" '<f4' '1, 3' '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40'
npy "$tmp/w.npy" '|i1' '2, 8' '\x01\x02\x03\x04\x05\x06\x07\x08\xf8\x07\x06\x05\x04\x03\x02\x01'
npy "$tmp/label2.npy" '|u1' '1, 1' '\x02'
npy "$tmp/labels2x.npy" '|u1' '2, 1' '\x02\x00'
npy "$tmp/w6.npy" '|i1' '1, 6' '\x01\x02\x03\x04\x05\x06'
npy "$tmp/nan.npy" '<f4' '1, 4' '\x00\x00\x80\x3f\x00\x00\xc0\x7f\x00\x00\x00\x00\x00\x00\x00\x00'
npy "$tmp/inf.npy" '<f4' '1, 4' '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\x00\x00\x00\x00'
npy "$tmp/empty.npy" '<f4' '0, 8' ''
npy "$tmp/i32.npy" '<i4' '1, 4' '\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00'
npy "$tmp/wf.npy" '<f4' '1, 4' '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
printf 'not an npy file' > "$tmp/bad.npy"
printf 'not an onnx model' > "$tmp/bad.onnx"
softmax=/usr/share/libonnx-testdata/data/node/test_softmax_example/model.onnx

expect prune           0 'nonzeros +8 of 16'                   -- prune "$tmp/w.npy" "$tmp/wp.npy"
expect prune-permute   0 'without the permutation'             -- prune "$tmp/w.npy" "$tmp/wq.npy" --permute
expect compress        0 'values 50.0% \+ metadata 12.5%'      -- compress "$tmp/wp.npy" "$tmp/v.npy" "$tmp/m.npy"
expect compress-dense  2 'row 0, K-group 0.*run nmsa prune first' -- compress "$tmp/w.npy" "$tmp/v.npy" "$tmp/m.npy"
expect prune-corrupt   2 'bad.npy: not a .npy file'            -- prune "$tmp/bad.npy" "$tmp/x.npy"
expect prune-device    2 '/dev/zero: cannot read: not a regular file' -- prune /dev/zero "$tmp/x.npy"
expect run-directory   2 'cannot read: a directory, not a file' -- run "$tmp" --input "$tmp/x13.npy"
expect prune-bad-k     2 'w6.npy: K = 6 is not a multiple of M = 4' -- prune "$tmp/w6.npy" "$tmp/x.npy"
expect compress-sizes  0 'm.npy: 2 x 1 uint8, 2 bytes \(4 bits per group in 4\)' -- compress "$tmp/wp.npy" "$tmp/v.npy" "$tmp/m.npy"
# Edge inputs: each an error naming the file and what is wrong, and no output file left behind.
expect prune-seed-unused 2 '--seed requires --permute'       -- prune "$tmp/w.npy" "$tmp/x.npy" --seed 5
expect prune-3of4      2 '3:4 is not one the hardware runs \(supported: 1:4, 2:4, 2:8\)' -- prune "$tmp/w.npy" "$tmp/x.npy" --sparsity 3:4
expect compress-2of16  2 '2:16 is not one the hardware runs' -- compress "$tmp/w.npy" "$tmp/x.npy" "$tmp/y.npy" --sparsity 2:16
expect prune-nan       2 'nan.npy: the weight at row 0, column 1 is nan; weights must be finite' -- prune "$tmp/nan.npy" "$tmp/x.npy"
expect compress-inf    2 'inf.npy: the weight at row 0, column 2 is inf; weights must be finite' -- compress "$tmp/inf.npy" "$tmp/x.npy" "$tmp/y.npy" --scales "$tmp/z.npy"
expect prune-empty     2 'empty.npy: the weight matrix is empty \(0 x 8\)' -- prune "$tmp/empty.npy" "$tmp/x.npy"
expect compress-empty  2 'empty.npy: the weight matrix is empty \(0 x 8\)' -- compress "$tmp/empty.npy" "$tmp/x.npy" "$tmp/y.npy"
expect prune-int32     2 'i32.npy: weights must be float32, float64 or int8; the file holds int32 \(<i4\)' -- prune "$tmp/i32.npy" "$tmp/x.npy"
expect compress-float-dense 2 'wf.npy: .*not 2:4 sparse.*run nmsa prune first' -- compress "$tmp/wf.npy" "$tmp/x.npy" "$tmp/y.npy" --scales "$tmp/z.npy"
expect compress-same   2 'm.npy is given as both VALUES and META' -- compress "$tmp/wp.npy" "$tmp/m.npy" "$tmp/m.npy"
expect prune-in-place  2 'is given as both IN and OUT'          -- prune "$tmp/w.npy" "$tmp/./w.npy"
expect run-overwrite   2 'x13.npy is given as both --input .* and the output' -- run "$softmax" --input "$tmp/x13.npy" --output "$tmp/x13.npy" --backend model
for left in x y z; do
  if [ -e "$tmp/$left.npy" ]; then
    failed=$((failed + 1))
    echo "FAIL a failed command left $tmp/$left.npy behind"
  fi
done
expect run-softmax     0 'fallbacks: 0 dense, 1 host'    -- run "$softmax" --input "$tmp/x13.npy" --backend model
expect run-labels      0 'top-1 accuracy: 1 / 1 = 1.0000' -- run "$softmax" --input "$tmp/x13.npy" --labels "$tmp/label2.npy" --backend model
expect run-batch       0 'top-1 accuracy: 1 / 1 = 1.0000' -- run "$softmax" --input "$tmp/x13.npy" --labels "$tmp/label2.npy" --backend model --batch 1
expect run-batch-zero  2 '--batch: Value 0 not in range'  -- run "$softmax" --input "$tmp/x13.npy" --backend model --batch 0
expect run-labels-rows 2 'labels2x.npy: 2 labels for float\[1x3\]' -- run "$softmax" --input "$tmp/x13.npy" --labels "$tmp/labels2x.npy" --backend model
expect run-rows        0 'top-1 accuracy: 1 / 1 = 1.0000' -- run "$softmax" --input "$tmp/x13.npy" --labels "$tmp/label2.npy" --backend model --rows 0:1
expect run-rows-range  2 '--rows 0:2: want FIRST:END with 0 <= FIRST < END <= 1' -- run "$softmax" --input "$tmp/x13.npy" --backend model --rows 0:2
expect run-rows-syntax 2 '--rows 1: want FIRST:END' -- run "$softmax" --input "$tmp/x13.npy" --backend model --rows 1
expect run-host-time   0 'host layers: [1-9][0-9]* runs, [0-9.]+ ms wall clock on this machine' -- run "$softmax" --input "$tmp/x13.npy" --backend model
expect run-batch-cycles 0 'batch device cycles: 0$' -- run "$softmax" --input "$tmp/x13.npy" --backend model --batch 1
expect run-seed-model  2 '--memory-seed applies to --backend rtl only' -- run "$softmax" --input "$tmp/x13.npy" --backend model --memory-seed 3
expect run-host-memory 2 '--host-memory: slow not in \{fast,demo\}' -- run "$softmax" --input "$tmp/x13.npy" --backend model --host-memory slow
expect run-corrupt     2 'bad.onnx'                            -- run "$tmp/bad.onnx" --input "$tmp/x13.npy"
expect run-no-input    2 '--input is required'                 -- run "$softmax"
expect run-int8-input  2 'the model takes float here, the file holds int8'          -- run "$softmax" --input "$tmp/w.npy" --backend model

# The release gate on small report.json files: the three keys it reads and nothing else.
report() {  # report FILE SPARSE_INT8_ACCURACY EFFECTIVE_SPEEDUP LATENCY_CYCLES_P99
  printf '{"sparse_int8_accuracy": %s, "effective_speedup": %s, "latency_cycles_p99": %s}\n' \
    "$2" "$3" "$4" > "$1"
}
report "$tmp/base.json" 0.892 1.60 12000
report "$tmp/good.json" 0.889 1.70 11500
report "$tmp/worse.json" 0.885 1.40 12500
report "$tmp/edge.json" 0.887 1.50 12000
report "$tmp/unmeasured.json" null null null
report "$tmp/percent.json" 89.1 1.60 12000
report "$tmp/text.json" 0.89 '"fast"' 12000
report "$tmp/negative.json" 0.89 1.60 -5
printf '{"sparse_int8_accuracy": 0.89, "latency_cycles_p99": 12000}\n' > "$tmp/nokey.json"
printf '{"sparse_int8_accuracy": 0.89,' > "$tmp/truncated.json"
printf '{"sparse_int8_accuracy": 0.89, "effective_speedup": 1e999, "latency_cycles_p99": 1}\n' \
  > "$tmp/overflow.json"
limits=(--max-quality-drop 0.5 --min-speedup 1.5 --max-p99-cycles 12000)
g=(gate --baseline "$tmp/base.json")

expect gate-help       0 'Usage: nmsa gate'                    -- gate --help
expect gate-main-help  0 'gate +the release gate'              -- --help
expect gate-pass       0 'gate: PASS'                          -- "${g[@]}" --candidate "$tmp/good.json" "${limits[@]}"
expect gate-pass-lines 0 'drop 0.30 pp <= 0.50 pp: ok'         -- "${g[@]}" --candidate "$tmp/good.json" "${limits[@]}"
expect gate-at-limit   0 'gate: PASS'                          -- "${g[@]}" --candidate "$tmp/edge.json" "${limits[@]}"
expect gate-quality    1 'quality: candidate 88.50% vs baseline 89.20%: drop 0.70 pp > 0.50 pp: FAIL' -- "${g[@]}" --candidate "$tmp/worse.json" --max-quality-drop 0.5
expect gate-speedup    1 'speedup: candidate 1.40x .*< 1.50x: FAIL' -- "${g[@]}" --candidate "$tmp/worse.json" --min-speedup 1.5
expect gate-p99        1 'p99 latency: candidate 12,500 cycles .*> 12,000 cycles: FAIL' -- "${g[@]}" --candidate "$tmp/worse.json" --max-p99-cycles 12000
expect gate-fail-line  1 'gate: FAIL'                          -- "${g[@]}" --candidate "$tmp/worse.json" "${limits[@]}"
expect gate-unmeasured 1 'not measured in .*unmeasured.json: FAIL' -- "${g[@]}" --candidate "$tmp/unmeasured.json" --min-speedup 1
expect gate-malformed  2 'truncated.json: not valid JSON'      -- "${g[@]}" --candidate "$tmp/truncated.json" --min-speedup 1
expect gate-overflow   2 'overflow.json: not valid JSON: number overflow' -- "${g[@]}" --candidate "$tmp/overflow.json" --min-speedup 1
expect gate-missing-key 2 'nokey.json: missing key "effective_speedup"' -- "${g[@]}" --candidate "$tmp/nokey.json" --min-speedup 1
expect gate-percent    2 'percent.json: "sparse_int8_accuracy" = 89.1 is outside \[0, 1\]' -- "${g[@]}" --candidate "$tmp/percent.json" --min-speedup 1
expect gate-wrong-type 2 'text.json: "effective_speedup" must be a number or null, not string' -- "${g[@]}" --candidate "$tmp/text.json" --min-speedup 1
expect gate-negative   2 'negative.json: "latency_cycles_p99" = -5 must be >= 0' -- "${g[@]}" --candidate "$tmp/negative.json" --min-speedup 1
expect gate-no-file    2 'nosuch.json: cannot read: no such file'            -- "${g[@]}" --candidate "$tmp/nosuch.json" --min-speedup 1
expect gate-bad-base   2 'truncated.json: not valid JSON'      -- gate --baseline "$tmp/truncated.json" --candidate "$tmp/good.json" --min-speedup 1
expect gate-no-limit   2 'gate needs at least one limit.*base.json states no release criteria' -- "${g[@]}" --candidate "$tmp/good.json"
# A baseline that states its release criteria decides with them when no limit is given.
printf '{"sparse_int8_accuracy": 0.892, "effective_speedup": 1.6, "latency_cycles_p99": 12000, "batches": 4, "batches_bit_exact_golden": 4, "batches_bit_exact_model": 4, "release_criteria": {"max_quality_drop_pp": 0.3, "min_speedup": 1.55, "max_p99_cycles": 12600, "bit_exact": true}}\n' > "$tmp/criteria.json"
printf '{"sparse_int8_accuracy": 0.890, "effective_speedup": 1.6, "latency_cycles_p99": 12100, "batches": 4, "batches_bit_exact_golden": 4, "batches_bit_exact_model": 3}\n' > "$tmp/inexact.json"
expect gate-criteria-pass 0 "limits: the baseline's release criteria" -- gate --baseline "$tmp/criteria.json" --candidate "$tmp/criteria.json"
expect gate-criteria-fail 1 'bit-exact: candidate 4/4 batches equal the golden model, 3/4 the functional model: FAIL' -- gate --baseline "$tmp/criteria.json" --candidate "$tmp/inexact.json"
expect gate-criteria-given 0 'gate: PASS'                     -- gate --baseline "$tmp/criteria.json" --candidate "$tmp/inexact.json" --min-speedup 1.5
expect gate-no-cand    2 '--candidate is required'             -- "${g[@]}" --min-speedup 1
expect gate-bad-limit  2 "--min-speedup: 'fast' is not a number" -- "${g[@]}" --candidate "$tmp/good.json" --min-speedup fast
expect gate-positional 2 'not expected: .*good.json'           -- "${g[@]}" --candidate "$tmp/good.json" "$tmp/good.json" --min-speedup 1

# Triage reads more of a report than the gate: a gate-only file names the key it lacks.
expect triage-self-gate-file 2 'good.json: missing key "test_images"' -- triage --baseline "$tmp/good.json" --candidate "$tmp/good.json"
expect triage-no-cand  2 '--candidate is required'            -- triage --baseline "$tmp/good.json"
expect triage-bad-tol  2 "--quality-tolerance: 'x' is not a number" -- triage --baseline "$tmp/good.json" --candidate "$tmp/good.json" --quality-tolerance x

# The bandwidth lens: one family, written and readable; bad grids are usage errors.
expect sweep-mlp      0 'mlp +8 B/c +[0-9]+ B/c'                   -- sweep --family mlp --out "$tmp/sweep"
expect sweep-grid     0 'wrote .*sweep2/sweep.json'          -- sweep --family mlp --bytes-per-cycle 4 16 --latency 100 --out "$tmp/sweep2"
if grep -q '<svg' "$tmp/sweep/sweep.html" && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/sweep/sweep.json"; then
  passed=$((passed + 1)); echo "PASS sweep-outputs"
else
  failed=$((failed + 1)); echo "FAIL sweep-outputs: sweep.html or sweep.json missing or malformed"
fi
expect sweep-family   2 "unknown workload family 'gpt'"       -- sweep --family gpt --out "$tmp/sweep3"
expect sweep-axi      2 '--axi-width: 128 not in'             -- sweep --axi-width 128 --out "$tmp/sweep3"
expect sweep-bw       2 '--bytes-per-cycle: 0 is outside'     -- sweep --bytes-per-cycle 0 --out "$tmp/sweep3"

# Found by scripts/fuzz_cli.py. An output that cannot be written (a directory) is found before
# any work: an existing output keeps its content and no new file is left.
printf 'old' > "$tmp/keep.npy"
mkdir "$tmp/keep.perm.npy" "$tmp/adir.npy"
expect prune-perm-dir   2 'keep.perm.npy: cannot write: a directory, not a file \(the permutation\)' -- prune "$tmp/wf.npy" "$tmp/keep.npy" --permute
expect compress-out-dir 2 'adir.npy: cannot write: a directory, not a file \(META\)' -- compress "$tmp/wp.npy" "$tmp/keep.npy" "$tmp/adir.npy"
expect compress-scales-unused 2 'adir.npy: cannot write: a directory, not a file \(--scales\)' -- compress "$tmp/wp.npy" "$tmp/v9.npy" "$tmp/m9.npy" --scales "$tmp/adir.npy"
expect compress-no-dir  2 'nodir/m9.npy: cannot write: the directory .*nodir does not exist' -- compress "$tmp/wp.npy" "$tmp/v9.npy" "$tmp/nodir/m9.npy"
if [ "$(cat "$tmp/keep.npy")" != old ] || [ -e "$tmp/v9.npy" ] || ls "$tmp" | grep -q '\.tmp-'; then
  failed=$((failed + 1)); echo "FAIL a failed command changed keep.npy or left v9.npy or a temporary"
fi
expect gemm-empty-sparsity 2 "--sparsity: must not be empty" -- gemm --m 1 --k 4 --n 1 --backend model --sparsity ''
expect prune-empty-sparsity 2 "--sparsity: sparsity '': expected N:M" -- prune "$tmp/wf.npy" "$tmp/v9.npy" --sparsity ''
expect info-empty-config 2 "--config: must not be empty" -- info --backend model --config ''
expect sweep-bad-config 2 "--config: unknown device configuration 'huge'" -- sweep --config huge --out "$tmp/sweep3"
expect run-input-shape  2 'wf.npy \(input .*\): float\[1x4\], the model declares \[1x3\]' -- run "$softmax" --input "$tmp/wf.npy" --backend model
expect triage-memo-input 2 'good.json is given as both --baseline and --memo' -- triage --baseline "$tmp/good.json" --candidate "$tmp/good.json" --memo "$tmp/good.json"
npy "$tmp/nan13.npy" '<f4' '1, 3' '\x00\x00\x80\x3f\x00\x00\xc0\x7f\x00\x00\x00\x00'
expect run-nan-input    2 'nan13.npy \(input .*\): the value at \[0, 1\] is nan; inputs must be finite' -- run "$softmax" --input "$tmp/nan13.npy" --backend model
{ cat "$tmp/good.json"; printf '\0garbage'; } > "$tmp/nul.json"
expect gate-nul         2 'nul.json: not valid JSON: a NUL byte at offset' -- "${g[@]}" --candidate "$tmp/nul.json" --min-speedup 1
expect sweep-empty-family 2 '--family: must not be empty' -- sweep --family '' --out "$tmp/sweep3"
expect prune-empty-in   2 '^in: must not be empty'              -- prune '' "$tmp/v9.npy"
printf 'x' > "$tmp/afile"
expect sweep-out-file   2 "--out .*afile: not a directory" -- sweep --family mlp --out "$tmp/afile"
# Outputs in new directories: made on success; a failed write leaves none behind.
expect run-output-new-dir 0 "wrote .*/newdir/sub/y.npy" -- run "$softmax" --input "$tmp/x13.npy" --output "$tmp/newdir/sub/y.npy" --backend model
expect run-output-under-file 2 "afile/sub: cannot create the directory: Not a directory" -- run "$softmax" --input "$tmp/x13.npy" --output "$tmp/afile/sub/y.npy" --backend model

# Every subcommand, held to exit code 2 for an unknown option and for a stray positional, with a
# message naming it, before it reads or writes anything.
declare -A minimal=(
  [info]="info --backend model"
  [gemm]="gemm --m 1 --k 4 --n 1 --backend model"
  [prune]="prune $tmp/wf.npy $tmp/v9.npy"
  [compress]="compress $tmp/wp.npy $tmp/v9.npy $tmp/m9.npy"
  [run]="run $softmax --input $tmp/x13.npy --backend model"
  [gate]="gate --baseline $tmp/base.json --candidate $tmp/good.json --min-speedup 1"
  [triage]="triage --baseline $tmp/good.json --candidate $tmp/good.json"
  [sweep]="sweep --family mlp --out $tmp/sweep4"
)
for cmd in "${!minimal[@]}"; do
  read -r -a argv <<< "${minimal[$cmd]}"
  expect "$cmd-unknown-option" 2 'not expected: .*--frob' -- "${argv[@]}" --frob
  expect "$cmd-stray-last" 2 "not expected: stray; nmsa $cmd takes" -- "${argv[@]}" stray
  expect "$cmd-stray-first" 2 "not expected: .*; nmsa $cmd takes" -- "${argv[0]}" stray "${argv[@]:1}"
done
if [ -e "$tmp/v9.npy" ] || [ -e "$tmp/m9.npy" ] || [ -e "$tmp/sweep4" ]; then
  failed=$((failed + 1)); echo "FAIL a command with a usage error wrote an output"
fi

# The board backend on the simulated board, through its pseudo-terminal.
coproc SIM { "$board_sim"; }
read -r -t 30 pty <&"${SIM[0]}" || pty=""
if [ -n "$pty" ]; then
  expect uart-info     0 "device +uart:$pty@1000000"           -- info --backend "uart:$pty"
  expect uart-window   0 'memory window +128 KiB at 0x10000000' -- info --backend "uart:$pty"
  expect uart-gemm     0 '"figures_from":"board".*"effective_speedup"' -- gemm --m 6 --k 40 --n 5 --backend "uart:$pty" --json
  expect uart-gemm-exact 0 '"bit_exact":true.*"bit_exact":true' -- gemm --m 6 --k 40 --n 5 --backend "uart:$pty" --json
else
  failed=$((failed + 1))
  echo "FAIL nmsa_board_sim printed no pseudo-terminal"
fi
exec {SIM[1]}>&-
wait "$SIM_PID"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
