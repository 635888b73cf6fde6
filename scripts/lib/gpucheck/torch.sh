#!/usr/bin/env bash
# scripts/gpu-check's phase torch: PyTorch's own job on backend "nccl" (tests/python/gpu/
# torch_nccl_job.py: all_reduce of float32 and bfloat16, broadcast, all_gather_into_tensor,
# reduce_scatter_tensor, a DDP step) with braid's libnccl.so.2 preloaded in place of the NCCL
# PyTorch links, N = 1 and 2 ranks on the one GPU, each against its references on the CPU. Not
# NVIDIA's NCCL: it refuses two ranks on one GPU, and at N = 1 every collective is a copy of the
# input, which the CPU's references already check.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

gc_scope "that PyTorch's backend \"nccl\" runs on braid's library, its collectives and a DDP \
step matching the CPU's, with one rank and with two ranks sharing the GPU" "$GC_ONE_GPU; nor a \
DDP job of a GPU a rank, as PyTorch runs one"
gc_record torch.nccl INFO "NVIDIA's NCCL not run beside braid's: it refuses two ranks on one \
GPU, and at N = 1 each collective is a copy of the input, which the CPU's references check"

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
if ! why=$(timeout 30 python3 -c "$probe" 2>&1); then
  gc_record torch.job "NOT RUN" \
    "PyTorch on CUDA with NCCL not found ($(command -v python3): $(echo "$why" | tail -1))"
  exit 0
fi

launch=(python3 "$GC_ROOT/tests/python/launch.py")
job=$GC_ROOT/tests/python/gpu/torch_nccl_job.py
# torch_case NAME N: the job on N ranks with braid's library preloaded, rank 0's results in
# $GC_WORK/torch_NAME.pt; it passes when every rank's results match the CPU's and the library the
# process loaded is braid's.
torch_case() {
  local name=$1 n=$2
  gc_run "torch.$name" 50 env BRAID_TORCH_TEST_TIMEOUT=45 PYTHONUNBUFFERED=1 \
    LD_PRELOAD="$GC_LIBDIR/libnccl.so.2" "${launch[@]}" "$n" "$job" "$GC_WORK/torch_$name.pt" ||
    return 0
  local lib ours
  lib=$(grep -m1 -o 'libnccl: .*' "$GC_LOG" | sed 's/^libnccl: //')
  ours=$(readlink -f "$GC_LIBDIR/libnccl.so.2")
  if ((GC_RC != 0)); then
    gc_finish "torch.$name" FAIL "exit status $GC_RC: $(grep -m1 -i error "$GC_LOG" | cut -c1-160)"
  elif [[ $lib != *"$ours"* ]]; then
    gc_finish "torch.$name" FAIL "the job loaded ${lib:-no libnccl}, not braid's library"
  else
    gc_finish "torch.$name" PASS "$n rank(s), every result matches the CPU's; loaded $lib"
  fi
}
torch_case n1_braid 1
torch_case n2_braid 2
exit 0
