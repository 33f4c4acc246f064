#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""The coverage tooling on tiny inputs whose figures are known: scripts/coverage_report.py
(percentages, merging of instances, exclusions, stale exclusions, bins, the robustness file)
and tests/coverage/check_testplan.py (a plan naming a missing test or bin fails)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "scripts/coverage_report.py"
CHECK = ROOT / "tests/coverage/check_testplan.py"


def point(file, line, page, count, hier="top.u0", comment="block"):
    key = (f"\001f\002{file}\001l\002{line}\001n\0020\001page\002{page}"
           f"\001o\002{comment}\001h\002{hier}")
    return f"C '{key}' {count}\n"


class Workspace:
    """A repository root with rtl/a.sv and tb/t.sv, and files written into it."""

    def __init__(self, tmp):
        self.root = Path(tmp)
        (self.root / "rtl").mkdir()
        (self.root / "tb").mkdir()
        (self.root / "rtl/a.sv").write_text("".join(f"// line {i}\n" for i in range(1, 11)))
        (self.root / "tb/t.sv").write_text("// harness\n")

    def write(self, name, text):
        path = self.root / name
        path.write_text(text)
        return path

    def dat(self):
        a, t = self.root / "rtl/a.sv", self.root / "tb/t.sv"
        return self.write("cov.dat", "# SystemC::Coverage-3\n" + "".join([
            point(a, 2, "v_line/m", 1),
            point(a, 3, "v_line/m", 0, hier="top.u0"),
            point(a, 3, "v_line/m", 4, hier="top.u1"),  # the same point in a second instance
            point(a, 4, "v_branch/m__W9_D4", 2, comment="if"),  # m with other parameters
            point(a, 5, "v_line/m", 0),                  # excluded below
            point(a, 6, "v_line/n", 0),
            point(a, 7, "v_toggle/m", 3, comment="sig[0]"),
            point(a, 7, "v_toggle/m", 0, comment="sig[1]"),
            point(t, 1, "v_line/tb", 0),                 # outside rtl/: not counted
        ]))

    def run_report(self, exclusions, extra=()):
        return subprocess.run(
            [sys.executable, str(REPORT), str(self.dat()), "--root", str(self.root),
             "--exclusions", str(self.write("excl.txt", exclusions)),
             "--json", str(self.root / "summary.json"), *extra],
            capture_output=True, text=True)


class CoverageReportTest(unittest.TestCase):
    def test_percentages_instances_and_exclusions(self):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(tmp)
            robustness = ws.write("robustness.json", json.dumps({"seeds": 7}))
            result = ws.run_report("# comment\nrtl/a.sv:5 line unreachable by construction\n",
                                   ["--robustness", str(robustness)])
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            summary = json.loads((ws.root / "summary.json").read_text())
            # Lines 2, 3 (hit in u1), 4 hit; 6 missed; 5 excluded: 3 of 4.
            self.assertEqual(summary["total"]["line"], [3, 4])
            self.assertEqual(summary["total"]["toggle"], [1, 2])
            self.assertEqual(summary["total"]["branch"], [1, 1])  # the if on line 4
            self.assertEqual(summary["modules"]["m"]["line"], [3, 3])
            self.assertEqual(summary["modules"]["n"]["line"], [0, 1])
            self.assertEqual(summary["excluded_points"], 1)
            merged = json.loads(robustness.read_text())
            self.assertEqual(merged, {"seeds": 7, "line_coverage": 0.75, "branch_coverage": 1.0,
                                      "toggle_coverage": 0.5})
            self.assertIn("75.00%", result.stdout)

    def test_without_the_exclusion_the_missed_point_counts(self):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(tmp)
            result = ws.run_report("")
            self.assertEqual(result.returncode, 0, result.stderr)
            summary = json.loads((ws.root / "summary.json").read_text())
            self.assertEqual(summary["total"]["line"], [3, 5])
            self.assertEqual(summary["line_coverage"], 0.6)

    def test_stale_exclusion_fails_and_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(tmp)
            result = ws.run_report("rtl/a.sv:9-10 all nothing is there\n")
            self.assertEqual(result.returncode, 1)
            self.assertIn("stale exclusion", result.stdout)
            self.assertIn("rtl/a.sv:9-10", result.stdout)

    def test_malformed_exclusion_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(tmp)
            result = ws.run_report("rtl/a.sv:5 everything\n")
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("excl.txt:1", result.stderr)

    def test_bins_of_the_testplan(self):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(tmp)
            plan = ws.write("plan.md", "| f | s | `T.x` | `bin: alpha`, `bin: beta` |\n")
            bins = ws.write("bins-1.txt", "2\talpha\n1\tnot in the plan\n")
            result = ws.run_report("", ["--testplan", str(plan), "--bins", str(bins)])
            self.assertEqual(result.returncode, 0, result.stderr)
            summary = json.loads((ws.root / "summary.json").read_text())
            self.assertEqual((summary["testplan_bins_hit"], summary["testplan_bins_total"]), (1, 2))
            self.assertEqual(summary["bins_not_hit"], ["beta"])
            self.assertIn("not hit: beta", result.stdout)


class CheckTestplanTest(unittest.TestCase):
    PLAN = ("| feature | spec | tests | bins |\n|---|---|---|---|\n"
            "| a | s | `Suite.One`, `Configs/P.Two/*` | `bin: alpha` |\n")

    def check(self, plan, tests):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "plan.md").write_text(plan)
            (root / "names.txt").write_text("\n".join(tests) + "\n")
            (root / "src").mkdir()
            (root / "src/t.cpp").write_text('coverage.hit("alpha", x);\n')
            return subprocess.run(
                [sys.executable, str(CHECK), str(root / "plan.md"), str(root / "src"),
                 "--tests-from", str(root / "names.txt")], capture_output=True, text=True)

    def test_existing_names_pass(self):
        result = self.check(self.PLAN, ["Suite.One", "Configs/P.Two/small"])
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_missing_test_fails(self):
        result = self.check(self.PLAN, ["Suite.One"])
        self.assertEqual(result.returncode, 1)
        self.assertIn("no test matches `Configs/P.Two/*`", result.stdout)

    def test_missing_bin_fails(self):
        result = self.check(self.PLAN.replace("alpha", "gamma"), ["Suite.One", "Configs/P.Two/x"])
        self.assertEqual(result.returncode, 1)
        self.assertIn("no test hits bin `gamma`", result.stdout)


if __name__ == "__main__":
    unittest.main()
