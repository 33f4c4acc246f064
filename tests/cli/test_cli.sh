#!/usr/bin/env bash
# The nmsa CLI from the outside: help, a GEMM on each backend, and bad input that must end with
# exit code 2 and a message naming what is wrong (never a crash or a silent wrong result).
# Usage: test_cli.sh PATH/TO/nmsa
set -uo pipefail
nmsa=$1
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

expect help            0 'commands:'                          -- --help
expect gemm-help       0 'usage: nmsa gemm'                   -- gemm --help
expect info-model      0 'array +4 x 4 PEs, 2:4'              -- info --backend model --config small
expect info-rtl        0 'device +rtl:small'                  -- info --config small
expect gemm-rtl        0 'effective speedup .*x'              -- gemm --m 20 --k 40 --n 9 --config small
expect gemm-model-json 0 '"bit_exact": true.*"bit_exact": true' -- gemm --m 20 --k 40 --n 9 --backend model --json
expect no-command      2 'usage: nmsa'
expect bad-command     2 "unknown command 'frob'"              -- frob
expect missing-k       2 'gemm needs --k'                      -- gemm --m 3 --n 3
expect bad-number      2 "--k 'x' is not a number"             -- gemm --m 3 --k x --n 3
expect out-of-range    2 '--m 0 is outside'                    -- gemm --m 0 --k 3 --n 3
expect bad-sparsity    2 'sparsity .*expected N:M'             -- gemm --m 3 --k 3 --n 3 --sparsity 2-4
expect wrong-pattern   2 'device rtl:small is 2:4'             -- gemm --m 3 --k 3 --n 3 --sparsity 2:8 --config small
expect bad-backend     2 '--backend must be rtl or model'      -- info --backend fpga
expect bad-config      2 "unknown accelerator configuration 'huge'" -- info --config huge
expect unknown-option  2 'unknown option --frob'               -- gemm --frob 1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
