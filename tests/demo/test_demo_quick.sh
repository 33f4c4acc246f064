#!/usr/bin/env bash
# The short version of the main job (make demo): nmsa_demo --quick on the small configuration,
# then what a user relies on: the report's files, its keys and figures (bit-exact device, a
# speedup near 2:4's 2x, plausible accuracies), the page in headless Chromium, the ONNX export
# (nmsa run on it reproduces the report's accuracy), the cache (a second run trains nothing and reproduces the figures), and nmsa gate on the result.
# Usage: test_demo_quick.sh PATH/TO/nmsa_demo PATH/TO/nmsa WORK_DIR
set -uo pipefail
demo=$1
nmsa=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
check() {  # check NAME COMMAND...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

rm -rf "$work"
mkdir -p "$work"
run_demo() {  # run_demo LOG
  "$demo" --quick --out "$work/report" --cache "$work/cache" > "$1" 2>&1
}
check "demo --quick exits 0" run_demo "$work/first.log" || true
tail -25 "$work/first.log"

for f in report.json report.md index.html model.onnx cnn.onnx test_set/images.npy test_set/labels.npy; do
  check "writes $f" test -s "$work/report/$f"
done

check "report.json keys and figures" python3 - "$work/report/report.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
ok = True
def need(cond, what):
    global ok
    if not cond:
        print("  report.json:", what)
        ok = False
for k in ["dense_fp32_accuracy", "sparse_int8_accuracy", "quality_delta_pp", "effective_speedup",
          "latency_cycles_p99", "fallback_layers"]:
    need(k in r, "missing key " + k)
if not ok:
    sys.exit(1)
need(r["test_images"] == 300, "test_images %s != 300" % r["test_images"])
for k in ["dense_fp32_accuracy", "dense_int8_accuracy", "sparse_int8_accuracy"]:
    need(0.6 < r[k] <= 1.0, "%s = %s, not a trained model's" % (k, r[k]))
need(r["report_format"] == 2, "report_format %s" % r.get("report_format"))
need(abs(r["quality_delta_pp"] - 100 * (r["sparse_int8_accuracy"] - r["control_fp32_accuracy"]))
     < 1e-6, "quality_delta_pp is not the deployed model against the equally trained control")
lo, hi = r["quality_delta_ci95_pp"]
need(lo <= r["quality_delta_pp"] <= hi and hi - lo > 0, "delta interval [%s, %s]" % (lo, hi))
# Every accuracy with an interval around it; every comparison with its test and verdict.
for q in r["quality"]:
    for k in ["fp32", "int8"]:
        ci = q[k + "_ci95"]
        need(ci is not None and ci[0] <= q[k + "_accuracy"] <= ci[1],
             "%s %s: %s outside its interval %s" % (q["note"] or q["schedule"], k,
                                                     q[k + "_accuracy"], ci))
comparisons = r["quality_comparisons"]
need(len(comparisons) == 6, "%d quality comparisons, want 6" % len(comparisons))
need(comparisons[0]["delta_pp"] == r["quality_delta_pp"], "headline is not the first comparison")
for c in comparisons:
    need(0 <= c["mcnemar_p"] <= 1, "%s: McNemar p %s" % (c["name"], c["mcnemar_p"]))
    spans = c["ci95_pp"][0] <= 0 <= c["ci95_pp"][1]
    need((c["verdict"] == "no measurable difference") == spans, "%s: verdict '%s' for %s" %
         (c["name"], c["verdict"], c["ci95_pp"]))
    need(abs(c["delta_pp"] - 100.0 * (c["only_a"] - c["only_b"]) / c["images"]) < 1e-9,
         "%s: delta does not match the discordant counts" % c["name"])
v = r["validation_matrix"]
need(len(v) == 7, "%d validation rows, want 7" % len(v))
for row in v:
    need(row["owner"] and row["run"] and row["evidence"], "validation row incomplete: %s" % row)
    need(row["status"] in ("holds", "does not hold", "no measurable difference", "measured"),
         "validation status %r" % row["status"])
need(r["tags"].get("register map", "").count(".") == 2, "no register map version in the tags")
need(len(r["tags"].get("rtl hash", "")) > 0, "no RTL hash in the tags")
b = r["equal_budget"]
need(b["shapes_searched"] > 1 and 0 < b["predicted_budget_use"] <= 1,
     "equal budget: %s shapes, budget use %s" % (b["shapes_searched"], b["predicted_budget_use"]))
# 2:4 on the same multipliers: at most 2x, and the pipeline keeps it close.
need(1.5 < r["effective_speedup"] <= 2.05, "effective_speedup %s" % r["effective_speedup"])
need(r["batches"] == 6, "batches %s != 6 (300 images in batches of 50)" % r["batches"])
need(r["batches_bit_exact_golden"] == r["batches"], "RTL differs from the golden model")
need(r["batches_bit_exact_model"] == r["batches"], "RTL differs from the functional model")
need(r["latency_cycles_p50"] <= r["latency_cycles_p95"] <= r["latency_cycles_p99"],
     "percentiles out of order")
need(r["latency_cycles_p99"] < r["dense_latency_cycles_p50"], "sparse p99 not below dense p50")
need(len(r["layers"]) == 3, "%d layers" % len(r["layers"]))
need(isinstance(r["fallback_layers"], list), "fallback_layers is not a list")
need(len(r["quality"]) == 9, "%d quality rows, want 9" % len(r["quality"]))
need(sum(1 for q in r["quality"] if q["deployed"]) == 1, "not exactly one deployed row")
need(0 < r["pe_utilization"] <= 1, "pe_utilization %s" % r["pe_utilization"])
need(r["meta_bytes"] * 5 == r["weight_bytes_deployed"] - sum(
         l["dense_weight_bytes"] for l in r["layers"] if l["placement"] != "device sparse"),
     "metadata is not 1/5 of the sparse layers' bytes (2:4 INT8: 12.5% of 62.5%)")
# Latency under contention: load 0 is the test-set run, the --quick load (0.5) its first two
# batches with a second master taking half the bandwidth, which slows every batch.
c = r["latency"]["contention"]
need([l["load"] for l in c["loads"]] == [0.0, 0.5], "contention loads %s" % c["loads"])
need(c["budget_cycles"] == r["dense_latency_cycles_p50"], "budget is not the dense p50")
base, loaded = c["loads"]
need(loaded["sparse"]["batches"] == 2 and loaded["dense"]["batches"] == 2, "contention batches")
need(loaded["sparse"]["p50"] > base["sparse"]["p50"], "contention did not slow the deployed model")
need(loaded["sparse"]["p50"] <= loaded["sparse"]["p99"] <= loaded["sparse"]["p99_9"],
     "contention percentiles out of order")
need(r["triage_memo"] == "regressed/triage.md" and "2 B/cycle" in r["regressed_workload"],
     "regressed workload %r, memo %r" % (r["regressed_workload"], r["triage_memo"]))
# The second model: the CNN's first convolution (K = 9) a dense fallback by rule, the input
# quantizer and the pools on the host, every other layer sparse unless the quality gate kept it
# dense (and said why); its RTL batch equal to the functional model's, bit and cycle.
m = r["second_model"]
need(m is not None, "no second model")
if m is not None:
    need(m["test_images"] == 300, "CNN test_images %s" % m["test_images"])
    layers = {l["name"]: l for l in m["layers"]}
    need(list(layers) == ["conv1.quantize_input", "conv1", "conv1.pool", "conv2", "conv2.pool",
                          "fc1", "fc2"], "CNN layers %s" % list(layers))
    need(layers.get("conv1", {}).get("placement") == "device dense" and
         "K = 9 is not a multiple of M = 4" in layers["conv1"]["reason"], "conv1 %s" % layers.get("conv1"))
    for name in ["conv1.quantize_input", "conv1.pool", "conv2.pool"]:
        need(layers.get(name, {}).get("placement") == "host", "%s is not on the host" % name)
    for name in ["conv2", "fc1", "fc2"]:
        l = layers.get(name, {})
        gate_kept_dense = l.get("placement") == "device dense" and l.get("sensitivity_pp", 0) > 3
        need(l.get("reason", "").startswith("quality gate: pruning costs") and
             (l.get("placement") == "device sparse" or gate_kept_dense), "%s: %s" % (name, l))
    need(any(l.get("placement") == "device sparse" for l in layers.values()), "no sparse CNN layer")
    for k in ["dense_fp32_accuracy", "control_fp32_accuracy", "sparse_fp32_accuracy",
              "control_int8_accuracy", "sparse_int8_accuracy"]:
        need(0.5 < m[k] <= 1.0, "CNN %s = %s, not a trained model's" % (k, m[k]))
    need(1.0 < m["effective_speedup"] <= m["sparse_layers_speedup"] <= 2.05,
         "CNN speedups %s, %s" % (m["effective_speedup"], m["sparse_layers_speedup"]))
    need(0 < m["fallback_cycle_share"] < 1, "CNN fallback share %s" % m["fallback_cycle_share"])
    q = m["quality_comparison"]
    need(q is not None and abs(q["delta_pp"] - m["quality_delta_pp"]) < 1e-9 and
         q["ci95_pp"][0] <= q["delta_pp"] <= q["ci95_pp"][1] and q["images"] == 300,
         "CNN quality comparison %s" % q)
    need(m["rtl_batches"] == 1 and m["rtl_batches_bit_exact"] == 1 and
         m["rtl_batches_cycle_exact"] == 1, "CNN on the RTL: %s" % m)
    # conv1, conv2, fc1, fc2: one device GEMM each per batch, every one checked against golden
    need(m["rtl_gemms"] == 4 and m["rtl_gemms_golden_exact"] == 4,
         "CNN's RTL GEMMs against the golden model: %s of %s" %
         (m["rtl_gemms_golden_exact"], m["rtl_gemms"]))
sys.exit(0 if ok else 1)
PY

# The regressed workload beside its comparator: two reports of the same batches, and the triage
# memo the report links, naming the lower host bandwidth first and its owner.
for f in regressed/comparator/report.json regressed/candidate/report.json regressed/triage.json; do
  check "writes $f" test -s "$work/report/$f"
done
check "the report links the triage memo" grep -q '](regressed/triage.md)' "$work/report/report.md"
check "the memo names the first failing mechanism and its owner" grep -q \
  'first failing mechanism: \*\*scheduling and memory placement\*\*, owner: \*\*serving performance owner\*\*' \
  "$work/report/regressed/triage.md"

check "index.html loads in Chromium with every section" \
  bash "$here/../report/check_html.sh" "$work/report/index.html"

cp "$work/report/report.json" "$work/first.json" 2>/dev/null
check "second run exits 0" run_demo "$work/second.log"
check "second run trains nothing (the cache)" grep -q ' 0 trained, 1[0-9] from the cache' "$work/second.log"
check "second run trains no CNN (the cache)" grep -q 'cnn: 0 trained, 7 from the cache' "$work/second.log"
check "second run reproduces the figures" python3 - "$work/first.json" "$work/report/report.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["dense_fp32_accuracy", "dense_int8_accuracy", "sparse_int8_accuracy", "fallback_layers",
        "second_model"]
diff = [k for k in keys if a[k] != b[k]]
print("  differs:", diff) if diff else None
sys.exit(1 if diff else 0)
PY

# The exported model.onnx is the deployed network, calibration included: nmsa run on the test
# set the demo wrote reproduces the report's deployed INT8 accuracy exactly (the same logits, bit
# for bit, on the RTL), each layer one device GEMM, every one equal to the golden model, the three
# layers one command stream; run with every layer its own program (--no-chain), the same.
nmsa_run_model() {  # log name, then extra options
  local log="$1"
  shift
  "$nmsa" run "$work/report/model.onnx" --input "$work/report/test_set/images.npy" \
    --labels "$work/report/test_set/labels.npy" --config small "$@" > "$work/$log" 2>&1
}
check "nmsa run model.onnx exits 0" nmsa_run_model run.log --backend rtl --check-golden
check "nmsa run model.onnx gives the report's accuracy" python3 - "$work/run.log" \
  "$work/report/report.json" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
r = json.load(open(sys.argv[2]))
m = re.search(r"top-1 accuracy: (\d+) / (\d+)", log)
if not m:
    print("  no accuracy in the nmsa run output")
    sys.exit(1)
correct, rows = int(m.group(1)), int(m.group(2))
want = round(r["sparse_int8_accuracy"] * r["test_images"])
ok = rows == r["test_images"] and correct == want
ok = ok and re.search(r"layers: \d+ sparse, \d+ dense on the device, 1 on the host", log)
if "one command stream: fc1 -> fc2 -> fc3" not in log:
    print("  nmsa run: the three layers are not one command stream")
    ok = False
g = re.search(r"golden model: ([1-9]\d*) of (\d+) device GEMMs checked, every one bit-exact", log)
if not g or g.group(1) != g.group(2):
    print("  nmsa run --check-golden: %s" % (g.group(0) if g else "no golden line"))
    ok = False
if not ok:
    print("  nmsa run: %d / %d, report: %d / %d" % (correct, rows, want, r["test_images"]))
sys.exit(0 if ok else 1)
PY

check "nmsa run model.onnx --no-chain exits 0" nmsa_run_model run_unchained.log --backend model \
  --no-chain
check "nmsa run model.onnx --no-chain: the same accuracy, no stream" python3 - "$work/run.log" \
  "$work/run_unchained.log" <<'PY'
import re, sys
chained, alone = (open(f).read() for f in sys.argv[1:])
acc = [re.search(r"top-1 accuracy: \d+ / \d+", t) for t in (chained, alone)]
ok = all(acc) and acc[0].group(0) == acc[1].group(0) and "one command stream" not in alone
if not ok:
    print("  chained: %s; --no-chain: %s" % tuple(a.group(0) if a else "no accuracy" for a in acc))
sys.exit(0 if ok else 1)
PY

# With the demo's host memory and the memory seed of the device that ran each part of the test
# set (the report's "deployed rtl runs"), nmsa run on the RTL takes the report's cycles, batch for
# batch.
check "nmsa run model.onnx --host-memory demo takes the report's cycles batch for batch" \
  python3 - "$nmsa" "$work" <<'PY'
import json, re, subprocess, sys
nmsa, work = sys.argv[1:]
r = json.load(open(work + "/report/report.json"))
runs = re.findall(r"rows (\d+):(\d+) on memory seed (\d+)", r["tags"]["deployed rtl runs"])
want = r["latency"]["deployed"]["batch_cycles"]
got = []
for first, end, seed in runs:
    run = subprocess.run([nmsa, "run", work + "/report/model.onnx", "--input",
                          work + "/report/test_set/images.npy", "--config", "small",
                          "--backend", "rtl", "--host-memory", "demo", "--memory-seed", seed,
                          "--rows", first + ":" + end,
                          "--batch", str(r["latency"]["deployed"]["batch_size"])],
                         capture_output=True, text=True)
    m = re.search(r"batch device cycles:((?: \d+)+)", run.stdout)
    if run.returncode != 0 or not m:
        print("  nmsa run --rows %s:%s: exit %d, %s" % (first, end, run.returncode,
                                                      (run.stdout + run.stderr)[-300:]))
        sys.exit(1)
    got += [int(c) for c in m.group(1).split()]
# The report's latency leaves out a last, partial batch.
ok = len(runs) > 0 and want and got[:len(want)] == want and len(got) - len(want) in (0, 1)
if not ok:
    print("  runs %s: nmsa run %s, report %s" % (runs, got, want))
sys.exit(0 if ok else 1)
PY

# The host layers are timed beside the device cycles, batch by batch.
check "the report times the host layers of every deployed batch" python3 - \
  "$work/report/report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["latency"]["deployed"]
ok = len(d["batch_host_us"]) == len(d["batch_cycles"]) > 0 and d["host_us_p50"] > 0
if not ok:
    print("  host times %s, p50 %s, batches %d" % (d["batch_host_us"], d["host_us_p50"],
                                                   len(d["batch_cycles"])))
sys.exit(0 if ok else 1)
PY

# cnn.onnx is the pruned CNN in QDQ form, calibration included: nmsa run places it as the report
# does and reproduces the report's CNN accuracy to the image, in one batch and in batches of 50
# (static scales: a row's result does not depend on the rows run with it).
nmsa_run_cnn() {  # log name, then extra options
  local log="$1"
  shift
  "$nmsa" run "$work/report/cnn.onnx" --input "$work/report/test_set/images.npy" \
    --labels "$work/report/test_set/labels.npy" --backend model --config small "$@" \
    > "$work/$log" 2>&1
}
check "nmsa run cnn.onnx exits 0" nmsa_run_cnn cnn.log
check "nmsa run cnn.onnx --batch 50 exits 0" nmsa_run_cnn cnn_batch50.log --batch 50
check "nmsa run cnn.onnx: the report's placement, the pools on the host, fc1 -> fc2 chained" python3 - "$work/cnn.log" \
  "$work/report/report.json" <<'PY'
import json, re, sys
m = re.search(r"layers: (\d+) sparse, (\d+) dense on the device, 5 on the host; fallbacks: "
              r"(\d+) dense, 3 host", open(sys.argv[1]).read())
layers = json.load(open(sys.argv[2]))["second_model"]["layers"]
sparse = sum(1 for l in layers if l["placement"] == "device sparse")
dense = sum(1 for l in layers if l["placement"] == "device dense")
ok = m is not None and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (sparse, dense, dense)
if "one command stream: fc1 -> fc2" not in open(sys.argv[1]).read():
    print("  nmsa run: the CNN's two Gemm layers are not one command stream")
    ok = False
if not ok:
    print("  nmsa run: %s; report: %d sparse, %d dense" % (m.group(0) if m else "no counts", sparse,
                                                          dense))
sys.exit(0 if ok else 1)
PY
check "nmsa run cnn.onnx gives the report's CNN accuracy in any batch size" python3 - \
  "$work/report/report.json" "$work/cnn.log" "$work/cnn_batch50.log" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))["second_model"]
want = round(r["sparse_int8_accuracy"] * r["test_images"])
ok = True
for log in sys.argv[2:]:
    m = re.search(r"top-1 accuracy: (\d+) / (\d+)", open(log).read())
    if m is None or int(m.group(1)) != want or int(m.group(2)) != r["test_images"]:
        print("  nmsa run (%s): %s, report: %d / %d" % (log, m.group(0) if m else "no accuracy",
                                                       want, r["test_images"]))
        ok = False
sys.exit(0 if ok else 1)
PY

# The release gate on the report it guards: against itself it passes; a limit it cannot meet
# fails with exit code 1.
r="$work/report/report.json"
check "gate passes against itself" "$nmsa" gate --baseline "$r" --candidate "$r" \
  --max-quality-drop 0 --min-speedup 1.5
gate_fails() {
  "$nmsa" gate --baseline "$r" --candidate "$r" --min-speedup 2.5 > "$work/gate.log" 2>&1
  [ $? -eq 1 ] && grep -q FAIL "$work/gate.log"
}
check "gate fails a speedup the report does not reach" gate_fails

# Triage on the report it explains: against itself nothing regressed; a copy whose tail grew
# names the latency tail, its owner, and exits 1 like a failed gate.
check "triage finds no regression against itself" "$nmsa" triage --baseline "$r" --candidate "$r"
triage_names_the_tail() {
  python3 - "$r" "$work/tail.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["latency_cycles_p99"] = r["latency_cycles_p50"] * 2
json.dump(r, open(sys.argv[2], "w"))
PY
  "$nmsa" triage --baseline "$r" --candidate "$work/tail.json" --memo "$work/triage.md" \
    > "$work/triage.log" 2>&1
  [ $? -eq 1 ] && grep -q 'first failing mechanism: 6. latency tail (owner: serving performance owner)' \
    "$work/triage.log" && grep -q '^# Triage: latency tail' "$work/triage.md"
}
check "triage names the latency tail of a regressed copy" triage_names_the_tail

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
