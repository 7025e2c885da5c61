#!/bin/bash
# identical.sh OLD NEW: runs every shipped scenario (scenarios/*.yaml) with
# two handoff binaries and reports any difference in their outputs
# (requests.csv, summary.json, the timelines and link files, per sweep point
# too), ignoring lines that carry wall-clock time and summary.json's event
# count (the core's cost, not the model's output: a run of steady steps is
# one event, and a faster core takes fewer). Exit status 1 on any
# difference. Build the binaries with `go build -o FILE ./cmd/handoff` on
# the two commits; run from the repository root.
set -u
old=$1 new=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for f in scenarios/*.yaml; do
	n=$(basename "$f" .yaml)
	"$old" run "$f" -o "$out/old/$n" >/dev/null 2>&1 || echo "old build failed: $n"
	"$new" run "$f" -o "$out/new/$n" >/dev/null 2>&1 || echo "new build failed: $n"
	for file in $(cd "$out/old/$n" && find . -name '*.csv' -o -name '*.json' | sort); do
		if ! diff -q <(grep -viE 'wall|"events"' "$out/old/$n/$file") <(grep -viE 'wall|"events"' "$out/new/$n/$file" 2>/dev/null) >/dev/null; then
			echo "differs: $n $file"
			fail=1
		fi
	done
done
[ $fail = 0 ] && echo "every shipped scenario's outputs are identical"
exit $fail
