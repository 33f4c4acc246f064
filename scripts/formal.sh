#!/usr/bin/env bash
# Formal proof of nmsa_meta_decoder (tests/formal/nmsa_meta_decoder_fv.sv) for the 2:4, 1:4 and
# 2:8 variants, with plain Yosys + yosys-smtbmc + z3 (no SymbiYosys on the build machines).
#
#   scripts/formal.sh [--selftest] [BUILD_DIR]      BUILD_DIR defaults to build/formal
#
# Default: prove every variant; one PASS/FAIL line each, non-zero exit if any proof fails.
# --selftest: prove that the harness can fail. Each variant is re-run with every applicable
#   mutant of the decoder outputs (parameter Mutant of the harness); each must make smtbmc report
#   a failed assertion. Non-zero exit if a mutant survives.
#
# Why a BMC of depth 1 is a complete proof here: the decoder is combinational, so the model has
# no state; step 0 with free inputs (meta_i, dense_i are top-level inputs) covers every input
# and the solver is exhaustive over them. Induction (-i) would add nothing. The Yosys script
# enforces the premise: it fails if the design under proof ever contains a register or memory.
#
# --unroll: z3 4.8 (Debian) can hang for minutes on smtbmc's default uninterpreted-function
# encoding of this tiny model when it has to produce a counterexample; unrolling avoids that.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

selftest=0
build_arg=""
for arg in "$@"; do
  case "$arg" in
    --selftest) selftest=1 ;;
    -h|--help)  usage; exit 0 ;;
    -*)         echo "formal.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *)          [[ -z "$build_arg" ]] || { echo "formal.sh: more than one BUILD_DIR" >&2; exit 2; }
                build_arg="$arg" ;;
  esac
done

# A BUILD_DIR given on the command line is relative to the caller's directory.
if [[ -n "$build_arg" ]]; then
  mkdir -p "$build_arg"
  build_dir="$(cd "$build_arg" && pwd)"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${build_dir:-$PWD/build/formal}"
mkdir -p "$build_dir"

for tool in yosys yosys-smtbmc z3 timeout; do
  command -v "$tool" >/dev/null || { echo "formal.sh: '$tool' not found in PATH" >&2; exit 2; }
done

# The decoder and what precedes it in the one file list (compile order: its package, if it ever
# uses one).
rtl_files=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [[ -z "$line" || "$line" == //* ]] && continue
  [[ -f "$line" ]] || { echo "formal.sh: rtl/files.f lists '$line', which does not exist" >&2; exit 2; }
  rtl_files+=("$line")
  [[ "$line" == */nmsa_meta_decoder.sv || "$line" == nmsa_meta_decoder.sv ]] && break
done < rtl/files.f
[[ ${#rtl_files[@]} -gt 0 && "${rtl_files[-1]}" == *nmsa_meta_decoder.sv ]] \
  || { echo "formal.sh: nmsa_meta_decoder.sv not in rtl/files.f" >&2; exit 2; }
source scripts/formal_smtbmc.sh
harness=tests/formal/nmsa_meta_decoder_fv.sv
top=nmsa_meta_decoder_fv

variants=("2 4" "1 4" "2 8")                 # N M
mutants=(1 2 3 4 5)                          # see the Mutant case in the harness
two_slot_mutants=" 1 2 4 "                   # equivalent to the real decoder when N = 1
solver_timeout=120                           # seconds; a hang is a failure, not a wait

# prove N M MUTANT -> 0: proof passed, 1: an assertion failed, 2: tool error or timeout.
# Sets $run_msg to a short description.
prove() {
  local n=$1 m=$2 mut=$3
  local stem="$build_dir/${top}_n${n}_m${m}"
  [[ "$mut" == 0 ]] || stem+="_mutant${mut}"
  rm -f "$stem".*                            # no stale counterexample from an earlier run
  cat > "$stem.ys" <<EOF
read_verilog -sv -formal ${rtl_files[*]} $harness
chparam -set N $n -set M $m -set Mutant $mut $top
prep -top $top
async2sync
dffunmap
select -assert-none t:\$*ff* t:\$*dlatch* t:\$mem*
select -assert-min 1 t:\$assert
tee -q -o $stem.asserts select -count t:\$assert
write_smt2 -wires $stem.smt2
EOF
  if ! yosys -q -l "$stem.yosys.log" -s "$stem.ys" > "$stem.yosys.out" 2>&1; then
    run_msg="yosys failed, see $stem.yosys.log"
    return 2
  fi
  local asserts
  asserts="$(grep -oE '^[0-9]+' "$stem.asserts" || echo '?')"
  smtbmc_check "$stem" 1 "$solver_timeout" "$asserts assertions proved"
}

failures=0
for v in "${variants[@]}"; do
  read -r n m <<< "$v"
  if [[ $selftest -eq 0 ]]; then
    rc=0; prove "$n" "$m" 0 || rc=$?
    if [[ $rc -eq 0 ]]; then
      echo "PASS  formal nmsa_meta_decoder ${n}:${m}  ($run_msg)"
    else
      echo "FAIL  formal nmsa_meta_decoder ${n}:${m}  ($run_msg)"
      failures=$((failures + 1))
    fi
  else
    for mut in "${mutants[@]}"; do
      if [[ $n -lt 2 && "$two_slot_mutants" == *" $mut "* ]]; then
        echo "SKIP  selftest ${n}:${m} mutant $mut  (needs two slots; equivalent to the decoder when N = 1)"
        continue
      fi
      rc=0; prove "$n" "$m" "$mut" || rc=$?
      if [[ $rc -eq 1 ]]; then
        echo "PASS  selftest ${n}:${m} mutant $mut caught  ($run_msg)"
      elif [[ $rc -eq 0 ]]; then
        echo "FAIL  selftest ${n}:${m} mutant $mut survived: the properties did not detect it"
        failures=$((failures + 1))
      else
        echo "FAIL  selftest ${n}:${m} mutant $mut: $run_msg"
        failures=$((failures + 1))
      fi
    done
  fi
done

if [[ $failures -ne 0 ]]; then
  echo "formal.sh: $failures failure(s); outputs in $build_dir" >&2
  exit 1
fi
