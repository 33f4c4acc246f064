# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#
# Sourced by the scripts that read the RTL file lists (rtl/files.f, rtl/board/files.f), so that
# every tool reads them the same way.
#
#   read_file_list SCRIPT LIST ARRAY   the entries of LIST, in order, into the array ARRAY:
#                                      whitespace trimmed, blank lines and // comments dropped.
#                                      Exits 2, naming SCRIPT, when an entry does not exist or
#                                      the list is empty.
read_file_list() {
  local script=$1 list=$2 line
  local -n entries=$3
  entries=()
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"       # trim leading whitespace
    line="${line%"${line##*[![:space:]]}"}"       # trim trailing whitespace
    [[ -z "$line" || "$line" == //* ]] && continue
    [[ -f "$line" ]] || { echo "$script: $list lists '$line', which does not exist" >&2; exit 2; }
    entries+=("$line")
  done < "$list"
  [[ ${#entries[@]} -gt 0 ]] || { echo "$script: $list lists no files" >&2; exit 2; }
}
