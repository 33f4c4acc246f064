# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""syn/fpga.py: the figures of build/bench/fpga.json from result files, checked on synthetic
results whose ratios are known by hand, and the critical path named by its RTL."""

import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "syn"))
import fpga  # noqa: E402
import fpga_breakdown  # noqa: E402


def result(config, top, sparse, fmax, luts, dsps, ebr=0, memories=None, problems=None):
    util = {"TRELLIS_COMB": {"used": luts, "available": 83640},
            "MULT18X18D": {"used": dsps, "available": 156},
            "TRELLIS_FF": {"used": 2 * luts, "available": 83640}}
    if ebr:
        util["DP16KD"] = {"used": ebr, "available": 208}
    return {"target": "ecp5", "config": config, "top": top, "device": "LFE5U-85F-8BG381",
            "parameters": {"Rows": 8, "Cols": 8, "N": 2, "M": 4, "Sparse": sparse},
            "rtl_hash": "0", "fmax_mhz_median": fmax, "fmax_mhz_best": fmax + 1,
            "seeds": [{"seed": 1}], "utilization": util,
            "memories": memories if memories is not None else [
                {"memory": "nmsa_top.u_acc.mem_q", "mapped_to": "$__DP16KD_"}],
            "synth_problems": problems or []}


class BenchTest(unittest.TestCase):
    def setUp(self):
        # Inside the repository: the flow works on paths relative to it.
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        self.tmp = tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build"))
        self.dir = os.path.relpath(self.tmp.name, ROOT)
        os.makedirs(os.path.join(self.tmp.name, "fpga"))
        os.makedirs(os.path.join(self.tmp.name, "board", "icebreaker"))

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        with open(os.path.join(self.tmp.name, name), "w") as f:
            json.dump(data, f)

    def write_all(self, top_problems=None):
        self.write("fpga/ecp5-default.json",
                   result("default", "nmsa_top", 1, 100.0, 24000, 146, 107, problems=top_problems))
        self.write("fpga/ecp5-dense_only.json",
                   result("dense_only", "nmsa_top", 0, 120.0, 20000, 146, 90))
        self.write("fpga/ecp5-default-nmsa_array.json",
                   result("default", "nmsa_array", 1, 130.0, 6000, 128, memories=[]))
        self.write("fpga/ecp5-dense_only-nmsa_array.json",
                   result("dense_only", "nmsa_array", 0, 130.0, 4000, 128, memories=[]))
        self.write("board/icebreaker/summary.json",
                   {"board": "icebreaker", "device": "iCE40UP5K-SG48", "configuration": "tiny",
                    "fits": True, "fmax_mhz": 41.5})

    def bench(self):
        return fpga.bench(os.path.join(self.dir, "fpga"), os.path.join(self.dir, "board"),
                          os.path.join(self.dir, "bench", "fpga.json"))

    def test_ratios(self):
        self.write_all()
        out = self.bench()
        # Top: 256 MACs/cycle * 100 MHz / 24000 LUTs over 128 * 120 / 20000 = 1.3889.
        self.assertAlmostEqual(out["throughput_per_lut_ratio_top"], 1.3889, places=4)
        self.assertAlmostEqual(out["sparse_lut_overhead_top"], 0.2, places=4)
        # Same DSPs: the per-DSP ratio is the throughput ratio, 2 * 100 / 120.
        self.assertAlmostEqual(out["throughput_per_dsp_ratio_top"], 1.6667, places=4)
        # Array: 2 * (130 / 130) * (4000 / 6000).
        self.assertAlmostEqual(out["throughput_per_lut_ratio_array"], 1.3333, places=4)
        self.assertAlmostEqual(out["ecp5_default_lut_fraction"], 24000 / 83640, places=4)
        self.assertEqual(out["ecp5_default_dsp"], 146)
        self.assertEqual(out["ecp5_default_ebr"], 107)
        self.assertEqual(out["ice40_config"], "tiny")
        self.assertEqual(out["ice40_fmax_mhz"], 41.5)
        self.assertTrue(out["bram_mapped"])
        with open(os.path.join(self.tmp.name, "bench", "fpga.json")) as f:
            self.assertEqual(json.load(f), out)

    def test_report_names_the_seeds_and_the_unrouted_ones(self):
        r = result("default", "nmsa_top", 1, 100.0, 24000, 146, 107)
        r["seeds"] = [{"seed": 1}, {"seed": 2}]
        r["seeds_unrouted"] = [{"seed": 3, "stopped_after_s": 5400.0}]
        self.write("fpga/ecp5-default.json", r)
        md, _ = fpga.render_report(os.path.join(self.dir, "fpga"))
        with open(os.path.join(fpga.ROOT, md)) as f:
            row = [line for line in f if line.startswith("| ecp5 | default")][0]
        self.assertIn("| 1,2 (3 unrouted) |", row)

    def test_memory_in_flip_flops_is_not_bram_mapped(self):
        self.write_all(top_problems=["memory nmsa_top.u_store_q.mem_q is mapped to flip-flops"])
        self.assertFalse(self.bench()["bram_mapped"])

    def test_missing_result_names_the_command(self):
        self.write_all()
        os.remove(os.path.join(self.tmp.name, "fpga", "ecp5-dense_only.json"))
        with self.assertRaisesRegex(fpga.FlowError, "make pnr TARGET=ecp5 CONFIG=dense_only"):
            self.bench()

    def test_synthesis_only_result_is_refused(self):
        self.write_all()
        synth_only = result("dense_only", "nmsa_top", 0, 120.0, 20000, 146)
        synth_only["fmax_mhz_median"] = None
        self.write("fpga/ecp5-dense_only.json", synth_only)
        with self.assertRaisesRegex(fpga.FlowError, "no place-and-route result"):
            self.bench()


def seed_run(seed, fmax):
    return {"seed": seed, "fmax_mhz": fmax, "seconds": 60.0,
            "utilization": {"TRELLIS_COMB": {"used": int(fmax), "available": 83640}},
            "critical_path": {"from": f"seed{seed}"}, "slowest_nets": []}


class SeedSummaryTest(unittest.TestCase):
    def test_median_and_best_are_over_the_routed_seeds(self):
        s = fpga.seed_summary([seed_run(2, 120.0), {"seed": 3, "fmax_mhz": None,
                                                     "stopped_after_s": 3600.0},
                               seed_run(1, 100.0)], route_minutes=60)
        self.assertEqual(s["fmax_mhz_median"], 110.0)
        self.assertEqual(s["fmax_mhz_best"], 120.0)
        self.assertEqual([r["seed"] for r in s["seeds"]], [1, 2])
        self.assertEqual(s["seeds_unrouted"], [{"seed": 3, "stopped_after_s": 3600.0}])
        # Utilization and critical path of the lower median seed, a routed one.
        self.assertEqual(s["critical_path"], {"from": "seed1"})
        line = fpga.summary_line(dict(s, target="ecp5", config="default", top="nmsa_top",
                                      clock_constraint_mhz=125.0))
        self.assertIn("seeds 1,2, seed 3 unrouted after 3600 s", line)

    def test_no_routed_seed_is_an_error(self):
        with self.assertRaisesRegex(fpga.FlowError, "no seed routed within 5 minutes"):
            fpga.seed_summary([{"seed": 1, "fmax_mhz": None, "stopped_after_s": 300.0}], 5)

    def test_a_seed_past_its_limit_is_stopped(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build")) as tmp:
            slow = os.path.join(tmp, "slow_router")
            with open(slow, "w") as f:
                f.write("#!/bin/sh\nsleep 30\n")
            os.chmod(slow, 0o755)
            real_tool = fpga.tool
            fpga.tool = lambda name: slow
            try:
                base = os.path.relpath(os.path.join(tmp, "top"), ROOT)
                r = fpga.pnr_one("ecp5", "ecp5", base + ".json", {}, 125.0, 7, base, True, False,
                                 1, limit_s=0.5)
            finally:
                fpga.tool = real_tool
        self.assertEqual(r["seed"], 7)
        self.assertIsNone(r["fmax_mhz"])
        self.assertLess(r["stopped_after_s"], 30)


class CollectTest(unittest.TestCase):
    """syn/fpga.py collect: a result from finished nextpnr reports, only for the netlist they
    were placed from."""

    def setUp(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        self.tmp = tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build"))
        self.dir = os.path.relpath(self.tmp.name, ROOT)
        self.work = os.path.join(self.tmp.name, "work", "ecp5-default-nmsa_top")
        os.makedirs(self.work)
        self.placed = json.dumps({"modules": {"nmsa_top": {"cells": {}}}})
        self.write("nmsa_top.json", self.placed)
        self.write("nmsa_top.seed2.report.json", json.dumps({
            "fmax": {"clk": {"achieved": 118.234, "constraint": 125.0}},
            "utilization": {"TRELLIS_COMB": {"used": 23000, "available": 83640},
                            "TRELLIS_FF": {"used": 24071, "available": 83640}},
            "critical_paths": []}))
        self.fresh = self.placed
        self.saved = (fpga.synthesize, fpga.tool, fpga.tool_version)
        fpga.synthesize = self.fake_synthesize
        fpga.tool = lambda name: name
        fpga.tool_version = lambda cmd: "nextpnr-test"

    def tearDown(self):
        fpga.synthesize, fpga.tool, fpga.tool_version = self.saved
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.work, name), "w") as f:
            f.write(text)

    def fake_synthesize(self, target, config, top, which, out_dir, device=None):
        self.write("nmsa_top.json", self.fresh)
        fresh = os.path.relpath(os.path.join(self.work, "nmsa_top.json"), ROOT)
        return ({"target": target, "config": config, "top": top, "rtl_hash": "1",
                 "netlist_digest": fpga.netlist_digest(fresh),
                 "cells": {"TRELLIS_FF": 24071, "LUT4": 14000}}, fresh)

    def collect(self, seeds, merge=None):
        args = fpga.argparse.Namespace(target="ecp5", config="default", top="nmsa_top",
                                       yosys="yowasp", seeds=seeds, device=None, merge=merge)
        return fpga.collect(args, self.dir)

    def test_reads_the_finished_seeds(self):
        r = self.collect("2")
        self.assertTrue(r["collected"])
        self.assertEqual(r["fmax_mhz_median"], 118.23)
        self.assertEqual(r["clock_constraint_mhz"], 125.0)
        self.assertEqual(r["utilization"]["TRELLIS_COMB"]["used"], 23000)
        self.assertEqual(r["rtl_hash"], "1")

    def test_refuses_a_netlist_that_changed(self):
        self.fresh = json.dumps({"modules": {"nmsa_top": {"cells": {"x": {}}}}})
        with self.assertRaisesRegex(fpga.FlowError, "differs from the one placed"):
            self.collect("2")
        with open(os.path.join(self.work, "nmsa_top.json")) as f:
            self.assertEqual(f.read(), self.placed)   # the placed netlist is kept

    def test_accepts_a_netlist_whose_lines_moved(self):
        self.fresh = json.dumps({"modules": {"nmsa_top": {"cells": {},
                                                           "attributes": {"src": "a.sv:2"}}}})
        self.placed = json.dumps({"modules": {"nmsa_top": {"cells": {},
                                                            "attributes": {"src": "a.sv:1"}}}})
        self.write("nmsa_top.json", self.placed)
        self.assertEqual(self.collect("2")["fmax_mhz_best"], 118.23)

    def test_refuses_a_report_of_another_netlist(self):
        self.write("nmsa_top.seed3.report.json", json.dumps({
            "fmax": {"clk": {"achieved": 98.2, "constraint": 125.0}},
            "utilization": {"TRELLIS_FF": {"used": 24074, "available": 83640}}}))
        with self.assertRaisesRegex(fpga.FlowError, "places 24074 TRELLIS_FF where the netlist "
                                                    "has 24071: it is of another netlist"):
            self.collect("2,3")

    def published(self, digest):
        path = os.path.join(self.tmp.name, "published.json")
        with open(path, "w") as f:
            json.dump({"netlist_digest": digest, "clock_constraint_mhz": 125.0,
                       "seeds": [{"seed": s, "fmax_mhz": f, "utilization": {},
                                  "critical_path": None} for s, f in ((1, 110.0), (2, 90.0))],
                       "seeds_unrouted": []}, f)
        return os.path.relpath(path, ROOT)

    def test_merges_the_seeds_of_a_result_of_the_same_netlist(self):
        netlist = os.path.relpath(os.path.join(self.work, "nmsa_top.json"), ROOT)
        r = self.collect("2", merge=self.published(fpga.netlist_digest(netlist)))
        # Seed 2 collected now (118.23) replaces the file's seed 2; seed 1 joins from the file.
        self.assertEqual([s["seed"] for s in r["seeds"]], [1, 2])
        self.assertEqual((r["fmax_mhz_best"], r["fmax_mhz_median"]), (118.23, 114.12))

    def test_refuses_to_merge_another_netlist(self):
        with self.assertRaisesRegex(fpga.FlowError, "its seeds are of another design"):
            self.collect("2", merge=self.published("0123456789abcdef"))

    def test_refuses_a_seed_without_a_report(self):
        with self.assertRaisesRegex(fpga.FlowError, "seed 3 has no nextpnr report"):
            self.collect("2,3")


class NetlistDigestTest(unittest.TestCase):
    """netlist_digest: the same for netlists that differ only in where their cells come from."""

    def digest(self, netlist):
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=os.path.join(ROOT, "build"),
                                         delete=False) as f:
            json.dump(netlist, f)
        try:
            return fpga.netlist_digest(os.path.relpath(f.name, ROOT))
        finally:
            os.remove(f.name)

    @staticmethod
    def netlist(line, d_bit=3, creator="Yosys 0.70", depth=8, scope="u_cmd"):
        return {"creator": creator, "modules": {"nmsa_top": {
            "attributes": {"top": "1", "src": f"rtl/top/nmsa_top.sv:{line}.1-900.10"},
            "parameter_default_values": {"nmsa_pkg::CmdQueueDepth": f"{depth:032b}"},
            "cells": {
                scope: {"type": "$scopeinfo", "attributes": {
                    "cell_src": f"rtl/top/nmsa_top.sv:{line + 20}.5-266.4",
                    "module": f"$paramod$d{depth}\\nmsa_cmd",
                    "module_src": f"rtl/ctrl/nmsa_cmd.sv:{line}.1-603.10"}},
                "q_TRELLIS_FF": {"type": "TRELLIS_FF", "connections": {"DI": [d_bit], "Q": [4]},
                                 "attributes": {"src": f"rtl/ctrl/nmsa_cmd.sv:{line + 100}.3"}}},
            "netnames": {"q": {"bits": [4], "attributes": {"src": f"rtl/ctrl/nmsa_cmd.sv:{line}"}}}}}}

    def test_moved_lines_keep_the_digest_and_changed_logic_does_not(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        placed = self.digest(self.netlist(16))
        self.assertEqual(self.digest(self.netlist(17)), placed)
        self.assertNotEqual(self.digest(self.netlist(16, d_bit=5)), placed)
        self.assertNotEqual(self.digest(self.netlist(16, creator="Yosys 0.71")), placed)

    def test_parameters_nextpnr_does_not_read_keep_the_digest(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        placed = self.digest(self.netlist(16))
        # Another package constant and the instance's module hash that follows from it.
        self.assertEqual(self.digest(self.netlist(16, depth=2)), placed)
        # The hierarchy still counts: a renamed instance renames its nets too.
        self.assertNotEqual(self.digest(self.netlist(16, scope="u_cmd2")), placed)


class RestampTest(unittest.TestCase):
    """syn/fpga.py restamp: a published result carried over to RTL with the same netlist only."""

    def setUp(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        self.tmp = tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build"))
        self.results = os.path.relpath(self.tmp.name, ROOT)
        self.published = dict(result("default", "nmsa_top", 1, 116.31, 23095, 146),
                              rtl_hash="0123456789abcdef", netlist_digest="aaaa",
                              git_revision="90763d77ab5e")
        self.write(self.published)
        self.fresh_digest = "aaaa"
        self.synthesized = 0
        self.saved = fpga.synthesize
        fpga.synthesize = self.fake_synthesize

    def tearDown(self):
        fpga.synthesize = self.saved
        self.tmp.cleanup()

    def write(self, data):
        with open(os.path.join(self.tmp.name, "ecp5-default.json"), "w") as f:
            json.dump(data, f)

    def read(self):
        with open(os.path.join(self.tmp.name, "ecp5-default.json")) as f:
            return json.load(f)

    def fake_synthesize(self, target, config, top, which, out_dir, device=None):
        self.synthesized += 1
        return {"netlist_digest": self.fresh_digest, "git_revision": "1234abcd"}, "x.json"

    def restamp(self):
        fpga.restamp("build/fpga", ["ecp5-default"], results_dir=self.results)

    def test_carries_a_result_over_to_rtl_with_the_same_netlist(self):
        self.restamp()
        r = self.read()
        self.assertEqual(r["rtl_hash"], fpga.rtl_hash("default"))
        self.assertEqual(r["fmax_mhz_median"], 116.31)
        self.assertEqual(r["git_revision"], "90763d77ab5e")   # the lines its locations name
        self.assertEqual([(e["git_revision"], e["rtl_hash"]) for e in r["restamped"]],
                         [("1234abcd", fpga.rtl_hash("default"))])
        self.restamp()    # now current: not synthesized again
        self.assertEqual(self.synthesized, 1)

    def test_refuses_a_changed_netlist_and_keeps_the_result(self):
        self.fresh_digest = "bbbb"
        with self.assertRaisesRegex(fpga.FlowError, "another netlist"):
            self.restamp()
        self.assertEqual(self.read(), self.published)

    def test_refuses_a_result_without_a_digest(self):
        del self.published["netlist_digest"]
        self.write(self.published)
        with self.assertRaisesRegex(fpga.FlowError, "no netlist digest"):
            self.restamp()
        self.assertEqual(self.synthesized, 0)


class ModuleBreakdownTest(unittest.TestCase):
    """module_breakdown: the own cells of every instance of a hierarchical netlist."""

    NETLIST = {"modules": {
        "SB_LUT4": {"attributes": {"blackbox": "00000000000000000000000000000001"}},
        "nmsa_top": {"attributes": {"top": "1"}, "cells": {
            "lut_a": {"type": "SB_LUT4"}, "ff_a": {"type": "SB_DFFER"},
            "u_q0": {"type": "$paramod$1\\nmsa_fifo"}, "u_q1": {"type": "$paramod$1\\nmsa_fifo"},
            "u_pe": {"type": "$paramod$2\\nmsa_pe"}}},
        "$paramod$1\\nmsa_fifo": {"attributes": {"hdlname": "nmsa_fifo"}, "cells": {
            "lut": {"type": "SB_LUT4"}, "ff0": {"type": "SB_DFFE"}, "ff1": {"type": "SB_DFF"},
            "ram": {"type": "SB_RAM40_4K"}}},
        "$paramod$2\\nmsa_pe": {"attributes": {"hdlname": "nmsa_pe"}, "cells": {
            "mac": {"type": "SB_MAC16"}, "c": {"type": "SB_CARRY"},
            "u_mul": {"type": "$paramod$1\\nmsa_fifo"}}},
    }}

    def test_counts_each_instance_once_by_kind(self):
        rows = {r["instance"]: r for r in fpga_breakdown.module_breakdown(self.NETLIST, "nmsa_top", "ice40")}
        self.assertEqual(sorted(rows), ["nmsa_top", "u_pe", "u_pe.u_mul", "u_q0", "u_q1"])
        self.assertEqual((rows["nmsa_top"]["LUT"], rows["nmsa_top"]["FF"]), (1, 1))
        self.assertEqual(rows["u_q1"]["module"], "nmsa_fifo")
        self.assertEqual((rows["u_q1"]["FF"], rows["u_q1"]["RAM"]), (2, 1))
        self.assertEqual((rows["u_pe"]["DSP"], rows["u_pe"]["carry"], rows["u_pe"]["FF"]),
                         (1, 1, 0))   # its submodule's flops are the submodule's row
        self.assertEqual(sum(r["FF"] for r in rows.values()), 7)

    def test_table_is_largest_first_with_totals(self):
        rows = fpga_breakdown.module_breakdown(self.NETLIST, "nmsa_top", "ice40")
        table, total = fpga_breakdown.breakdown_table(rows, "ice40")
        lines = table.splitlines()
        self.assertEqual(lines[1].split()[0], "nmsa_top")   # 1 LUT, ahead of the FIFOs' 1 by name
        self.assertEqual(lines[-1].split()[1:], ["4", "7", "1", "3", "1"])
        self.assertEqual(lines[-2].split()[0], "u_pe")     # no LUT: last
        self.assertEqual(total["RAM"], 3)

    def test_unknown_top_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "no module nmsa_cmd"):
            fpga_breakdown.module_breakdown(self.NETLIST, "nmsa_cmd", "ice40")


class DeviceTest(unittest.TestCase):
    """iCE40 synthesis for the HX8K, which has no multipliers, next to the UP5K's."""

    def script(self, device):
        return fpga.synth_script("ice40", "nmsa_top", {}, ["rtl/a.sv"], "x.json", "yowasp",
                                 dsp=fpga.DEVICES[device]["dsp"])

    def test_only_a_part_with_multipliers_maps_them(self):
        self.assertIn("synth_ice40 -dsp -top nmsa_top", self.script("up5k"))
        self.assertIn("synth_ice40 -top nmsa_top", self.script("hx8k"))
        self.assertNotIn("-dsp", self.script("hx8k"))

    def test_results_of_another_device_have_their_own_file(self):
        self.assertEqual(fpga.result_path("d", "ice40", "tiny", "nmsa_top", "hx8k"),
                         os.path.join("d", "ice40-hx8k-tiny.json"))
        for device in (None, "up5k"):
            self.assertEqual(fpga.result_path("d", "ice40", "tiny", "nmsa_top", device),
                             os.path.join("d", "ice40-tiny.json"))
        self.assertEqual(fpga.result_path("d", "ecp5", "default", "nmsa_array", "ecp5"),
                         os.path.join("d", "ecp5-default-nmsa_array.json"))

    def test_device_follows_the_target(self):
        ns = fpga.argparse.Namespace
        self.assertEqual(fpga.args_device(ns(target="ice40", device=None)), "up5k")
        self.assertEqual(fpga.args_device(ns(target="ice40", device="hx8k")), "hx8k")
        self.assertEqual(fpga.args_device(ns(target="ecp5", device=None)), "ecp5")
        with self.assertRaisesRegex(fpga.FlowError, "--device hx8k is an iCE40 part"):
            fpga.args_device(ns(target="ecp5", device="hx8k"))


class CriticalPathTest(unittest.TestCase):
    def test_names_the_flops_and_their_rtl(self):
        report = {"critical_paths": [{"path": [
            {"type": "clk-to-q", "delay": 0.4, "from": {"cell": "w_q_TRELLIS_FF_Q_3"},
             "to": {"cell": "w_q_TRELLIS_FF_Q_3"}},
            {"type": "routing", "delay": 1.5, "net": "w_q[3]",
             "sources": ["rtl/core/nmsa_pe.sv:141.25-141.28"],
             "from": {"cell": "w_q_TRELLIS_FF_Q_3"}, "to": {"cell": "lut"}},
            {"type": "logic", "delay": 0.2, "from": {"cell": "lut"}, "to": {"cell": "lut"}},
            {"type": "routing", "delay": 1.0, "net": "x",
             "sources": ["/share/lattice/cells_map_trellis.v:1.1"],
             "from": {"cell": "lut"}, "to": {"cell": "p_q_TRELLIS_FF_Q_7"}},
            {"type": "setup", "delay": 0.1, "from": {"cell": "p_q_TRELLIS_FF_Q_7"},
             "to": {"cell": "p_q_TRELLIS_FF_Q_7"}}]}]}
        ff_src = "rtl/core/nmsa_pe.sv:144.3-148.6|/share/lattice/cells_map_trellis.v:63.1"
        cells = {"w_q_TRELLIS_FF_Q_3": {"attributes": {"src": ff_src}},
                 "p_q_TRELLIS_FF_Q_7": {"attributes": {"src": "rtl/core/nmsa_pe.sv:167.3-170.6"}}}
        cp = fpga.critical_path(report, cells)
        self.assertEqual((cp["from"], cp["to"]), ("w_q", "p_q"))
        self.assertEqual(cp["from_rtl"], "rtl/core/nmsa_pe.sv:144.3-148.6")
        self.assertEqual(cp["to_rtl"], "rtl/core/nmsa_pe.sv:167.3-170.6")
        self.assertEqual(cp["rtl_sources"], ["rtl/core/nmsa_pe.sv:141.25-141.28"])
        self.assertAlmostEqual(cp["delay_ns"], 3.2)
        self.assertAlmostEqual(cp["routing_ns"], 2.5)
        self.assertIsNone(fpga.critical_path({"critical_paths": []}, cells))


class ToolVersionTest(unittest.TestCase):
    def printing(self, stdout, stderr):
        code = f"import sys; sys.stdout.write({stdout!r}); sys.stderr.write({stderr!r})"
        return fpga.tool_version([sys.executable, "-c", code])

    def test_reads_a_version_printed_on_stderr(self):
        # nextpnr prints its version on stderr: results said "unknown" while only stdout was read.
        self.assertEqual(self.printing("", "Preparing the tool\nnextpnr-0.11.1\n"),
                         "nextpnr-0.11.1")

    def test_a_version_on_stdout_wins_over_notes_on_stderr(self):
        self.assertEqual(self.printing("Yosys 0.70\n", "a warning\n"), "Yosys 0.70")

    def test_a_tool_that_is_missing_or_silent_is_unknown(self):
        self.assertEqual(self.printing("", ""), "unknown")
        self.assertEqual(fpga.tool_version(["/nonexistent/nmsa-tool", "--version"]), "unknown")


if __name__ == "__main__":
    unittest.main()
