#!/usr/bin/env bash
# Verilator lint of the RTL, warnings fatal.
#
#   scripts/lint.sh
#
# Every module in rtl/files.f is linted standalone as --top-module with its default parameters,
# reading only the files.f entries up to and including its own file (files.f is in compile
# order, so this also checks that every module's dependencies come before it); the modules of
# rtl/board/files.f likewise after all of rtl/files.f, and each board's top
# (rtl/board/<board>/*_top.sv) after both lists. nmsa_array and nmsa_top are linted again with
# the parameters of every configuration in rtl/configs.json, which also elaborates everything
# below them with those parameters. One PASS/FAIL line per run; non-zero
# exit on any warning or error. Waivers, if one is ever unavoidable, go in rtl/lint.vlt (each
# with a comment saying why); the file is passed to every run when it exists.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

for tool in verilator python3; do
  command -v "$tool" >/dev/null || { echo "lint.sh: '$tool' not found in PATH" >&2; exit 2; }
done

source scripts/file_list.sh
read_file_list lint.sh rtl/files.f files
read_file_list lint.sh rtl/board/files.f board_files

waivers=()
[[ -f rtl/lint.vlt ]] && waivers=(rtl/lint.vlt)

failures=0

# lint LABEL TOP NFILES [-Gparam=value ...]: lint TOP reading the first NFILES entries of files.f.
lint() {
  local label=$1 top=$2 nfiles=$3
  shift 3
  local out rc=0
  out="$(verilator --lint-only -Wall --top-module "$top" "$@" \
           "${waivers[@]}" "${all_files[@]:0:$nfiles}" 2>&1)" || rc=$?
  if [[ $rc -eq 0 && -z "$out" ]]; then
    echo "PASS  lint $label"
  else
    echo "FAIL  lint $label"
    printf '%s\n' "$out" | sed 's/^/      /'
    failures=$((failures + 1))
  fi
}

# Every module, standalone, default parameters.
array_nfiles=0
all_files=("${files[@]}" "${board_files[@]}")
for i in "${!all_files[@]}"; do
  f="${all_files[$i]}"
  mods="$(sed -nE 's/^[[:space:]]*module[[:space:]]+([A-Za-z_][A-Za-z0-9_$]*).*/\1/p' "$f")"
  if [[ -z "$mods" ]]; then
    # A package (or include) is checked as part of every module that follows it.
    continue
  fi
  for mod in $mods; do
    lint "$mod" "$mod" $((i + 1))
    [[ "$mod" == nmsa_array ]] && array_nfiles=$((i + 1))
  done
done
[[ $array_nfiles -gt 0 ]] || { echo "lint.sh: no module nmsa_array in rtl/files.f" >&2; exit 2; }

# The board tops, each after every generic file (they are in no list: each board build reads one).
for top_file in rtl/board/*/*_top.sv; do
  top="$(basename "$top_file" .sv)"
  all_files+=("$top_file")
  lint "$top" "$top" ${#all_files[@]}
  unset 'all_files[${#all_files[@]}-1]'
done

# nmsa_array and nmsa_top with the parameters of every named configuration
# (scripts/rtl_config.py turns a configuration into parameters).
names="$(python3 scripts/rtl_config.py --list)" || exit 2
[[ -n "$names" ]] || { echo "lint.sh: rtl/configs.json holds no configurations" >&2; exit 2; }

while read -r name; do
  for top in nmsa_array nmsa_top; do
    params="$(python3 scripts/rtl_config.py "$name" "$top")" || exit 2
    nfiles=$array_nfiles
    [[ $top == nmsa_top ]] && nfiles=${#files[@]}
    # shellcheck disable=SC2086  # params is a list of -G options
    lint "$top config=$name ($params)" "$top" "$nfiles" $params
  done
done <<< "$names"

if [[ $failures -ne 0 ]]; then
  echo "lint.sh: $failures lint run(s) failed" >&2
  exit 1
fi
