#!/usr/bin/env bash
# Renders `handoff report` pages of a real run, two real sweeps (one a
# closed loop) and a plan in headless Chromium
# (cmd/handoff/report_browser_test.go): no console errors, every plot
# drawn, the sweep's table sortable, and at 1,400 and 900 px no page wider
# than the window, plots at least half the content wide, no value out of
# its cell, no plot beside a column of blank page. Installs Debian's chromium when
# it is missing (CI runs as root). Keeps the screenshots in
# $HANDOFF_BROWSER_SHOTS when that is set.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
CHROMIUM=$(command -v chromium) HANDOFF_BROWSER_TEST=1 \
  go test ./cmd/handoff -run '^TestReportInBrowser$' -count=1 -v
