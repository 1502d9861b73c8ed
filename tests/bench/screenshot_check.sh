#!/usr/bin/env bash
# Renders the report of a saved infer-bench document, screenshots it in headless Chromium and
# checks that the charts were drawn: the DOM holds the SVG charts, and the PNG (decoded by
# png_check.py, standard library only) has the window's size, is not blank, and shows the
# colour of every series. Exits 77 (ctest: skipped) when chromium is not installed.
#
# usage: screenshot_check.sh RENDER_REPORT_BINARY DOCUMENT.json WORK_DIR
set -euo pipefail

render_report=$1
document=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
width=1280
height=2400

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "screenshot_check: skipped: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
"$render_report" "$document" "$work/report.html"

# Its own profile directory, so that it neither needs a writable HOME nor meets a running browser.
run_browser() {
  timeout 120 "$browser" "$@" --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size="$width,$height" "file://$work/report.html"
}

# New headless mode first; older Chromium builds only know the old one.
for mode in --headless=new --headless; do
  rm -f "$work/report.png"
  if run_browser "$mode" --screenshot="$work/report.png" >"$work/chromium.log" 2>&1 && [[ -s "$work/report.png" ]]; then
    break
  fi
done
if [[ ! -s "$work/report.png" ]]; then
  echo "screenshot_check: FAILED: chromium wrote no screenshot; its output:" >&2
  cat "$work/chromium.log" >&2
  exit 1
fi

run_browser "$mode" --dump-dom >"$work/dom.html" 2>"$work/chromium-dom.log"
charts=$(grep -o '<svg class="chart"' "$work/dom.html" | wc -l)
lines=$(grep -o '<polyline class="series"' "$work/dom.html" | wc -l)
echo "screenshot_check: $mode: the DOM holds $charts charts and $lines series lines"
if ((charts < 2 || lines < 2)); then
  echo "screenshot_check: FAILED: the DOM Chromium built lacks the charts" >&2
  exit 1
fi

python3 "$here/png_check.py" "$work/report.png" "$work/report.html" --width "$width" --height "$height"
