#!/usr/bin/python3
"""The names the docs give the device's interface exist, with the values the docs state.

Every all-caps identifier in backticks in docs/*.md and README.md must be a register, a field, a
performance counter (bare, _LO or _HI), an error code or another enum value of
rtl/regs/nmsa_regs.json (the source of the generated register package), a command flag or field
of docs/isa.md that the ISA header defines, a runtime enum of sw/graph/include/nmsa/runtime.hpp,
or one of the few build, tool and FPGA names listed below. `REG.FIELD` must name a field of that
register. Every error-code table row (`| 7 | `BAD_ALIGN` |`) must give the code's value.

Usage: check_doc_names.py REPO_ROOT
"""
import json
import re
import sys
from pathlib import Path

# Names the docs use that are not part of the device interface: make and environment variables,
# FPGA primitives and their parameters, placeholders in command lines.
OTHER_NAMES = {
    "ALLOW_TIMING_FAIL", "BAUD", "BOARD", "CABGA381", "CONFIG", "DEMO_ARGS", "DEVICE", "DIR", "DNMSA_FUZZ_RTL_ASAN", "DNMSA_NATIVE",
    "EHXPLLL", "FINDING", "FUZZ_CASES", "FUZZ_RTL_SECONDS", "FUZZ_SECONDS", "JOBS", "NAME", "NMSA_COVERAGE", "NMSA_COVERAGE_DIR", "NMSA_ECP5_DSP",
    "NMSA_FUZZ_RTL_BREAK_BOUND", "NMSA_FUZZ_RTL_BREAK_GOLDEN", "NMSA_FUZZ_RTL_CONFIG", "NMSA_FUZZ_RTL_GOLDEN_EVERY",
    "NMSA_BENCH_CONFIGS", "NMSA_NATIVE", "NMSA_PLUSARGS", "NMSA_SEED", "NMSA_WAVES_DIR", "NMSA_X_SEED", "OFF", "REG_INPUTA", "REG_OUTPUT_CLK", "ROUTE_MINUTES", "SB_PLL40_PAD", "SEEDS", "SLURM", "SLURM_CONF", "TARGET", "TEST", "TOP",
}
# Command flags the docs name differently from the ISA header's field (doc name -> field).
ISA_DOC_NAMES = {"INT32": "int32_output"}
IDENT = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{3,}[0-9]*\b")
DOTTED = re.compile(r"\b([A-Z][A-Z0-9_]*)\.([A-Z][A-Z0-9_]*)\b")


def main(root):
    regs_json = json.loads((root / "rtl/regs/nmsa_regs.json").read_text())
    registers = {r["name"]: {f["name"] for f in r.get("fields", [])}
                 for r in regs_json["registers"]}
    known = set(registers) | {f for fields in registers.values() for f in fields}
    for counter in regs_json["counters"]["list"]:
        known |= {counter["name"], counter["name"] + "_LO", counter["name"] + "_HI"}
    enum_values = {}
    for enum in regs_json["enums"]:
        known.add(enum["name"])
        for v in enum["values"]:
            known.add(v["name"])
            enum_values[v["name"]] = v["value"]
    # Register pairs named without _LO/_HI (CMD_BASE for CMD_BASE_LO and CMD_BASE_HI).
    known |= {r[:-3] for r in registers if r.endswith("_LO") and r[:-3] + "_HI" in registers}
    # Command flags and fields: the ISA header's names, upper-cased (pop_prev -> POP_PREV).
    isa = (root / "sw/isa/include/nmsa/isa.hpp").read_text()
    isa_flags = re.findall(r"\bbool (\w+) = ", isa)
    known |= {m.upper() for m in isa_flags}
    known |= {doc for doc, field in ISA_DOC_NAMES.items() if field in isa_flags}
    known |= set(re.findall(r"\b([A-Z][A-Z0-9_]+) = \d", isa))
    runtime = (root / "sw/graph/include/nmsa/runtime.hpp").read_text()
    for body in re.findall(r"enum class \w+ \{([^}]*)\}", runtime):
        known |= set(re.findall(r"\b([A-Z][A-Z0-9_]+)\b", re.sub(r"//[^\n]*", "", body)))

    errors = []
    docs = sorted((root / "docs").glob("*.md")) + [root / "README.md"]
    for doc in docs:
        rel = doc.relative_to(root)
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            row = re.match(r"\|\s*(\d+)\s*\|\s*`([A-Z_]+)`\s*\|", line)
            if row and row.group(2) in enum_values and int(row.group(1)) != enum_values[row.group(2)]:
                errors.append(f"{rel}:{number}: `{row.group(2)}` is {enum_values[row.group(2)]}, "
                              f"the table says {row.group(1)}")
            for token in re.findall(r"`([^`]+)`", line):
                if token.startswith("bin: "):  # a functional coverage bin (docs/testplan.md)
                    continue
                if re.match(r"nmsa_\w+: ", token):  # an RTL assertion's message, quoted
                    continue
                for reg, field in DOTTED.findall(token):
                    if reg in registers and field not in registers[reg]:
                        errors.append(f"{rel}:{number}: `{reg}.{field}`: {reg} has no field "
                                      f"{field} (fields: {', '.join(sorted(registers[reg]))})")
                for name in IDENT.findall(DOTTED.sub(lambda m: m.group(1), token)):
                    if name not in known and name not in OTHER_NAMES:
                        errors.append(f"{rel}:{number}: `{name}` names no register, field, "
                                      "counter, error code, command field or runtime enum")
    for e in errors:
        print("FAIL", e)
    checked = len(docs)
    print(f"{checked} files checked: {0 if errors else 1} passed, {1 if errors else 0} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
