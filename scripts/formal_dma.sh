#!/usr/bin/env bash
# Bounded formal check of the AXI4 master rules of the DMA engines (nmsa_dma_rd, nmsa_dma_wr and
# the nmsa_burst_gen they share), harnesses tests/formal/nmsa_dma_{rd,wr}_fv.sv, with plain
# Yosys + yosys-smtbmc + z3.
#
#   scripts/formal_dma.sh [--selftest] [BUILD_DIR]      BUILD_DIR defaults to build/formal
#
# Default: every property holds for every input sequence of STEPS cycles (reset in the first;
# requests legal by the engine's contract, slave and data stream AXI-legal, everything else
# free). One PASS/FAIL line per engine, non-zero exit if a check fails.
# --selftest: every mutant of a harness (the engine's outputs corrupted as the properties see
# them) must make a property fail within the same bound.
#
# Parameters (small, to keep the solver within the time of a regression test): AddrW 13 (the
# least the engines allow; both 4 KiB pages and the wrap of the address space are reachable),
# 32-bit data (4-byte beats, narrow rows of 1 to 3 bytes on any lane), LenW 4 (rows of up to 15
# bytes, so a row takes up to two bursts, and up to 15 rows), MaxBurstBeats 2, MaxOutstanding 2.
#
# Why STEPS = 9: in 9 cycles the solver reaches, from reset, a request accepted (cycle 1), its
# first burst (2), a row split at MaxBurstBeats or at a 4 KiB boundary, the next row at
# addr + stride, MaxOutstanding bursts in flight with ARVALID/AWVALID waiting for room, R and W
# beats of two-beat bursts with back-pressure, and a second request taken behind a short first.
# Each further cycle costs the solver 3 to 7 times the previous one: measured on one core, both
# engines take about 6 s of CPU at 8 cycles, 21 s at 9 and 120 s at 10, which a regression test
# cannot afford.
#
# Why bounded, not a proof: temporal induction fails on unreachable states in which the engine's
# registers (the burst generator's next row, its FIFO of bursts in flight) and the harness's
# reference walker and slave model disagree; tying them together needs hierarchical references
# into the engine, which this Yosys does not read.
set -euo pipefail

selftest=0
build_arg=""
for arg in "$@"; do
  case "$arg" in
    --selftest) selftest=1 ;;
    -*)         echo "formal_dma.sh: unknown option '$arg'" >&2; exit 2 ;;
    *)          build_arg="$arg" ;;
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
  command -v "$tool" >/dev/null || { echo "formal_dma.sh: '$tool' not found in PATH" >&2; exit 2; }
done

source scripts/formal_smtbmc.sh
steps=9
engines=(rd wr)
# rd: 1 burst across 4 KiB, 2 ARADDR moves while stalled, 3 ARVALID dropped while stalled,
#     4 one beat too many (more bytes than asked), 5 FIXED burst, 6 rd_last_o on every RLAST,
#     7 ARPROT moves while stalled.
# wr: 1 burst across 4 KiB, 2 WLAST dropped, 3 WDATA moves while stalled, 4 AWLEN one short (one
#     W beat too many), 5 W before its AW, 6 full strobes on a narrow row, 7 AWVALID dropped,
#     8 AWCACHE moves while stalled.
mutants_rd=(1 2 3 4 5 6 7)
mutants_wr=(1 2 3 4 5 6 7 8)
solver_timeout=300

# check ENGINE MUTANT -> 0: passed, 1: an assertion failed, 2: tool error or timeout.
check() {
  local engine=$1 mut=$2
  local top="nmsa_dma_${engine}_fv"
  local stem="$build_dir/$top"
  [[ "$mut" == 0 ]] || stem+="_mutant${mut}"
  rm -f "$stem".*
  cat > "$stem.ys" <<YS
read_verilog -sv -formal rtl/mem/nmsa_fifo.sv rtl/dma/nmsa_burst_gen.sv rtl/dma/nmsa_dma_$engine.sv
read_verilog -sv -formal tests/formal/$top.sv
chparam -set Mutant $mut $top
prep -top $top
memory_map
opt -fast
async2sync
dffunmap
select -assert-min 20 t:\$assert
write_smt2 -wires $stem.smt2
YS
  if ! yosys -q -l "$stem.yosys.log" -s "$stem.ys" > /dev/null 2>&1; then
    run_msg="yosys failed, see $stem.yosys.log"
    return 2
  fi
  smtbmc_check "$stem" "$steps" "$solver_timeout" "every input sequence of $steps cycles" bmc \
    --noincr
}

failures=0
for engine in "${engines[@]}"; do
  if [[ $selftest -eq 0 ]]; then
    rc=0; check "$engine" 0 || rc=$?
    if [[ $rc -eq 0 ]]; then
      echo "PASS  formal nmsa_dma_$engine AXI4 master  ($run_msg)"
    else
      echo "FAIL  formal nmsa_dma_$engine AXI4 master  ($run_msg)"
      failures=$((failures + 1))
    fi
  else
    declare -n mutants="mutants_$engine"
    for mut in "${mutants[@]}"; do
      rc=0; check "$engine" "$mut" || rc=$?
      if [[ $rc -eq 1 ]]; then
        echo "PASS  selftest nmsa_dma_$engine mutant $mut caught  ($run_msg)"
      elif [[ $rc -eq 0 ]]; then
        echo "FAIL  selftest nmsa_dma_$engine mutant $mut survived"
        failures=$((failures + 1))
      else
        echo "FAIL  selftest nmsa_dma_$engine mutant $mut: $run_msg"
        failures=$((failures + 1))
      fi
    done
    unset -n mutants
  fi
done
if [[ $failures -ne 0 ]]; then
  echo "formal_dma.sh: $failures failure(s); outputs in $build_dir" >&2
  exit 1
fi
