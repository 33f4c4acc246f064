#!/usr/bin/env bash
# make coverage, after the coverage build (docs/verification.md): runs the RTL regression (CTest
# label rtl) on the models with coverage points, merges what every test process recorded, writes
# the annotated sources and the HTML report, and prints the summary of scripts/coverage_report.py.
#
#   scripts/coverage.sh <coverage build dir> <robustness.json> [jobs]
#
# Exits non-zero when a test failed or an exclusion has gone stale, after writing the report.
set -uo pipefail

build_dir="$(realpath "$1")"
robustness="$2"
jobs="${3:-2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$build_dir/coverage-data"
out="$build_dir/report"

rm -rf "$data" "$out"
mkdir -p "$data" "$out"

echo "coverage: running the RTL regression on the coverage models ($jobs jobs)"
(cd "$build_dir" && NMSA_COVERAGE_DIR="$data" ctest -L rtl -j "$jobs" --output-on-failure \
  > "$out/ctest.log" 2>&1)
tests_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Exception" "$out/ctest.log" || true

shopt -s nullglob
parts=("$data"/*.dat)
if [ ${#parts[@]} -eq 0 ]; then
  echo "coverage: no coverage data in $data (was the build configured with -DNMSA_COVERAGE=ON?)" >&2
  exit 1
fi
verilator_coverage --write "$out/merged.dat" "${parts[@]}" || exit 1
verilator_coverage --annotate "$out/annotated" --annotate-min 1 "$out/merged.dat" \
  > "$out/annotate.log" || exit 1
verilator_coverage --write-info "$out/coverage.info" "$out/merged.dat" || exit 1
if command -v genhtml >/dev/null 2>&1; then
  genhtml --quiet --output-directory "$out/html" --prefix "$root" "$out/coverage.info" \
    > "$out/genhtml.log" 2>&1 || echo "coverage: genhtml failed, see $out/genhtml.log"
fi

python3 "$root/scripts/coverage_report.py" "$out/merged.dat" --root "$root" \
  --exclusions "$root/tests/coverage/exclusions.txt" \
  --testplan "$root/docs/testplan.md" --bins "$data"/bins-*.txt \
  --json "$out/summary.json" --missed "$out/missed_lines.txt" --robustness "$robustness"
report_rc=$?
echo "coverage: report in $out (html/index.html, annotated/, summary.json, missed_lines.txt)"
if [ $tests_rc -ne 0 ]; then
  echo "coverage: some tests failed, see $out/ctest.log" >&2
  exit 1
fi
exit $report_rc
