#!/usr/bin/env bash
# A sharded `handoff sweep` as a Slurm array job, then the merge step.
# See docs/SCALE-OUT.md.
#
# On a login node:  docs/slurm-sweep.sh SCENARIO OUT_DIR [SHARDS]
#   submits SHARDS array tasks (ids 0 … SHARDS-1, one shard each, writing
#   OUT_DIR/shard-<id>) and a merge job that runs when all of them succeeded
#   and writes OUT_DIR/all. OUT_DIR must be on a filesystem every node sees.
# As an array task (Slurm runs this same script): runs shard
#   $SLURM_ARRAY_TASK_ID/$SHARDS. A resubmitted task resumes its shard:
#   sbatch --array=<failed ids> --export=ALL,SCENARIO=…,OUT=…,SHARDS=… docs/slurm-sweep.sh
# HANDOFF_SBATCH_ARGS (split on spaces) adds options to the array job's
# sbatch command line, where they win over the #SBATCH lines below, e.g.
#   HANDOFF_SBATCH_ARGS="--cpus-per-task=8 --mem=8G --partition=short"
#
#SBATCH --job-name=handoff-sweep
#SBATCH --cpus-per-task=32
#SBATCH --mem=32G
#SBATCH --time=24:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail

HANDOFF=${HANDOFF:-handoff}   # the binary; same build on every node

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
	# Submitting, on the login node.
	if [[ $# -lt 2 ]]; then
		echo "usage: $0 SCENARIO OUT_DIR [SHARDS]" >&2
		exit 2
	fi
	SCENARIO=$(realpath "$1")
	OUT=$(realpath -m "$2")
	SHARDS=${3:-8}
	if ! [[ "$SHARDS" =~ ^[1-9][0-9]*$ ]]; then
		echo "$0: SHARDS must be a positive integer, got '$SHARDS'" >&2
		exit 2
	fi
	"$HANDOFF" validate "$SCENARIO" >/dev/null   # fail here, not in every task
	mkdir -p "$OUT"
	read -ra extra <<<"${HANDOFF_SBATCH_ARGS:-}"
	jobid=$(sbatch --parsable --array="0-$((SHARDS - 1))" "${extra[@]}" \
		--export="ALL,SCENARIO=$SCENARIO,OUT=$OUT,SHARDS=$SHARDS,HANDOFF=$HANDOFF" "$0")
	jobid=${jobid%%;*}
	mergeid=$(sbatch --parsable --job-name=handoff-merge --dependency="afterok:$jobid" \
		--cpus-per-task=1 --mem=4G --time=1:00:00 --output="slurm-%j-merge.out" \
		--wrap="$HANDOFF merge -o '$OUT/all' '$OUT'/shard-*")
	echo "submitted array job $jobid ($SHARDS shards) and merge job ${mergeid%%;*} into $OUT/all"
	exit 0
fi

# An array task: shard ids count from 0, as --array=0-(n-1) gives them.
# Exit status 2 means the shard finished with holes (dropped requests): it
# is done, and merge reports them again, so the task succeeds.
: "${SCENARIO:?}" "${OUT:?}" "${SHARDS:?}"
status=0
"$HANDOFF" sweep "$SCENARIO" -o "$OUT/shard-$SLURM_ARRAY_TASK_ID" \
	--shard "$SLURM_ARRAY_TASK_ID/$SHARDS" -j "${SLURM_CPUS_PER_TASK:-1}" --no-plots || status=$?
if [[ $status -eq 2 ]]; then
	status=0
fi
exit "$status"
