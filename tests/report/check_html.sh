#!/usr/bin/env bash
# The deployment report's index.html as a browser sees it: Debian's chromium, headless, loads the
# page from the file with every host name unresolvable (so the check also shows how the page
# looks with no network), dumps the DOM and takes a screenshot (index.png beside index.html) for a
# person to look at. Fails when chromium is missing or fails, when the page refers to anything
# outside itself (script, stylesheet, font, image, frame), or when the rendered DOM lacks one of
# the report's sections or has no inline SVG plot.
# Usage: check_html.sh REPORT_DIR_OR_HTML
# Environment: CHROMIUM (the browser, default: chromium on the PATH), NMSA_SHOT (the screenshot,
# default: the page's name with .png, beside it), NMSA_SHOT_HEIGHT (its height in px).
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: check_html.sh REPORT_DIR_OR_HTML" >&2
  exit 2
fi
html=$1
[ -d "$html" ] && html="$html/index.html"
if [ ! -f "$html" ]; then
  echo "FAIL $html: no such file"
  exit 1
fi
html=$(realpath "$html")
shot=${NMSA_SHOT:-${html%.*}.png}
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
pass() { echo "PASS $*"; }

# The ids report_html writes (sw/report/src/report_html.cpp, kSections), in page order.
sections=(summary targets validation triage layers speedup fallback utilization metadata latency bandwidth quality
          equal-budget second-model schedule cross-checks tags notes)

# Anything the page would fetch: a script at all, or a src/href/url()/@import that is not a
# #fragment or data: URI. A link (href) to a file beside the report, a relative path with no
# scheme that does not leave the report's directory (regressed/triage.md), is not fetched.
if grep -Eqi '<script' "$html"; then fail "$html has a <script>"; fi
refs="(src|href|xlink:href)[[:space:]]*=[[:space:]]*[\"']?[^\"'#> ][^\"'> ]*"
refs="$refs|url\([^)]*\)|@import[^;]*"
external=$(grep -Eoi "$refs" "$html" | grep -Evi "=[[:space:]]*[\"']?data:|url\([\"']?(#|data:)" |
             awk '!(tolower($0) ~ /^href[[:space:]]*=[[:space:]]*["\x27]?[a-z0-9_][^:"\x27> ]*$/ &&
                    $0 !~ /\.\./)' | head -5)
if [ -n "$external" ]; then
  fail "$html refers to outside resources:"
  echo "$external" | sed 's/^/  /'
else
  pass "no external reference in $(basename "$html")"
fi

chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
  echo "FAIL chromium not found (Debian package chromium; scripts/setup.sh installs it)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# --no-sandbox: the sandbox cannot start as root (CI runs as root). The resolver rule makes
# every host unknown, so nothing is fetched even if a reference slipped through.
flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" --no-first-run
       --no-default-browser-check --disable-extensions --hide-scrollbars
       --host-resolver-rules="MAP * ~NOTFOUND")
url="file://$(sed 's/ /%20/g' <<< "$html")"

HOME="$work" timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url" > "$work/dom.html" \
  2> "$work/dump.log"
rc=$?
if [ "$rc" -ne 0 ] || [ ! -s "$work/dom.html" ]; then
  fail "chromium --dump-dom exited $rc with $(wc -c < "$work/dom.html") bytes; its log ends:"
  tail -5 "$work/dump.log" | sed 's/^/  /'
  echo "check_html: FAIL ($failed)"
  exit 1
fi
pass "chromium $("$chromium" --version 2>/dev/null | grep -Eo '[0-9]+(\.[0-9]+)+' | head -1)" \
     "rendered $(basename "$html") ($(wc -c < "$work/dom.html") bytes of DOM)"

missing=()
for id in "${sections[@]}"; do
  grep -q "<section id=\"$id\"" "$work/dom.html" || missing+=("$id")
done
if [ ${#missing[@]} -eq 0 ]; then
  pass "all ${#sections[@]} sections present"
else
  for id in "${missing[@]}"; do fail "section #$id missing from the rendered page"; done
fi
svgs=$(grep -o '<svg' "$work/dom.html" | wc -l)
if [ "$svgs" -gt 0 ]; then
  pass "$svgs inline SVG figures"
else
  fail "no inline <svg> figure in the rendered page"
fi

# One tall window: headless Chromium has no full-page flag, and the sample page is ~6500 px high.
HOME="$work" timeout 120 "$chromium" "${flags[@]}" --window-size="1200,${NMSA_SHOT_HEIGHT:-7000}" \
  --screenshot="$shot" "$url" > "$work/shot.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$shot" ]; then
  pass "screenshot $shot"
else
  fail "chromium --screenshot exited $rc; its log ends:"
  tail -5 "$work/shot.log" | sed 's/^/  /'
fi

if [ "$failed" -eq 0 ]; then
  echo "check_html: PASS"
  exit 0
fi
echo "check_html: FAIL ($failed)"
exit 1
