#!/usr/bin/env bash
# scripts/gpu-check's phase torch: PyTorch's own job on backend "nccl" (tests/python/gpu/
# torch_nccl_job.py: all_reduce of float32 and bfloat16, broadcast, all_gather_into_tensor,
# reduce_scatter_tensor, a DDP step) with braid's libnccl.so.2 preloaded in place of the NCCL
# PyTorch links, and the same job on NVIDIA's: N = 1 compared result by result, and N = 2 ranks on
# the one GPU against its references on the CPU (NVIDIA's NCCL refuses two ranks on one GPU).
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

# Without PyTorch on CUDA, or its NCCL backend, there is no job to run and nothing to compare
# braid's library with: NOT RUN, which the summary counts apart from PASS and SKIP.
if ((GC_EMULATED)); then
  twin="ctest python.gpu_job_on_cpu.n2 runs the job on CPU tensors"
  gc_record torch.job "NOT RUN" "PyTorch's CUDA tensors need a real GPU; $twin"
  exit 0
fi
probe='import torch, torch.distributed as d
assert torch.cuda.is_available(), "no CUDA device seen"
assert d.is_available() and d.is_nccl_available(), "built without NCCL"'
if ! why=$(timeout 120 python3 -c "$probe" 2>&1); then
  gc_record torch.job "NOT RUN" \
    "PyTorch on CUDA with NCCL not found ($(command -v python3): $(echo "$why" | tail -1))"
  exit 0
fi

launch=(python3 "$GC_ROOT/tests/python/launch.py")
job=$GC_ROOT/tests/python/gpu/torch_nccl_job.py
# torch_case NAME N WHOSE [VAR=VALUE...]: the job on N ranks, rank 0's results in
# $GC_WORK/torch_NAME.pt; it passes when every rank's results match and the library the process
# loaded is WHOSE (braid: ours, preloaded; nvidia: any other).
torch_case() {
  local name=$1 n=$2 whose=$3
  shift 3
  gc_run "torch.$name" 200 env BRAID_TORCH_TEST_TIMEOUT=180 PYTHONUNBUFFERED=1 "$@" \
    "${launch[@]}" "$n" "$job" "$GC_WORK/torch_$name.pt" || return 0
  local lib ours
  lib=$(grep -m1 -o 'libnccl: .*' "$GC_LOG" | sed 's/^libnccl: //')
  ours=$(readlink -f "$GC_LIBDIR/libnccl.so.2")
  if ((GC_RC != 0)); then
    gc_finish "torch.$name" FAIL "exit status $GC_RC: $(grep -m1 -i error "$GC_LOG" | cut -c1-160)"
  elif [[ $whose == braid && $lib != *"$ours"* ]] ||
    [[ $whose == nvidia && $lib == *"$ours"* ]]; then
    gc_finish "torch.$name" FAIL "the job loaded ${lib:-no libnccl}, not $whose's library"
  else
    gc_finish "torch.$name" PASS "$n rank(s), every result matches the CPU's; loaded $lib"
  fi
}
torch_case n1_braid 1 braid LD_PRELOAD="$GC_LIBDIR/libnccl.so.2"
torch_case n1_nccl 1 nvidia
torch_case n2_braid 2 braid LD_PRELOAD="$GC_LIBDIR/libnccl.so.2"
if [[ -f $GC_WORK/torch_n1_braid.pt && -f $GC_WORK/torch_n1_nccl.pt ]]; then
  if gc_run torch.n1_same_results 60 python3 "$GC_ROOT/tests/python/gpu/compare_results.py" \
    "$GC_WORK/torch_n1_braid.pt" "$GC_WORK/torch_n1_nccl.pt"; then
    if ((GC_RC == 0)); then
      gc_finish torch.n1_same_results PASS "$(tail -1 "$GC_LOG")"
    else
      gc_finish torch.n1_same_results FAIL "$(tail -1 "$GC_LOG")"
    fi
  fi
else
  # Nothing to compare: said, as the runs before it ended, rather than left out of the table. A
  # run that passed without its results fails; one cut short leaves this INCOMPLETE.
  verdict="NOT RUN" why=()
  for side in n1_braid n1_nccl; do
    [[ ! -f $GC_WORK/torch_$side.pt ]] || continue
    was=$(gc_verdict "torch.$side")
    why+=("torch.$side ${was:-did not run}")
    if [[ $was == PASS ]]; then
      verdict=FAIL why[-1]+=" but left no results"
    elif [[ $was == INCOMPLETE && $verdict != FAIL ]]; then
      verdict=INCOMPLETE
    fi
  done
  printf -v said '%s; ' "${why[@]}"
  gc_record torch.n1_same_results "$verdict" "nothing to compare: ${said%; }"
fi
exit 0
