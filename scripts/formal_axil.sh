#!/usr/bin/env bash
# Formal proof of the AXI4-Lite slave of nmsa_csr (tests/formal/nmsa_csr_axil_fv.sv) with plain
# Yosys + yosys-smtbmc + z3: handshakes, one response per request, bounded response and
# acceptance latency, response codes, against every master that obeys AXI4-Lite.
#
#   scripts/formal_axil.sh [--selftest] [BUILD_DIR]      BUILD_DIR defaults to build/formal
#
# Default: a temporal induction of STEPS steps, i.e. a bounded check of STEPS cycles from reset
# (the base case) and the induction step of the same length (yosys-smtbmc -i). Both passing is a
# proof for every input sequence of any length. The induction closes because the harness also
# asserts what this slave promises beyond AXI (Invariants = 1: AW and W taken together, one write
# and one read outstanding at most, VALID exactly while a request is outstanding). It closes at 2
# steps today; STEPS = 8 leaves room for a slave with a deeper pipeline at about a second of
# solver time. One PASS/FAIL line, non-zero exit if either run fails.
# --selftest: every mutant of the harness (the slave's outputs corrupted as the properties see
# them), with Invariants = 0 so that the interface rules alone must catch it, must make an
# assertion fail in the bounded check of STEPS cycles from reset. Each PASS line names the
# assertion that failed.
#
# Nothing is abstracted: the harness drives the real nmsa_csr, with its registers and counters,
# from free run-control and counter inputs.
set -euo pipefail

selftest=0
build_arg=""
for arg in "$@"; do
  case "$arg" in
    --selftest) selftest=1 ;;
    -*)         echo "formal_axil.sh: unknown option '$arg'" >&2; exit 2 ;;
    *)          [[ -z "$build_arg" ]] \
                  || { echo "formal_axil.sh: more than one BUILD_DIR" >&2; exit 2; }
                build_arg="$arg" ;;
  esac
done
if [[ -n "$build_arg" ]]; then
  mkdir -p "$build_arg"
  build_dir="$(cd "$build_arg" && pwd)"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${build_dir:-$PWD/build/formal}"
mkdir -p "$build_dir"
for tool in yosys yosys-smtbmc z3 timeout; do
  command -v "$tool" >/dev/null || { echo "formal_axil.sh: '$tool' not found in PATH" >&2; exit 2; }
done

# The packages and the CSR block from the one file list, in its order.
rtl_files=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [[ -z "$line" || "$line" == //* ]] && continue
  [[ "$line" == *_pkg.sv || "$line" == */nmsa_csr.sv ]] || continue
  [[ -f "$line" ]] \
    || { echo "formal_axil.sh: rtl/files.f lists '$line', which does not exist" >&2; exit 2; }
  rtl_files+=("$line")
done < rtl/files.f
[[ " ${rtl_files[*]} " == *"/nmsa_csr.sv "* ]] \
  || { echo "formal_axil.sh: nmsa_csr.sv not in rtl/files.f" >&2; exit 2; }

source scripts/formal_smtbmc.sh
harness=tests/formal/nmsa_csr_axil_fv.sv
top=nmsa_csr_axil_fv
steps=8
mutants=(1 2 3 4 5 6 7 8)                     # see the Mutant case in the harness
solver_timeout=120                           # seconds; a hang is a failure, not a wait

# build MUTANT INVARIANTS STEM -> 0, or 2 with run_msg set when Yosys fails.
build() {
  local mut=$1 inv=$2 stem=$3
  rm -f "$stem".*                            # no stale counterexample from an earlier run
  cat > "$stem.ys" <<EOF
read_verilog -sv -formal ${rtl_files[*]} $harness
chparam -set Mutant $mut -set Invariants $inv $top
prep -top $top
memory_map
opt -fast
async2sync
dffunmap
select -assert-min 14 t:\$assert
write_smt2 -wires $stem.smt2
EOF
  if ! yosys -q -l "$stem.yosys.log" -s "$stem.ys" > /dev/null 2>&1; then
    run_msg="yosys failed, see $stem.yosys.log"
    return 2
  fi
}

failures=0
if [[ $selftest -eq 0 ]]; then
  stem="$build_dir/${top}"
  rc=0; build 0 1 "$stem" || rc=$?
  if [[ $rc -eq 0 ]]; then
    smtbmc_check "$stem" "$steps" "$solver_timeout" "base case" bmc || rc=$?
    [[ $rc -eq 0 ]] || run_msg="base case of $steps cycles from reset: $run_msg"
  fi
  if [[ $rc -eq 0 ]]; then
    cp "$stem.smt2" "$stem.ind.smt2"
    smtbmc_check "$stem.ind" "$steps" "$solver_timeout" \
      "proved by temporal induction: base case and induction step of $steps cycles" induction \
      || { rc=$?; run_msg="induction step of $steps cycles: $run_msg"; }
  fi
  if [[ $rc -eq 0 ]]; then
    echo "PASS  formal nmsa_csr AXI4-Lite slave  ($run_msg)"
  else
    echo "FAIL  formal nmsa_csr AXI4-Lite slave  ($run_msg)"
    failures=1
  fi
else
  for mut in "${mutants[@]}"; do
    stem="$build_dir/${top}_mutant${mut}"
    rc=0; build "$mut" 0 "$stem" || rc=$?
    [[ $rc -ne 0 ]] || { smtbmc_check "$stem" "$steps" "$solver_timeout" "" bmc || rc=$?; }
    if [[ $rc -eq 1 ]]; then
      echo "PASS  selftest nmsa_csr AXI4-Lite mutant $mut caught  ($run_msg)"
    elif [[ $rc -eq 0 ]]; then
      echo "FAIL  selftest nmsa_csr AXI4-Lite mutant $mut survived $steps cycles"
      failures=$((failures + 1))
    else
      echo "FAIL  selftest nmsa_csr AXI4-Lite mutant $mut: $run_msg"
      failures=$((failures + 1))
    fi
  done
fi
if [[ $failures -ne 0 ]]; then
  echo "formal_axil.sh: $failures failure(s); outputs in $build_dir" >&2
  exit 1
fi
