#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""The module parameters of a named configuration of rtl/configs.json, for one tool.

    scripts/rtl_config.py [--format verilator|cmake|yosys|json] NAME MODULE
    scripts/rtl_config.py --list

Prints the parameters that MODULE (nmsa_top, nmsa_array, ...) has, with the values of
configuration NAME: `-GRows=8 -GCols=8 ...` for Verilator (as a CMake list with --format cmake),
`-set Rows 8 -set Cols 8 ...` for Yosys' chparam, or a JSON object. --list prints the configuration names, one per line. The one
place where configuration keys become parameters (CMake, lint, synthesis and the FPGA flow use it).
"""
import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Parameters of type bit: Verilator wants a 1-bit value for them.
BIT_PARAMS = {"Sparse", "BlockRamFifos"}

# Configuration keys and the parameters they set; every configuration has every key.
KEYS = {
    "rows": "Rows", "cols": "Cols", "n": "N", "m": "M", "data_w": "DataW", "acc_w": "AccW",
    "axi_data_w": "AxiDataW", "act_entries": "ActEntries", "wgt_records": "WgtRecords",
    "epi_entries": "EpiEntries", "acc_entries": "AccEntries", "sparse": "Sparse",
    "epi_lanes": "EpiLanes", "queue_depth": "QueueDepth", "fetch_chunk_cmds": "FetchChunkCmds",
    "fetch_chunks": "FetchChunks", "pending_loads": "PendingLoads", "read_requests": "ReadRequests",
    "block_ram_fifos": "BlockRamFifos", "counter_w": "CounterW",
}


class ConfigError(Exception):
    pass


def load_configs():
    path = os.path.join(ROOT, "rtl", "configs.json")
    try:
        with open(path) as f:
            cfgs = json.load(f)["configs"]
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"cannot read configurations from rtl/configs.json: {e}")
    for name, cfg in cfgs.items():
        missing = sorted(set(KEYS) - set(cfg))
        extra = sorted(set(cfg) - set(KEYS))
        if missing or extra:
            raise ConfigError(f"configuration {name!r} in rtl/configs.json: "
                              + (f"lacks {missing}" if missing else f"has unknown keys {extra}"))
    return cfgs


def rtl_files():
    """The accelerator's files, the board files and the board tops."""
    files = []
    for lst in ("rtl/files.f", "rtl/board/files.f"):
        path = os.path.join(ROOT, lst)
        if os.path.exists(path):
            with open(path) as f:
                files += [l.strip() for l in f if l.strip() and not l.strip().startswith("//")]
    files += sorted(os.path.relpath(p, ROOT)
                    for p in glob.glob(os.path.join(ROOT, "rtl", "board", "*", "*_top.sv")))
    return files


def module_parameters(module):
    """The parameter names of `module`, from its header in the files of rtl/files.f."""
    for rel in rtl_files():
        with open(os.path.join(ROOT, rel)) as f:
            text = f.read()
        header = re.search(r"^\s*module\s+" + re.escape(module) + r"\s*#\s*\((.*?)\)\s*\(",
                           text, re.S | re.M)
        if header:
            return re.findall(r"parameter\s+(?:int\s+unsigned\s+|int\s+|bit\s+|logic\s+)?(\w+)\s*=",
                              header.group(1))
    raise ConfigError(f"no module {module!r} with parameters in the RTL file lists")


def parameters(name, module):
    cfgs = load_configs()
    if name not in cfgs:
        raise ConfigError(f"no configuration {name!r} in rtl/configs.json (have {', '.join(cfgs)})")
    have = set(module_parameters(module))
    return {KEYS[k]: int(v) for k, v in cfgs[name].items() if KEYS[k] in have}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("verilator", "cmake", "yosys", "json"),
                        default="verilator")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("name", nargs="?")
    parser.add_argument("module", nargs="?")
    args = parser.parse_args(argv)
    try:
        if args.list:
            print("\n".join(load_configs()))
            return 0
        if not args.name or not args.module:
            parser.error("NAME and MODULE are required")
        params = parameters(args.name, args.module)
    except ConfigError as e:
        print(f"rtl_config.py: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(params))
    elif args.format == "yosys":
        print(" ".join(f"-set {k} {v}" for k, v in params.items()))
    else:
        options = [f"-G{k}=1'b{v}" if k in BIT_PARAMS else f"-G{k}={v}" for k, v in params.items()]
        print((";" if args.format == "cmake" else " ").join(options))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
