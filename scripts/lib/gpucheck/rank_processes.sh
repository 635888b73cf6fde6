#!/usr/bin/env bash
# N ranks of one job, each a process of its own, meeting through torchrun's variables (braid-perf
# joins such a job): phase sanitize runs two under compute-sanitizer on the one GPU, each rank
# watched by a sanitizer of its own (no sanitizer then runs two ranks' kernels, each waiting on the
# other, side by side); phase multigpu runs one on each GPU, each process seeing its own alone
# (CUDA_VISIBLE_DEVICES=RANK), as torchrun and Slurm launch them. Prints each rank's output, its
# lines prefixed "[rank R] "; exits non-zero when a rank does (the last such status).
#
# usage: rank_processes.sh N shared|own ROOT COMMAND...
set -uo pipefail
n=$1 devices=$2 root=$3
shift 3
port=$(python3 "$root/tests/support/free_port.py")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
for ((rank = 0; rank < n; rank++)); do
  visible=()
  [[ $devices != own ]] || visible=(CUDA_VISIBLE_DEVICES="$rank")
  env "${visible[@]}" RANK=$rank WORLD_SIZE="$n" LOCAL_RANK=$rank LOCAL_WORLD_SIZE="$n" \
    MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" "$@" >"$out/$rank" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
for ((rank = 0; rank < n; rank++)); do sed "s/^/[rank $rank] /" "$out/$rank"; done
exit "$status"
