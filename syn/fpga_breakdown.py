# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""Where the cells of a design go: the cells of every instance of a netlist that Yosys wrote
without flattening (syn/fpga.py modules, make synth-modules; docs/fpga.md)."""

# Cell kinds of a per-module breakdown: (column, cell types or type prefixes ending in "*").
MODULE_KINDS = {
    "ice40": (("LUT", ("SB_LUT4",)), ("FF", ("SB_DFF*",)), ("carry", ("SB_CARRY",)),
              ("RAM", ("SB_RAM40_4K", "SB_SPRAM256KA")), ("DSP", ("SB_MAC16",))),
    "ecp5": (("LUT", ("LUT4",)), ("FF", ("TRELLIS_FF",)), ("carry", ("CCU2C",)),
             ("LUTRAM", ("TRELLIS_DPR16X4",)), ("RAM", ("DP16KD", "PDPW16KD")),
             ("DSP", ("MULT18X18D", "ALU54B"))),
}


def module_breakdown(netlist, top, target):
    """The cells of every instance of a netlist synthesized without flattening: one row per
    instance path (its own cells, not its submodules'), counted by MODULE_KINDS[target]."""
    kinds = MODULE_KINDS[target]

    def kind_of(cell_type):
        for column, types in kinds:
            if any(cell_type == t or (t.endswith("*") and cell_type.startswith(t[:-1]))
                   for t in types):
                return column
        return None

    # Library cells are modules of the netlist too, marked as black or white boxes.
    modules = {name: m for name, m in netlist["modules"].items()
               if not any(int(m.get("attributes", {}).get(box, "0"), 2)
                          for box in ("blackbox", "whitebox"))}
    rows = []

    def walk(path, module):
        counts = {column: 0 for column, _ in kinds}
        children = []
        for name, cell in modules[module].get("cells", {}).items():
            if cell["type"] in modules:
                children.append((f"{path}.{name}" if path else name, cell["type"]))
            elif kind_of(cell["type"]):
                counts[kind_of(cell["type"])] += 1
        attrs = modules[module].get("attributes", {})
        rows.append({"instance": path or top,
                     "module": attrs.get("hdlname", module.split("\\")[-1]), **counts})
        for child_path, child in sorted(children):
            walk(child_path, child)

    if top not in modules:
        raise ValueError(f"the netlist has no module {top}")
    walk("", top)
    return rows


def breakdown_table(rows, target):
    """The rows as a table, largest LUT count first (instances without cells left out), and
    the total of each column."""
    columns = [c for c, _ in MODULE_KINDS[target]]
    total = {c: sum(r[c] for r in rows) for c in columns}
    lines = [f"{'instance':52s} {'module':18s} " + " ".join(f"{c:>6s}" for c in columns)]
    for r in sorted(rows, key=lambda r: (-r[columns[0]], r["instance"])):
        if any(r[c] for c in columns):
            lines.append(f"{r['instance'][:52]:52s} {r['module'][:18]:18s} "
                         + " ".join(f"{r[c]:6d}" for c in columns))
    lines.append(f"{'total':52s} {'':18s} " + " ".join(f"{total[c]:6d}" for c in columns))
    return "\n".join(lines), total
