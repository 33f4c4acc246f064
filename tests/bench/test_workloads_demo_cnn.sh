#!/usr/bin/env bash
# nmsa_bench_workloads --demo-report: the CNN figures of make demo's report.json land in
# workloads.json under the cnn_* keys, as the report has them; without a report they are null and
# the file says why.
# Usage: test_workloads_demo_cnn.sh PATH/TO/nmsa_bench_workloads SAMPLE_REPORT_DIR WORK_DIR
set -euo pipefail
bench=$1
sample=$2
work=$3
mkdir -p "$work"
"$bench" --config large --no-rtl-sample --demo-report "$sample/report.json" \
  --out "$work/with_report.json" > /dev/null
"$bench" --config large --no-rtl-sample --demo-report "$work/no_such_report.json" \
  --out "$work/without_report.json" > /dev/null
python3 - "$sample/report.json" "$work/with_report.json" "$work/without_report.json" <<'PY'
import json, sys
report, got, missing = (json.load(open(p)) for p in sys.argv[1:4])
cnn = report["second_model"]
ok = True
for ours, theirs in [("cnn_dense_fp32_accuracy", "dense_fp32_accuracy"),
                     ("cnn_sparse_int8_accuracy", "sparse_int8_accuracy"),
                     ("cnn_effective_speedup", "effective_speedup"),
                     ("cnn_fallback_cycle_share", "fallback_cycle_share")]:
    if got[ours] != cnn[theirs] or got[ours] is None:
        print("%s = %s, the report has %s" % (ours, got[ours], cnn[theirs]))
        ok = False
    if missing[ours] is not None:
        print("%s = %s without a report" % (ours, missing[ours]))
        ok = False
if "run make demo first" not in missing["cnn_figures_from"]:
    print("no reason for the missing figures: %r" % missing["cnn_figures_from"])
    ok = False
if not any(l["family"] == "cnn" for l in got["layers"]):
    print("no CNN layers in the production table")
    ok = False
print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
sys.exit(0 if ok else 1)
PY
