#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""docs/testplan.md names only tests and bins that exist.

Every name in the tests column of the testplan's tables (a CTest name, `*` for any text) must
match at least one test of the build (ctest --show-only=json-v1 in the build directory), and every
bin (`bin: <name>`) must be hit somewhere in the RTL tests (a `hit("<name>"` in tests/rtl/).

Usage: check_testplan.py TESTPLAN TEST_SOURCE_DIR --build-dir BUILD_DIR
       check_testplan.py TESTPLAN TEST_SOURCE_DIR --tests-from FILE   (one test name a line)
"""
import argparse
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path


def plan_rows(testplan):
    """(line number, tests cell, bins cell) of every table row of the testplan's four columns."""
    rows = []
    for number, line in enumerate(Path(testplan).read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or set(cells[0]) <= set("-") \
                or cells[0] == "feature":
            continue
        rows.append((number, cells[2], cells[3]))
    return rows


def ctest_names(build_dir):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, check=True,
                         capture_output=True, text=True).stdout
    # A parameterized test's name ends in "  # GetParam() = ..." (gtest_discover_tests); the
    # plan names the test without it.
    return [t["name"].split("  #")[0] for t in json.loads(out)["tests"]]


def bins_hit_in_sources(source_dir):
    names = set()
    for path in Path(source_dir).rglob("*.cpp"):
        names |= set(re.findall(r'\bhit\("([^"]+)"', path.read_text(encoding="utf-8")))
        # Bins built from a prefix and the name the device reports: hit("error " + name).
        names |= {p + "*" for p in re.findall(r'\bhit\("([^"]+)" \+', path.read_text(encoding="utf-8"))}
    return names


def check(testplan, tests, source_dir):
    errors = []
    bins_in_sources = bins_hit_in_sources(source_dir)
    rows = plan_rows(testplan)
    if not rows:
        errors.append(f"{testplan}: no table rows with four columns")
    for number, tests_cell, bins_cell in rows:
        for pattern in re.findall(r"`([^`]+)`", tests_cell):
            if not fnmatch.filter(tests, pattern):
                errors.append(f"{testplan}:{number}: no test matches `{pattern}`")
        for name in re.findall(r"`bin: ([^`]+)`", bins_cell):
            if name not in bins_in_sources and not any(
                    fnmatch.fnmatchcase(name, p) for p in bins_in_sources if p.endswith("*")):
                errors.append(f"{testplan}:{number}: no test hits bin `{name}`")
    return len(rows), errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("testplan")
    ap.add_argument("source_dir", help="the tests that hit the bins (tests/rtl)")
    names = ap.add_mutually_exclusive_group(required=True)
    names.add_argument("--build-dir", help="the tests are this build's CTest tests")
    names.add_argument("--tests-from", help="the tests are the lines of this file")
    args = ap.parse_args()
    if args.tests_from:
        tests = Path(args.tests_from).read_text(encoding="utf-8").split("\n")
    else:
        tests = ctest_names(args.build_dir)
    rows, errors = check(args.testplan, [t for t in tests if t], args.source_dir)
    for e in errors:
        print("FAIL", e)
    print(f"testplan: {rows} features checked against {len(tests)} tests, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
