#!/usr/bin/env bash
# The soak through Slurm equals the soak run locally (CTest soak_slice.slurm): starts a single-node
# Slurm cluster (scripts/slurm_cluster.sh), submits a small sharded soak through it as a job array
# (scripts/soak_slurm.py), runs the same shards locally, merges both with scripts/soak_merge.py and
# requires the two summaries to be equal but for the wall times, and every shard to have run as a
# Slurm task.
#
#   tests/soak/slurm_smoke.sh NMSA_SOAK WORK_DIR CONFIG...
set -euo pipefail

soak=$1 work=$2
shift 2
configs=("$@")
scripts="$(cd "$(dirname "$0")/../../scripts" && pwd)"
shards=2 seeds=10

rm -rf "$work"
mkdir -p "$work/slurm" "$work/local"
trap '"$scripts/slurm_cluster.sh" stop "$work/cluster" || true' EXIT
eval "$("$scripts/slurm_cluster.sh" start "$work/cluster")"

# The shard commands, written once with OUT for the output directory.
for config in "${configs[@]}"; do
  for shard in $(seq 0 $((shards - 1))); do
    echo "'$soak' --config $config --first-seed $((1 + shard * seeds)) --seeds $seeds --out 'OUT/$config-$shard.json'"
  done
done > "$work/shards.template"
sed "s|OUT|$work/slurm|" "$work/shards.template" > "$work/shards.slurm"
sed "s|OUT|$work/local|" "$work/shards.template" > "$work/shards.local"

python3 "$scripts/soak_slurm.py" --commands "$work/shards.slurm" --work-dir "$work/slurm/tasks"
bash -e "$work/shards.local" > "$work/local/shards.out"

expected=$(grep -c . "$work/shards.template")
ran=$(grep -l '^task [0-9]*: ' "$work"/slurm/tasks/task-*.log | wc -l)
if [[ $ran -ne $expected ]]; then
  echo "FAIL: $ran of $expected shards left a Slurm task log" >&2
  exit 1
fi

python3 "$scripts/soak_merge.py" "$work"/slurm/*.json --robustness "$work/slurm.json" > "$work/slurm.summary"
python3 "$scripts/soak_merge.py" "$work"/local/*.json --robustness "$work/local.json" > "$work/local.summary"
python3 - "$work/slurm.json" "$work/local.json" <<'EOF'
import json, sys
def figures(path):
    data = json.load(open(path))
    data["soak"].pop("shard_seconds", None)  # wall time, the only thing allowed to differ
    return data
slurm, local = figures(sys.argv[1]), figures(sys.argv[2])
if slurm != local:
    keys = sorted(k for k in set(slurm) | set(local) if slurm.get(k) != local.get(k))
    sys.exit(f"FAIL: the Slurm soak's summary differs from the local run's in {keys}")
if slurm["seeds"] == 0:
    sys.exit("FAIL: no seeds were run")
print(f"Slurm soak equals the local run: {slurm['seeds']} seeds, {slurm['cycles_simulated']} cycles, "
      f"{slurm['faults_injected']} faults injected, {slurm['faults_detected']} detected")
EOF

# A task that fails is reported by name and fails the submission.
echo "exit 3" > "$work/failing.commands"
rc=0
python3 "$scripts/soak_slurm.py" --commands "$work/failing.commands" --work-dir "$work/failing" \
  > "$work/failing.out" || rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^FAIL line 1: exit status 3' "$work/failing.out"; then
  echo "FAIL: a failing Slurm task was not reported (exit $rc):" >&2
  cat "$work/failing.out" >&2
  exit 1
fi
