# Sourced by the formal scripts (formal.sh, formal_fifo.sh, formal_axil.sh, formal_dma.sh): one
# yosys-smtbmc run and its verdict.
#
#   smtbmc_check STEM STEPS TIMEOUT PASS_MSG [MODE [SMTBMC_OPTION...]]
#
# MODE bmc (default) or induction (yosys-smtbmc -i: the induction step of a STEPS-step temporal
# induction; the base case is a bmc run of the same STEPS, which the caller runs too).
# Checks STEM.smt2 for STEPS steps with z3 (--unroll: z3 can stall for minutes on smtbmc's default
# uninterpreted-function encoding; unrolled it takes seconds), log in STEM.smtbmc.log, a
# counterexample in STEM.cex.vcd. Returns 0 when every assertion holds (run_msg = PASS_MSG), 1
# when one fails (run_msg names it and the counterexample), 2 on a timeout or a tool error.
# Options after MODE go to yosys-smtbmc as they are (the DMA proof passes --noincr: z3 solves each
# step from scratch several times faster than incrementally on that model).
smtbmc_check() {
  local stem=$1 steps=$2 limit=$3 pass_msg=$4 mode=${5:-bmc}
  shift $(( $# < 5 ? $# : 5 ))
  local rc=0 mode_flags=()
  case "$mode" in
    bmc)       ;;
    induction) mode_flags=(-i) ;;
    *)         run_msg="smtbmc_check: unknown mode '$mode'"; return 2 ;;
  esac
  timeout "$limit" yosys-smtbmc -s z3 --unroll "${mode_flags[@]}" "$@" -t "$steps" \
    --dump-vcd "$stem.cex.vcd" "$stem.smt2" > "$stem.smtbmc.log" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]] && grep -q 'Status: PASSED' "$stem.smtbmc.log"; then
    run_msg="$pass_msg"
    return 0
  elif [[ $rc -eq 1 ]] && grep -q 'Assert failed in' "$stem.smtbmc.log"; then
    # "Assert failed in top: file:line.col-line.col ($assert...)" -> "file:line", the end line:
    # Yosys starts the span of an assert after the statement before it, often a line earlier.
    local where
    where="$(grep -m1 -oE 'Assert failed in [^:]+: [^:]+:[0-9.]+-[0-9]+' "$stem.smtbmc.log" \
      | sed -E 's/^Assert failed in [^:]+: ([^:]+):[0-9.]+-([0-9]+)$/\1:\2/')"
    run_msg="assertion $where failed, counterexample $stem.cex.vcd"
    return 1
  elif [[ $rc -eq 124 ]]; then
    run_msg="solver timeout after ${limit} s, see $stem.smtbmc.log"
    return 2
  fi
  run_msg="yosys-smtbmc exit $rc, see $stem.smtbmc.log"
  return 2
}
