#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""Writes copies of the RTL files that tests/mutants/mutants.json plants bugs in.

Every bug is guarded by its plusarg (+nmsa_mutant_<name>), so one Verilated model holds them all
and, run without plusargs, behaves exactly as the real RTL. A 'from' text that is not found exactly
once fails the script: a mutant that silently stops applying would make its test meaningless.

Writes OUT_DIR/<basename> for each file a mutant changes.
"""

import json
import os
import sys

USAGE = "usage: make_mutants.py SPEC OUT_DIR"


def guard(name):
    return '(1\'($test$plusargs("nmsa_mutant_%s")))' % name


def main():
    if len(sys.argv) != 3:
        sys.exit(USAGE)
    spec_path, out_dir = sys.argv[1], sys.argv[2]
    # tests/mutants/mutants.json names its files relative to the repository root.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(spec_path))))
    with open(spec_path) as f:
        mutants = json.load(f)["mutants"]
    texts = {}
    for m in mutants:
        path = m["file"]
        if path not in texts:
            with open(os.path.join(root, path)) as f:
                texts[path] = f.read()
        hits = texts[path].count(m["from"])
        if hits != 1:
            sys.exit("make_mutants.py: mutant %s: its 'from' text occurs %d times in %s (needs "
                     "exactly 1)" % (m["name"], hits, path))
        texts[path] = texts[path].replace(m["from"], m["to"].replace("MUTANT", guard(m["name"])))
    os.makedirs(out_dir, exist_ok=True)
    for path, text in texts.items():
        with open(os.path.join(out_dir, os.path.basename(path)), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
