#!/usr/bin/env bash
# Loads `handoff run -o DIR --metrics openmetrics` output into a Prometheus
# TSDB with promtool (tsdb create-blocks-from openmetrics) and reads a
# series back (tsdb dump): the file is OpenMetrics that Prometheus takes,
# its timestamps on the fixed epoch, its values the timeline's. Installs
# Debian's prometheus package, which ships /usr/bin/promtool, when promtool
# is missing (CI runs as root). Starts no server: promtool reads the files
# and exits; the temporary folder goes when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
  echo "installing prometheus (for promtool)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Its postinst cannot start the service in CI (no init), and need not.
  apt-get install -y -qq prometheus >/dev/null
fi
promtool --version | head -1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/handoff run scenarios/quickstart.yaml -o "$tmp/run" --metrics openmetrics >/dev/null
promtool tsdb create-blocks-from openmetrics "$tmp/run/metrics.om" "$tmp/blocks"
mkdir -p "$tmp/blocks/wal" # promtool's dump opens the head's WAL, which backfilled blocks lack

# decode-0's running requests at 1.5 s (timestamp 1735689601500 ms) must
# be timeline.csv's running column at time_s 1.500.
want=$(awk -F, '$2 == "decode-0" && $3 == "1.500" { print $5 }' "$tmp/run/timeline.csv")
got=$(promtool tsdb dump --match='vllm:num_requests_running{engine="decode-0"}' "$tmp/blocks" |
  awk '$NF == 1735689601500 { print $(NF-1) }')
echo "vllm:num_requests_running{engine=\"decode-0\"} at 1.5 s: $got (timeline.csv: $want)"
if [ -z "$want" ] || [ "$got" != "$want" ]; then
  echo "FAIL: the series read back from the TSDB is not the timeline's"; exit 1
fi

# Every completed request is counted once, on its engine.
completed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["completed"])' "$tmp/run/summary.json")
total=$(promtool tsdb dump --match='vllm:request_success_total{finished_reason="length"}' "$tmp/blocks" |
  awk '{ v = $(NF-1); $NF = ""; $(NF-1) = ""; last[$0] = v } # a series: its labels; its points in time order
       END { s = 0; for (k in last) s += last[k]; print s }')
echo "vllm:request_success_total{finished_reason=\"length\"} summed over engines: $total (summary: $completed completed)"
if [ "$total" != "$completed" ]; then
  echo "FAIL: request_success_total does not add up to the completed requests"; exit 1
fi
