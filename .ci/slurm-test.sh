#!/usr/bin/env bash
# The Slurm proof of docs/SCALE-OUT.md: on this machine, as root, it
# installs Debian's slurm-wlm if sbatch is missing, starts a one-node
# cluster (slurmctld + slurmd, auth/none, state and spool in a temporary
# directory), runs docs/slurm-sweep.sh on a 6-point sweep with 3 shards,
# waits for its merge job, runs the same sweep unsharded and checks that
# the two results.csv are equal byte for byte. It always stops the daemons
# it started. Run by .ci/run; alone: sudo .ci/slurm-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

fail() { echo "slurm-test: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (it installs slurm-wlm and runs slurmd)"
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
	fail "a slurmctld or slurmd already runs on this machine; stop it first"
fi

tmp=$(mktemp -d /tmp/handoff-slurm.XXXXXX)
pids=()
cleanup() {
	status=$?
	if [[ ${#pids[@]} -gt 0 ]]; then
		scancel --full -u "$(id -un)" 2>/dev/null || true
	fi
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	for _ in $(seq 20); do # a job's slurmstepd outlives slurmd briefly
		pgrep -x slurmstepd >/dev/null || break
		sleep 0.5
	done
	if [[ $status -ne 0 ]]; then
		echo "slurm-test: FAILED; logs kept in $tmp" >&2
		tail -n 20 "$tmp"/*.log "$tmp"/work/slurm-*.out >&2 2>/dev/null || true
	else
		rm -rf "$tmp"
	fi
	exit "$status"
}
trap cleanup EXIT

echo "-- build handoff"
go build -o "$tmp/bin/handoff" ./cmd/handoff

if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null; then
	echo "-- install slurm-wlm"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends slurm-wlm >"$tmp/apt.log" 2>&1 ||
		fail "apt-get install slurm-wlm failed (see $tmp/apt.log)"
fi

echo "-- start slurmctld and slurmd"
# slurmd -C prints this node's name, real CPUs, sockets, cores and memory.
node=$(slurmd -C | head -n 1)
[[ $node == NodeName=* ]] || fail "slurmd -C printed no node line: $node"
host=${node#NodeName=}
host=${host%% *}
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/work"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=handoff-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
ReturnToService=2
MpiDefault=none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
# In the foreground (-D) the daemons log to stderr.
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)

for _ in $(seq 60); do
	state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
	[[ $state == idle ]] && break
	sleep 0.5
done
[[ $state == idle ]] || fail "node $host is '${state:-unreachable}', not idle, after 30 s"

echo "-- docs/slurm-sweep.sh, 3 shards"
# quickstart over 2 decode counts x 3 rate scales: 6 points.
scenario=$tmp/sweep.yaml
cp scenarios/quickstart.yaml "$scenario"
cat >>"$scenario" <<'EOF'
sweep:
  grid:
    pools.decode.count: [1, 2]
    workload.rate_scale: [0.5, 1, 2]
EOF
submitted=$(cd "$tmp/work" &&
	HANDOFF="$tmp/bin/handoff" HANDOFF_SBATCH_ARGS="--cpus-per-task=1 --mem=512M --time=10" \
		"$repo/docs/slurm-sweep.sh" "$scenario" "$tmp/out" 3)
echo "$submitted"
merge=$(sed -n 's/.* and merge job \([0-9]*\) .*/\1/p' <<<"$submitted")
[[ -n $merge ]] || fail "no merge job id in: $submitted"

for _ in $(seq 240); do
	job=$(scontrol show job "$merge" 2>/dev/null || true)
	mstate=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$job")
	case $mstate in
	COMPLETED) break ;;
	FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
		fail "merge job $merge ended $mstate" ;;
	esac
	if grep -q 'DependencyNeverSatisfied' <<<"$job"; then
		fail "merge job $merge will never run: a shard task failed"
	fi
	sleep 0.5
done
[[ $mstate == COMPLETED ]] || fail "merge job $merge is ${mstate:-unknown} after 120 s"
[[ -f $tmp/out/all/results.csv ]] || fail "the merge job wrote no $tmp/out/all/results.csv"

echo "-- the same sweep unsharded"
"$tmp/bin/handoff" sweep "$scenario" -o "$tmp/unsharded" --no-plots >/dev/null
rows=$(($(wc -l <"$tmp/unsharded/results.csv") - 1))
[[ $rows -eq 6 ]] || fail "the unsharded sweep has $rows points, want 6"
cmp "$tmp/out/all/results.csv" "$tmp/unsharded/results.csv" ||
	fail "merged results.csv differs from the unsharded one"
for i in 0 1 2; do
	n=$(($(wc -l <"$tmp/out/shard-$i/results.csv") - 1))
	[[ $n -eq 2 ]] || fail "shard $i ran $n points, want 2"
done
echo "-- ok: 3 Slurm shards merged equal the unsharded sweep ($rows points) byte for byte"
