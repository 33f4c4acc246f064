#!/usr/bin/env bash
# Fails when the files generated from the register description are stale, and proves that this
# check can fail at all. Usage: scripts/check_regs.sh   (prints PASS or FAIL, exit status 0 / 1)
#
#  1. python3 scripts/gen_regs.py --check on the repository: the committed rtl/ctrl/nmsa_reg_pkg.sv,
#     sw/isa/include/nmsa/regs.hpp and docs/registers.md equal what rtl/regs/nmsa_regs.json generates.
#  2. Self-test on a scratch tree holding a copy of the description and the outputs the generator
#     writes from it (fresh outputs, so that a stale repository fails step 1 only; after step 1
#     passes they equal the committed ones). The repository is never written.
#     - the scratch tree passes, and two generator runs write byte-identical files;
#     - each generated file altered by one line, or deleted, fails the check naming that file;
#     - an edited description with the old outputs (the "forgot to regenerate" case) fails;
#     - an invalid description fails with a message naming the register.
set -uo pipefail
cd "$(dirname "$0")/.."

gen=scripts/gen_regs.py
json=rtl/regs/nmsa_regs.json
outputs=(rtl/ctrl/nmsa_reg_pkg.sv sw/isa/include/nmsa/regs.hpp docs/registers.md)
failures=0

fail() {
  echo "check_regs: FAIL: $*"
  failures=$((failures + 1))
}

if ! python3 "$gen" --check; then
  fail "generated register files are stale; run: python3 $gen"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Copies the description into $1 (repository layout) and generates the outputs there.
make_copy() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir/$(dirname "$json")"
  cp "$json" "$dir/$json" && python3 "$gen" --root "$dir" > /dev/null
}

# Runs the check on copy $1 and expects it to fail (exit 1) with a message naming $2.
expect_stale() {
  local dir=$1 name=$2 what=$3 rc
  python3 "$gen" --check --root "$dir" > "$scratch/out.txt" 2>&1
  rc=$?
  if [ "$rc" -ne 1 ]; then
    fail "self-test: $what: the check exited $rc, expected 1"
  elif ! grep -q "stale: $name" "$scratch/out.txt"; then
    fail "self-test: $what: the check did not name $name"
  fi
}

copy=$scratch/copy
if ! make_copy "$copy"; then
  fail "self-test: cannot generate the register files into $copy"
else
  if ! python3 "$gen" --check --root "$copy" > /dev/null; then
    fail "self-test: freshly generated files do not pass the check"
  fi

  # Determinism: two generator runs into separate trees write identical bytes.
  make_copy "$scratch/gen2"
  for f in "${outputs[@]}"; do
    if ! cmp -s "$copy/$f" "$scratch/gen2/$f"; then
      fail "self-test: two runs of the generator wrote different $f"
    fi
  done

  for f in "${outputs[@]}"; do
    make_copy "$copy"
    echo "// hand edit" >> "$copy/$f"
    expect_stale "$copy" "$f" "line appended to $f"

    make_copy "$copy"
    rm "$copy/$f"
    expect_stale "$copy" "$f" "$f deleted"
  done

  # The description changes but the outputs are not regenerated: all three are stale.
  make_copy "$copy"
  python3 - "$copy/$json" <<'EOF'
import json, sys
path = sys.argv[1]
with open(path) as f:
    d = json.load(f)
next(r for r in d["registers"] if r["name"] == "CMD_COUNT")["offset"] = "0x03C"
with open(path, "w") as f:
    json.dump(d, f, indent=2)
EOF
  for f in "${outputs[@]}"; do
    expect_stale "$copy" "$f" "CMD_COUNT moved in the description"
  done

  # An invalid description is rejected (exit 2) with a message that names the culprit.
  make_copy "$copy"
  python3 - "$copy/$json" <<'EOF'
import json, sys
path = sys.argv[1]
with open(path) as f:
    d = json.load(f)
next(r for r in d["registers"] if r["name"] == "CMD_COUNT")["offset"] = "0x034"
with open(path, "w") as f:
    json.dump(d, f, indent=2)
EOF
  python3 "$gen" --check --root "$copy" > "$scratch/out.txt" 2>&1
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "register CMD_COUNT: offset 0x034 already used by register CMD_BASE_HI" \
      "$scratch/out.txt"; then
    fail "self-test: a duplicate offset was not rejected by name (exit $rc)"
  fi
fi

if [ "$failures" -eq 0 ]; then
  echo "check_regs: PASS (generated files up to date; the staleness check fails when it should)"
  exit 0
fi
echo "check_regs: FAIL ($failures problem(s))"
exit 1
