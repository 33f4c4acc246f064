#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""The code and functional coverage summary of make coverage (docs/verification.md).

Reads a verilator_coverage data file (merged from every test process), drops the points that
tests/coverage/exclusions.txt excludes, and prints line and toggle coverage of rtl/ in total and
per module. With --bins and --testplan, also counts the functional bins of docs/testplan.md that
the tests hit, and names every one that was not. Writes the figures to --json and merges the
coverage keys into --robustness (other tools own the other keys of that file).

A point counts once however many model instances and configurations share it: the key without
the instance path (file, line, column, kind, signal) identifies it. Branch coverage is the line
points on the arms of an if or case (Verilator 5.006 has no branch coverage of its own).
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

# Verilator 5.006 pages: v_line (blocks) and v_branch (if/else and case arms) come from
# --coverage-line, v_toggle from --coverage-toggle; v_user (cover properties) counts as line.
LINE_PAGES = ("v_line", "v_branch", "v_user")
TOGGLE_PAGES = ("v_toggle",)
# The line points on an arm of an if or case (the others are plain blocks): branch coverage.
BRANCH_COMMENTS = ("if", "else", "elsif", "case")
KINDS = ("line", "branch", "toggle")
EXCLUSION_KINDS = ("line", "toggle", "all")


def parse_key(key):
    """The fields of one coverage key: \\001name\\002value pairs."""
    fields = {}
    for part in key.split("\001"):
        if "\002" in part:
            name, value = part.split("\002", 1)
            fields[name] = value
    return fields


def read_points(dat_path, root):
    """{(kind, module, file, line, column, comment): count} for the points in files under root."""
    points = defaultdict(int)
    pattern = re.compile(r"^C '(.*)' (\d+)$")
    with open(dat_path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            m = pattern.match(raw.rstrip("\n"))
            if not m:
                continue
            fields = parse_key(m.group(1))
            page, _, module = fields.get("page", "").partition("/")
            # One module whatever its parameters: Verilator names a parameterized copy
            # <module>__<parameters> (nmsa_fifo__W9_D4, nmsa_array__pi7).
            module = module.split("__")[0]
            if page in LINE_PAGES:
                kind = "line"
            elif page in TOGGLE_PAGES:
                kind = "toggle"
            else:
                continue
            path = os.path.relpath(os.path.realpath(fields.get("f", "")), root)
            if path.startswith(".."):
                continue
            point = (kind, module, path, int(fields.get("l", 0)), int(fields.get("n", 0)),
                     fields.get("o", ""))
            points[point] += int(m.group(2))
    return points


def read_exclusions(path, root):
    """[(file, first, last, kind, reason)] from lines '<file>:<first>[-<last>] <kind> <reason>'."""
    exclusions = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(\S+):(\d+)(?:-(\d+))?\s+(\S+)\s+(\S.*)$", line)
            if not m or m.group(4) not in EXCLUSION_KINDS:
                sys.exit(f"{path}:{number}: expected '<file>:<first>[-<last>] "
                         f"<{'|'.join(EXCLUSION_KINDS)}> <reason>', got: {line}")
            file, first, last = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
            if not (Path(root) / file).is_file():
                sys.exit(f"{path}:{number}: no file {file}")
            exclusions.append((file, first, last, m.group(4), m.group(5)))
    return exclusions


def excluded_by(point, exclusions):
    kind, _, file, line, _, _ = point
    for index, (efile, first, last, ekind, _) in enumerate(exclusions):
        if efile == file and first <= line <= last and ekind in (kind, "all"):
            return index
    return None


def summarize(points, exclusions, scope):
    """Per-module and total figures of the points whose file lies under `scope`."""
    modules = defaultdict(lambda: {kind: [0, 0] for kind in KINDS})
    used = [0] * len(exclusions)
    missed = []
    for point, count in sorted(points.items()):
        kind, module, file, line, _, comment = point
        if not file.startswith(scope):
            continue
        index = excluded_by(point, exclusions)
        if index is not None:
            used[index] += 1
            continue
        kinds = [kind] + (["branch"] if kind == "line" and comment in BRANCH_COMMENTS else [])
        for counted in kinds:
            modules[module][counted][1] += 1
            modules[module][counted][0] += count > 0
        if count == 0 and kind == "line":
            missed.append(f"{file}:{line} {module} {comment}".rstrip())
    total = {kind: [0, 0] for kind in KINDS}
    for figures in modules.values():
        for kind in total:
            total[kind][0] += figures[kind][0]
            total[kind][1] += figures[kind][1]
    stale = [exclusions[i] for i, n in enumerate(used) if n == 0]
    return total, dict(modules), missed, stale, sum(used)


def fraction(hit_total):
    hit, total = hit_total
    return hit / total if total else None


def percent(hit_total):
    value = fraction(hit_total)
    return "   n/a" if value is None else f"{100 * value:6.2f}%"


def testplan_bins(testplan):
    """The functional bins the testplan's tables name (`bin: ` and the name, in backticks)."""
    rows = [line for line in Path(testplan).read_text(encoding="utf-8").splitlines()
            if line.startswith("|")]
    return sorted(set(re.findall(r"`bin: ([^`]+)`", "\n".join(rows))))


def read_bins(paths):
    hits = defaultdict(int)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                count, _, name = raw.rstrip("\n").partition("\t")
                if name:
                    hits[name] += int(count)
    return hits


def merge_json(path, values):
    data = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    data.update(values)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dat", help="merged coverage data (verilator_coverage --write)")
    ap.add_argument("--root", required=True, help="repository root")
    ap.add_argument("--scope", default="rtl/", help="files counted, relative to the root")
    ap.add_argument("--exclusions", required=True)
    ap.add_argument("--testplan", help="docs/testplan.md: the functional bins to hit")
    ap.add_argument("--bins", nargs="*", default=[], help="bins-<pid>.txt files of the tests")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--robustness", help="merge the coverage keys into this JSON file")
    ap.add_argument("--missed", help="write every uncovered line point here")
    args = ap.parse_args()

    root = os.path.realpath(args.root)
    points = read_points(args.dat, root)
    exclusions = read_exclusions(args.exclusions, root)
    total, modules, missed, stale, excluded = summarize(points, exclusions, args.scope)
    if total["line"][1] == 0:
        sys.exit(f"coverage: no line points of {args.scope} in {args.dat}")

    print(f"coverage of {args.scope} ({excluded} points excluded by {len(exclusions)} "
          f"exclusions, {os.path.relpath(args.exclusions, root)})")
    print(f"  {'module':<20}" + "".join(f" {kind:>8} {'(points)':>13}" for kind in KINDS))
    for name, fig in sorted(modules.items()) + [("total", total)]:
        print(f"  {name:<20}" + "".join(
            f" {percent(fig[kind])} {fig[kind][0]:>6}/{fig[kind][1]:<6}" for kind in KINDS))
    line = fraction(total["line"])
    print(f"  line coverage target 95%: {'met' if line >= 0.95 else 'MISSED'}")
    for file, first, last, kind, reason in stale:
        print(f"  stale exclusion (matches no point): {file}:{first}-{last} {kind} {reason}")

    figures = {"line_coverage": round(line, 4)}
    for kind in ("branch", "toggle"):
        value = fraction(total[kind])
        figures[f"{kind}_coverage"] = None if value is None else round(value, 4)
    report = {"scope": args.scope, "total": total, "modules": modules,
              "excluded_points": excluded, "exclusions": len(exclusions),
              "stale_exclusions": [f"{f}:{a}-{b}" for f, a, b, _, _ in stale]}
    if args.testplan:
        wanted = testplan_bins(args.testplan)
        hits = read_bins(args.bins)
        not_hit = [b for b in wanted if hits.get(b, 0) == 0]
        print(f"  functional bins of the testplan hit: {len(wanted) - len(not_hit)}/{len(wanted)}")
        for name in not_hit:
            print(f"    not hit: {name}")
        figures["testplan_bins_hit"] = len(wanted) - len(not_hit)
        figures["testplan_bins_total"] = len(wanted)
        report["bins_not_hit"] = not_hit
    report.update(figures)
    if args.missed:
        Path(args.missed).write_text("".join(m + "\n" for m in missed), encoding="utf-8")
    if args.json:
        merge_json(args.json, report)
    if args.robustness:
        merge_json(args.robustness, figures)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
