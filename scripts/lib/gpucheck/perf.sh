#!/usr/bin/env bash
# scripts/gpu-check's phase perf: braid-perf tables, every one checked (each rank counts its own
# wrong elements), and on a GPU the timings the goals are judged on (perf_goals.py):
#   - the engine's reduce loop alone against the device-to-device copy (braid-kernel-bench);
#   - all_reduce N = 1 (a copy, no kernel), and N = 2, 4, 8 ranks as threads on the one GPU;
#   - a NCCL_MAX_NCHANNELS sweep up to 8 (N = 2), which can only lower the count braid chooses
#     (src/comm/gpu_channels.cc: one channel per 8 multiprocessors of each rank, 8 for two ranks
#     on a 132-multiprocessor H100): each case's log says the count it got; one odd count of
#     floats, whose channel and chunk bounds are not 16-byte aligned; every type and op; Simple,
#     LL and one-shot forced;
#   - the kernels' registers, and the blocks of 512 threads they leave room for on an SM, from
#     cuobjdump --dump-resource-usage.
# NVIDIA's NCCL is not run here: it refuses two ranks on one GPU, and at N = 1 both libraries only
# copy; phase multigpu compares them where there are GPUs enough. On the emulated GPU the same
# tables are a correctness run at small sizes, on one emulated device as on the one-GPU machine,
# and nothing is timed against anything.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"
source "$GC_LIB/perf_case.sh"

gc_scope "braid-perf's tables right element by element (every type and op, both protocols, \
one-shot, an odd count); on a GPU, the engine's loops against the device's copy and N ranks as \
threads against the copy bound of the one GPU's memory" "$GC_ONE_GPU; so N ranks here share one \
GPU's memory, and their bandwidth says nothing of a link between GPUs"

perf=$GC_BIN/braid-perf
if ((GC_EMULATED)); then
  export BRAID_EMULATE_GPUS=1
  big=(-b 8 -e 2M -f 8 -n 2 -w 1)
  n1=("${big[@]}") mid=("${big[@]}")
  sweep_bytes=1M channels=(1 2 4)
  odd_count=100003
  small=(-b 8 -e 256K -f 8 -n 2 -w 1)
  oneshot=(-b 8 -e 64K -f 8 -n 2 -w 1)
else
  # Sizes that fill the GPU, no larger: each rank checks its results on the host, slowly at 1 GiB.
  big=(-b 8 -e 256M -f 2 -n 20 -w 5)
  n1=(-b 8 -e 64M -f 4 -n 20 -w 5) mid=(-b 8 -e 64M -f 4 -n 20 -w 5)
  sweep_bytes=256M channels=(1 2 4 8)
  odd_count=$(((1 << 26) + 1))
  small=(-b 8 -e 4M -f 4 -n 20 -w 5)
  oneshot=(-b 8 -e 64K -f 4 -n 20 -w 5)
fi

# What has nothing to be compared with here is NOT RUN, which the summary counts apart from PASS
# and SKIP: the goals judged on it say so in turn (perf_goals.py).
if ((GC_EMULATED)); then
  braids="emulated GPU"
  gc_record perf.kernels "NOT RUN" "braid-kernel-bench times CUDA's own copy: a real GPU only"
else
  braids="CUDA (braid's"
  if gc_run perf.kernels 40 "$GC_BIN/braid-kernel-bench" $((1 << 30)); then
    IFS=$'\t' read -r what rows read < <(perf_table kernels "$GC_LOG")
    if gc_timed_out; then
      gc_finish perf.kernels FAIL "did not finish within $GC_LIMIT s"
    elif [[ $what != table ]]; then
      gc_finish perf.kernels FAIL \
        "exit status $GC_RC, and its output has a line no table holds: $rows"
    elif ((GC_RC != 0)); then
      gc_finish perf.kernels FAIL "exit status $GC_RC: $(tail -1 "$GC_LOG")"
    elif ! grep -q '^  copy (cudaMemcpyAsync) ' "$GC_LOG"; then
      gc_finish perf.kernels FAIL "$rows rows, none of them the copy's: nothing to compare with"
    else
      gc_finish perf.kernels PASS "$read"
    fi
  fi
fi

perf_case perf.n1 30 "$braids" "$perf" all_reduce "${n1[@]}"
gc_record perf.nccl INFO "NVIDIA's NCCL not compared: it refuses two ranks on one GPU, and at \
N = 1 both libraries only copy the input (no kernel of either runs), which times the copy, not \
braid; phase multigpu compares them with a rank on each of two GPUs or more"
perf_case perf.n2 40 "$braids" "$perf" all_reduce "${big[@]}" -t 2
perf_case perf.n4 30 "$braids" "$perf" all_reduce "${mid[@]}" -t 4
perf_case perf.n8 30 "$braids" "$perf" all_reduce "${mid[@]}" -t 8

# BRAID_DEBUG=INFO: the log says how many channels each rank got (perf_goals.py reads it).
for c in "${channels[@]}"; do
  perf_case "perf.channels$c" 20 "$braids" env NCCL_MAX_NCHANNELS="$c" BRAID_DEBUG=INFO \
    "$perf" all_reduce -b "$sweep_bytes" -e "$sweep_bytes" -n 5 -w 2 -t 2
done
# An odd count of floats: no channel's part, and no chunk, starts on a 16-byte boundary.
perf_case perf.odd_count 20 "$braids" "$perf" all_reduce -b $((odd_count * 4)) \
  -e $((odd_count * 4)) -n 5 -w 2 -t 2
perf_case perf.types_ops 30 "$braids" "$perf" all_reduce -d all -o all -b 1K -e 64K -f 64 \
  -n 1 -w 1 -t 2
# Both protocols forced at N = 2, to see where LL stops paying off on this GPU (which
# src/tune/gpu_defaults.cc only guesses so far), and the one-shot all_reduce up to its 64 KiB.
perf_case perf.simple 20 "$braids" env BRAID_PROTO=simple "$perf" all_reduce "${small[@]}" -t 2
perf_case perf.ll 20 "$braids" env BRAID_PROTO=ll "$perf" all_reduce "${small[@]}" -t 2
perf_case perf.oneshot 20 "$braids" env BRAID_ALGO=oneshot "$perf" all_reduce "${oneshot[@]}" -t 2

if ((GC_EMULATED)); then
  gc_record perf.registers "NOT RUN" "cuobjdump reads a CUDA build's machine code: a real GPU's" \
    0 info
elif cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null); then
  dump=$GC_WORK/logs/perf.registers.log
  "$cuobjdump" --dump-resource-usage "$GC_LIBDIR/libnccl.so.2" >"$dump" 2>&1
  gc_record perf.registers INFO "$(python3 "$GC_LIB/perf_goals.py" registers "$dump")" 0 info \
    logs/perf.registers.log
else
  gc_record perf.registers "NOT RUN" "cuobjdump absent: no register or occupancy figures" 0 info
fi

# The goals, from the tables above (perf_goals.py); goals it did not get to record must not go
# unseen.
python3 "$GC_LIB/perf_goals.py" goals "$GC_WORK/logs" "$GC_CASES" --emulated "$GC_EMULATED" ||
  gc_record perf.goals FAIL "perf_goals.py exited $?: the goals it had not recorded were not judged"
exit 0
