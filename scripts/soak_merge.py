#!/usr/bin/env python3
"""Merges the shard files of the soak (nmsa_soak --out) into one summary.

Prints a table of the faults by type and the totals, and merges the keys `seeds`,
`cycles_simulated`, `faults_injected`, `faults_detected` and `lost_results` (and `soak`, the
details by type and configuration) into --robustness, keeping every other key of that file
(make fuzz and make coverage write theirs into the same file). Exits 1 when a shard recorded a
failure or a lost result, or when there are fewer seeds than --min-seeds.

  scripts/soak_merge.py build/soak/*.json --robustness build/bench/robustness.json
"""
import argparse
import json
import os
import sys


def merge_json(path, values):
    data = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    data.update(values)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


def add(into, counts):
    for key, value in counts.items():
        into[key] = into.get(key, 0) + value


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shards", nargs="+", help="shard files written by nmsa_soak --out")
    ap.add_argument("--robustness", help="merge the soak's keys into this JSON file")
    ap.add_argument("--min-seeds", type=int, default=0, help="fail with fewer seeds than this")
    ap.add_argument("--wall-seconds", type=float, help="wall time of the whole run, to record")
    args = ap.parse_args()

    seeds = cycles = lost = early = early_busy = 0
    injected, detected, exact, missed = {}, {}, {}, {}
    by_config = {}
    failures = []
    cpu_seconds = 0.0
    for path in args.shards:
        try:
            with open(path, encoding="utf-8") as f:
                shard = json.load(f)
            config = shard["config"]
            seeds += shard["seeds"]
            cycles += shard["cycles_simulated"]
            lost += shard["lost_results"]
            early += shard["recovered_at_irq"]
            early_busy += shard["recovered_while_busy"]
            cpu_seconds += shard["wall_seconds"]
            add(injected, shard["faults_injected"])
            add(detected, shard["faults_detected"])
            add(exact, shard["results_exact"])
            add(missed, shard["injections_missed"])
            failures += shard["failures"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"soak_merge: {path}: {e}", file=sys.stderr)
            return 2
        c = by_config.setdefault(config, {"seeds": 0, "cycles_simulated": 0})
        c["seeds"] += shard["seeds"]
        c["cycles_simulated"] += shard["cycles_simulated"]

    types = sorted(set(injected) | set(detected) | set(exact))
    print(f"{'fault':<18} {'injected':>9} {'detected':>9} {'bit-exact':>9} {'missed':>7}")
    for t in types:
        print(f"{t:<18} {injected.get(t, 0):>9} {detected.get(t, 0):>9} {exact.get(t, 0):>9} "
              f"{missed.get(t, 0):>7}")
    # `none` is no fault; a stall is tolerated (bit-exact), not detected.
    total_injected = sum(v for k, v in injected.items() if k != "none")
    total_detected = sum(detected.values())
    print(f"{'total (no none)':<18} {total_injected:>9} {total_detected:>9} "
          f"{exact.get('stall', 0):>9} {sum(missed.values()):>7}")
    print(f"recoveries by a soft reset written at the interrupt: {early} "
          f"({early_busy} while STATUS.BUSY was still 1)")
    for name, c in sorted(by_config.items()):
        print(f"  {name}: {c['seeds']} seeds, {c['cycles_simulated']} cycles")
    print(f"seeds {seeds}, cycles simulated {cycles}, lost results {lost}, failures {len(failures)}, "
          f"{cpu_seconds:.1f} s in the shards" +
          (f", {args.wall_seconds:.1f} s wall" if args.wall_seconds is not None else ""))
    for failure in failures[:20]:
        print(f"FAIL {failure['config']} seed {failure['seed']}: {failure['message']}\n"
              f"    re-run: {failure['rerun']}")

    if args.robustness:
        soak = {"faults_injected_by_type": injected, "faults_detected_by_type": detected,
                "results_exact_by_type": exact, "injections_missed_by_type": missed,
                "faults_tolerated": exact.get("stall", 0), "failures": len(failures),
                "recovered_at_irq": early, "recovered_while_busy": early_busy,
                "configs": by_config, "shard_seconds": round(cpu_seconds, 1)}
        if args.wall_seconds is not None:
            soak["wall_seconds"] = round(args.wall_seconds, 1)
        merge_json(args.robustness, {
            "seeds": seeds, "cycles_simulated": cycles, "faults_injected": total_injected,
            "faults_detected": total_detected, "lost_results": lost, "soak": soak})
    if seeds < args.min_seeds:
        print(f"soak_merge: {seeds} seeds, fewer than {args.min_seeds}", file=sys.stderr)
        return 1
    return 1 if failures or lost else 0


if __name__ == "__main__":
    sys.exit(main())
