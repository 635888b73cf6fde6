#!/usr/bin/env bash
# scripts/gpu-check's phase api: GPU communicators through the C API (tests/gpu_api and
# tests/gpu_api_cuda, braid_gpu_api_tests). A process per test, as ctest runs them, so that one
# test's state (a CUDA error that sticks to its context, a runtime used before a fork) cannot fail
# the next; the collectives matrices, hundreds of small cases, in one process. Ranks as threads of
# one process first, the fast way to share a GPU and the likeliest to find a kernel's fault; then
# ranks as processes (CUDA IPC, pinned host FIFOs), peers lost on purpose and the flight recorder;
# the one-mebi-element matrix last. The tests that need two GPUs or more are the multigpu phase's
# (GC_MULTI_GPU_TESTS). The same binary runs on the emulated GPU, where braid's device seam is the
# emulation.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

gc_scope "the C API's calls, protocols and collectives with ranks as threads and as processes \
sharing one GPU, CUDA IPC between processes of that GPU, faults and the flight recorder" \
"$GC_ONE_GPU; the tests that need two GPUs or more are phase multigpu's"

tests=$GC_BIN/braid_gpu_api_tests
gc_gtest api.threads.calls 120 "$tests" 'GpuApi.*' each
gc_gtest api.threads.protocols 120 "$tests" 'Forced/GpuProtocols.*:GpuDeterministic.*' each
gc_gtest api.threads.matrix 180 "$tests" 'Threads/GpuCollectivesMatrix.*'
if ((GC_EMULATED)); then
  gc_record api.threads.graph_capture "NOT RUN" \
    "CUDA graphs need the CUDA runtime itself: a real GPU"
else
  gc_gtest api.threads.graph_capture 60 "$tests" 'GraphCapture.*'
fi
# Graph replays and eager calls of one communicator in turn; every call leaving the caller's device.
gc_gtest api.ordering 60 "$tests" 'GpuCaptureOrder.*:GpuCurrentDevice.*' each
gc_gtest api.processes 150 "$tests" "GpuProcesses.*:GpuLlProcesses.*-$GC_MULTI_GPU_TESTS" each
gc_gtest api.faults 120 "$tests" 'GpuKillTrials.*:GpuFlightRecorder.*' each
gc_gtest api.threads.matrix_large 120 "$tests" 'Threads/GpuCollectivesMatrixLarge.*'
exit 0
