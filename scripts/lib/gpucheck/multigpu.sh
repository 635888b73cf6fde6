#!/usr/bin/env bash
# scripts/gpu-check's phase multigpu: what only two GPUs or more can prove, run where they are
# (nvidia-smi -L; on the emulated GPU, BRAID_EMULATE_GPUS), NOT RUN where fewer are visible:
#   - the tests of braid_gpu_api_tests that need several GPUs (GC_MULTI_GPU_TESTS: processes on
#     two and three GPUs, the caller's device kept, one-way peer access, CUDA_VISIBLE_DEVICES,
#     suspend and resume), a process per test;
#   - braid-perf with a rank on each GPU as threads of one process, every rank's device checked;
#   - the same with each rank a process that sees its own GPU alone (CUDA_VISIBLE_DEVICES=RANK, as
#     torchrun and Slurm launch them), every rank's PCI bus ID checked to differ (braid's INFO
#     line "gpu: rank R on device D (NAME, BUS ID)");
#   - NVIDIA's NCCL on the same table as braid's threads (the one comparison of the two libraries
#     that means something: a rank on each GPU, where both run kernels), a figure, not a goal.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"
source "$GC_LIB/perf_case.sh"

gc_scope "with two GPUs or more: ranks each on a GPU of its own, as threads and as processes \
that each see one GPU, the API's tests that need several GPUs, and braid beside NVIDIA's NCCL" \
"any of this: with fewer than two GPUs visible the phase is NOT RUN; and, on one machine, \
nothing between hosts"

if ((GC_EMULATED)); then
  gpus=${BRAID_EMULATE_GPUS:-0} seen="BRAID_EMULATE_GPUS=${BRAID_EMULATE_GPUS:-}"
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  seen="nvidia-smi -L"
  if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
    visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
    ((visible >= gpus)) || gpus=$visible
    seen+=", CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
  fi
fi
[[ $gpus =~ ^[0-9]+$ ]] || gpus=0
if ((gpus < 2)); then
  plural=s
  ((gpus != 1)) || plural=""
  gc_record multigpu.gpus "NOT RUN" "$gpus GPU$plural visible ($seen): nothing between GPUs was \
checked: NVLink or PCIe between them, CUDA IPC and peer access from one to another, ranks each \
on a GPU of its own, NVIDIA's NCCL beside braid"
  exit 0
fi
topology=logs/multigpu.topology.log links=""
mkdir -p "$GC_WORK/logs"
if ((!GC_EMULATED)) && nvidia-smi topo -m >"$GC_WORK/$topology" 2>&1; then
  # The matrix's row GPU0: its link to GPU1 (NV<n>: NVLink; PIX, PXB, PHB, NODE, SYS: PCIe).
  links=", GPU0 to GPU1: $(awk '$1 == "GPU0" { print $3; exit }' "$GC_WORK/$topology")"
else
  topology=""
fi
gc_record multigpu.gpus INFO "$gpus GPUs visible ($seen)$links" 0 info "$topology"

gc_gtest multigpu.tests 60 "$GC_BIN/braid_gpu_api_tests" "$GC_MULTI_GPU_TESTS" each

perf=$GC_BIN/braid-perf
colls=all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv,gather,scatter
if ((GC_EMULATED)); then
  braids="emulated GPU" big=(-b 8 -e 1M -f 16 -n 2 -w 1) small=(-b 8 -e 64K -f 64 -n 1 -w 1)
else
  braids="CUDA (braid's" big=(-b 8 -e 256M -f 4 -n 20 -w 5) small=(-b 8 -e 1M -f 16 -n 5 -w 2)
fi

# devices_case NAME: whether the last braid-perf table's ranks were on as many devices as GPUs.
devices_case() {
  local spread
  spread=$(grep -E '^#  Rank +[0-9]+ ' "$GC_LOG" | sed -E 's/.*on device +([0-9]+):.*/\1/' |
    sort -u | wc -l)
  if ((spread == gpus)); then
    gc_record "$1.devices" PASS "the $gpus ranks on $spread devices, one each"
  else
    gc_record "$1.devices" FAIL "the $gpus ranks on $spread device(s), not one each"
  fi
}
perf_case multigpu.threads 40 "$braids" "$perf" all_reduce "${big[@]}" -t "$gpus"
[[ $(gc_last_verdict) != PASS ]] || devices_case multigpu.threads
perf_case multigpu.threads_collectives 30 "$braids" "$perf" "$colls" "${small[@]}" -t "$gpus"

# Each rank a process seeing its own GPU alone: only rank 0 prints the tables.
if gc_run multigpu.processes 40 "$GC_LIB/rank_processes.sh" "$gpus" own "$GC_ROOT" \
  env BRAID_DEBUG=INFO "$perf" "$colls" "${small[@]}"; then
  ok=$(grep -cE '^\[rank 0\] # Wrong elements *: *0 OK' "$GC_LOG")
  # "gpu: rank R on device D (NAME, BUS ID) with ...", as src/comm/gpu_side.cc logs it.
  bus='s/^\[rank [0-9]+\] .* braid INFO gpu: rank [0-9]+ on device [0-9]+ '
  bus+='\(.*, ([^,)]+)\) with .*/\1/p'
  buses=$(sed -nE "$bus" "$GC_LOG" | sort -u | wc -l)
  if gc_timed_out; then
    gc_finish multigpu.processes FAIL "did not finish within $GC_LIMIT s"
  elif ((GC_RC != 0)); then
    gc_finish multigpu.processes FAIL "exit status $GC_RC: $(grep -m1 -E 'braid-perf: |error' \
      "$GC_LOG" | cut -c1-160)"
  elif ((ok != 9)); then
    gc_finish multigpu.processes FAIL "rank 0 printed $ok of the 9 collectives' tables with 0 wrong"
  elif ((buses != gpus)); then
    gc_finish multigpu.processes FAIL "the $gpus processes were on $buses PCI bus ID(s) (braid's \
INFO lines), not one each"
  else
    gc_finish multigpu.processes PASS "$gpus processes, each seeing its own GPU ($buses PCI bus \
IDs): 9 collectives, 0 wrong"
  fi
fi

if ((GC_EMULATED)); then
  gc_record multigpu.nccl "NOT RUN" "NVIDIA's NCCL needs real GPUs"
elif nccl=$(python3 "$GC_LIB/nvidia_nccl.py"); then
  # A folder holding NVIDIA's library alone, under the name braid-perf asks for: LD_LIBRARY_PATH
  # comes before braid-perf's RUNPATH.
  mkdir -p "$GC_WORK/nvidia-nccl" && ln -sf "$nccl" "$GC_WORK/nvidia-nccl/libnccl.so.2"
  perf_case multigpu.nccl 40 "CUDA (braid-perf's" env \
    LD_LIBRARY_PATH="$GC_WORK/nvidia-nccl${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$perf" all_reduce "${big[@]}" -t "$gpus"
  if [[ $(gc_last_verdict) == PASS && $(gc_last_verdict multigpu.threads) == PASS ]]; then
    logs=$GC_WORK/logs
    if line=$(python3 "$GC_LIB/perf_goals.py" versus "$logs/multigpu.threads.log" \
      "$logs/multigpu.nccl.log"); then
      gc_record multigpu.vs_nccl INFO "$gpus ranks, one a GPU: $line"
    else
      gc_record multigpu.vs_nccl FAIL "the tables of braid and NCCL cannot be compared: $line"
    fi
  fi
else
  gc_record multigpu.nccl "NOT RUN" \
    "NVIDIA's libnccl.so.2 not found (its wheel, torch/lib, CUDA's lib64): nothing to compare with"
fi
exit 0
