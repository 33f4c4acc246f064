#!/usr/bin/env bash
# Synthesis check: Yosys 0.23 must read the RTL (rtl/files.f, read_verilog -sv) and synthesize
# nmsa_array, with the parameters of one configuration from rtl/configs.json, to a netlist with
# no latches and no structural problems (Yosys `check`). Also prints the cell counts and an
# iCE40 LUT4 estimate, as a size trend to watch rather than a target. Last, Yosys 0.23 must read
# and elaborate each board's top (rtl/board/<board>/*_top.sv with rtl/board/files.f), which the
# board builds (syn/board.sh) synthesize with a newer Yosys.
#
#   scripts/synth_check.sh [--config NAME] [BUILD_DIR]    NAME defaults to small,
#                                                         BUILD_DIR to build/synth
#
# Exit non-zero on any Yosys error, on a problem found by `check`, or on a latch in the
# netlist. Yosys warnings are listed; "Replacing memory ... with list of registers" is expected
# (Yosys turns the unpacked arrays the RTL uses inside modules into registers) and only
# counted.
#
# The iCE40 estimate runs synth_ice40 -noflatten (about 4 s): each module is mapped once, so
# there is no optimization across module boundaries and the count is an upper bound, about 6%
# above a flattened run (which takes about 45 s for `small`).
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

config=small
build_arg=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config)   [[ $# -ge 2 ]] || { echo "synth_check.sh: --config needs a name" >&2; exit 2; }
                config="$2"; shift ;;
    -h|--help)  usage; exit 0 ;;
    -*)         echo "synth_check.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *)          [[ -z "$build_arg" ]] || { echo "synth_check.sh: more than one BUILD_DIR" >&2; exit 2; }
                build_arg="$1" ;;
  esac
  shift
done

# A BUILD_DIR given on the command line is relative to the caller's directory.
if [[ -n "$build_arg" ]]; then
  mkdir -p "$build_arg"
  build_dir="$(cd "$build_arg" && pwd)"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${build_dir:-$PWD/build/synth}"
mkdir -p "$build_dir"

for tool in yosys python3; do
  command -v "$tool" >/dev/null || { echo "synth_check.sh: '$tool' not found in PATH" >&2; exit 2; }
done

source scripts/file_list.sh
read_file_list synth_check.sh rtl/files.f files
read_file_list synth_check.sh rtl/board/files.f board_files

# "-set Rows 4 -set Cols 4 ..." for chparam, and a short description of the configuration.
read -r desc chparams < <(python3 - "$config" <<'EOF'
import json, sys
name = sys.argv[1]
keys = {"rows": "Rows", "cols": "Cols", "n": "N", "m": "M", "data_w": "DataW", "acc_w": "AccW"}
try:
    cfgs = json.load(open("rtl/configs.json"))["configs"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"synth_check.sh: cannot read configurations from rtl/configs.json: {e}")
if name not in cfgs:
    sys.exit(f"synth_check.sh: no configuration {name!r} in rtl/configs.json (have {', '.join(cfgs)})")
cfg = cfgs[name]
missing = sorted(set(keys) - set(cfg))
if missing:
    sys.exit(f"synth_check.sh: configuration {name!r} in rtl/configs.json lacks {missing}")
desc = f"{name}:{cfg['rows']}x{cfg['cols']},{cfg['n']}:{cfg['m']},DataW={cfg['data_w']},AccW={cfg['acc_w']}"
print(desc, " ".join(f"-set {keys[k]} {int(cfg[k])}" for k in keys))
EOF
) || true
[[ -n "${chparams:-}" ]] || exit 2          # python3 has printed why

read_rtl="read_verilog -sv ${files[*]}"
set_params="chparam $chparams nmsa_array"

# ---------------------------------------------------------------------------------------------
# Generic synthesis
# ---------------------------------------------------------------------------------------------
cat > "$build_dir/synth.ys" <<EOF
$read_rtl
$set_params
synth -top nmsa_array
check -assert
tee -o $build_dir/stat.txt stat
flatten
tee -q -o $build_dir/stat_flat.json stat -json
EOF

start=$SECONDS
if ! yosys -q -l "$build_dir/synth.log" -s "$build_dir/synth.ys" > "$build_dir/synth.out" 2>&1; then
  echo "FAIL  synth nmsa_array ($desc): Yosys error, see $build_dir/synth.log"
  grep -E 'ERROR|problems' "$build_dir/synth.log" | sed 's/^/      /' | tail -n 20
  exit 1
fi
synth_secs=$((SECONDS - start))

cat "$build_dir/stat.txt"

# Warnings, each once; the expected mem2reg ones only counted.
warnings="$(grep -E '^Warning:|: Warning:' "$build_dir/synth.log" | sort -u || true)"
mem2reg="$(grep -c 'with list of registers' <<< "$warnings" || true)"
others="$(grep -v 'with list of registers' <<< "$warnings" || true)"
echo "Yosys warnings: $mem2reg expected (unpacked array -> registers), $(grep -c . <<< "$others" || true) other"
[[ -z "$others" ]] || sed 's/^/      /' <<< "$others"

# Summary from the flattened netlist (Yosys 0.23 garbles `stat -json` of a hierarchy).
summary="$(python3 - "$build_dir/stat_flat.json" <<'EOF'
import json, re, sys
cells = json.load(open(sys.argv[1]))["design"]["num_cells_by_type"]
total = sum(cells.values())
ffs = sum(n for t, n in cells.items() if re.search(r"DFF|^\$_FF_|^\$(a|s|ad|sd|al)?dffe?$|^\$ff$", t))
latches = sum(n for t, n in cells.items() if re.search(r"dlatch|DLATCH|^\$_SR_|^\$sr$", t, re.I))
print(total, ffs, latches)
EOF
)"
read -r total ffs latches <<< "$summary"

if [[ "$latches" -ne 0 ]]; then
  echo "FAIL  synth nmsa_array ($desc): $latches latch cell(s) in the netlist:"
  grep -iE 'DLATCH|_SR_' "$build_dir/stat.txt" | sed 's/^/      /'
  exit 1
fi
echo "PASS  synth nmsa_array ($desc): $total cells, $ffs flip-flops, 0 latches (${synth_secs} s)"

# ---------------------------------------------------------------------------------------------
# iCE40 estimate
# ---------------------------------------------------------------------------------------------
cat > "$build_dir/ice40.ys" <<EOF
$read_rtl
$set_params
synth_ice40 -noflatten -top nmsa_array
tee -q -o $build_dir/ice40_stat.txt stat
flatten
tee -q -o $build_dir/ice40_stat_flat.json stat -json
EOF

start=$SECONDS
if ! yosys -q -l "$build_dir/ice40.log" -s "$build_dir/ice40.ys" > "$build_dir/ice40.out" 2>&1; then
  echo "FAIL  synth_ice40 nmsa_array ($desc): Yosys error, see $build_dir/ice40.log"
  grep -E 'ERROR' "$build_dir/ice40.log" | sed 's/^/      /' | tail -n 20
  exit 1
fi
ice40_secs=$((SECONDS - start))
python3 - "$build_dir/ice40_stat_flat.json" "$desc" "$ice40_secs" <<'EOF'
import json, sys
cells = json.load(open(sys.argv[1]))["design"]["num_cells_by_type"]
luts = cells.get("SB_LUT4", 0)
carry = cells.get("SB_CARRY", 0)
ffs = sum(n for t, n in cells.items() if t.startswith("SB_DFF"))
print(f"INFO  synth_ice40 nmsa_array ({sys.argv[2]}): {luts} LUT4, {carry} SB_CARRY, {ffs} SB_DFF* "
      f"(hierarchical, upper bound; {sys.argv[3]} s)")
EOF

# ---------------------------------------------------------------------------------------------
# The board RTL
# ---------------------------------------------------------------------------------------------
for top_file in rtl/board/*/*_top.sv; do
  top="$(basename "$top_file" .sv)"
  script="read_verilog -sv ${files[*]} ${board_files[*]} $top_file;"
  script+=" hierarchy -check -top $top; proc; check -assert"
  if ! yosys -q -l "$build_dir/$top.log" -p "$script" > "$build_dir/$top.out" 2>&1; then
    echo "FAIL  Yosys 0.23 reads $top: see $build_dir/$top.log"
    grep -E 'ERROR|problems' "$build_dir/$top.log" | sed 's/^/      /' | tail -n 20
    exit 1
  fi
  echo "PASS  Yosys 0.23 reads and elaborates $top"
done
