# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""The FPGA results page of `syn/fpga.py report` (make fpga-report): one table row per result
file of build/fpga, with each result's memory mappings, as Markdown and HTML."""

import html
import json
import os
import re


def fmt(v, digits=1):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def render(root, out_dir, devices):
    """index.md and index.html from every result file in root/out_dir; devices: the flow's
    DEVICES, to name the part a synthesis-only result is for. ValueError when there is none."""
    results = []
    for name in sorted(os.listdir(os.path.join(root, out_dir))):
        if re.match(r"^(ecp5|ice40|generic)-[\w-]+\.json$", name):
            try:
                with open(os.path.join(root, out_dir, name)) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and "target" in data and "top" in data:
                results.append(data)
    if not results:
        raise ValueError(f"no result files in {out_dir} (run make synth or make pnr first)")
    rows = []
    for r in results:
        util = r.get("utilization", {})
        def used(kind):
            v = util.get(kind)
            return f"{v['used']} / {v['available']}" if v else "-"
        luts = used("TRELLIS_COMB") if r["target"] == "ecp5" else used("ICESTORM_LC")
        dsps = used("MULT18X18D") if r["target"] == "ecp5" else used("ICESTORM_DSP")
        brams = used("DP16KD") if r["target"] == "ecp5" else used("ICESTORM_RAM")
        cp = r.get("critical_path") or {}
        seeds = ",".join(str(x["seed"]) for x in r.get("seeds", [])) or "-"
        if r.get("seeds_unrouted"):
            seeds += " (" + ",".join(str(x["seed"]) for x in r["seeds_unrouted"]) + " unrouted)"
        synth_for = devices.get(r.get("synth_device") or "", {}).get("name", "-")
        rows.append([r["target"], r["config"], r["top"], r.get("device", synth_for),
                     fmt(r.get("fmax_mhz_median")), fmt(r.get("fmax_mhz_best")), seeds,
                     fmt(r.get("clock_constraint_mhz"), 0), luts, dsps, brams,
                     f"{cp.get('from', '-')} ({cp.get('from_rtl') or '?'}) → "
                     f"{cp.get('to', '-')} ({cp.get('to_rtl') or '?'})" if cp else "-",
                     r.get("yosys", "-").split(" (")[0], r.get("git_revision", "-")])
    head = ["target", "config", "top", "device", "Fmax median (MHz)", "Fmax best (MHz)", "seeds",
            "constraint (MHz)", "LUT4", "DSP", "EBR/BRAM", "critical path", "synthesis", "revision"]
    md = ["# nmsa FPGA results", "",
          "Every figure comes from a run of `make synth` / `make pnr` (syn/fpga.py); out-of-context "
          "runs place and route the module without its I/O.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    md.append("")
    for r in results:
        if r.get("memories"):
            md.append(f"## Memories of {r['target']} {r['config']} {r['top']}")
            md.append("")
            md += [f"- `{m['memory']}`: {m['mapped_to']}" for m in r["memories"]]
            md.append("")
    with open(os.path.join(root, out_dir, "index.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>\n"
                    for row in rows)
    page = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>nmsa FPGA results</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #999;padding:4px 8px;font-size:13px}th{background:#eee}"
            "</style></head><body><h1>nmsa FPGA results</h1><p>Every figure comes from a run of "
            "<code>make synth</code> / <code>make pnr</code>; out-of-context runs place and route "
            "the module without its I/O.</p><table><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>\n" + cells
            + "</table></body></html>\n")
    with open(os.path.join(root, out_dir, "index.html"), "w") as f:
        f.write(page)
    return os.path.join(out_dir, "index.md"), os.path.join(out_dir, "index.html")
