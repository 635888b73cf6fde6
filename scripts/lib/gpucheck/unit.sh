#!/usr/bin/env bash
# scripts/gpu-check's phase unit: the engine's kernels alone (tests/engine). Every (datatype, op)
# pair's receive-reduce-copy against the host loops, bit for bit, and copies at every offset within
# a pack; the LL protocol's messages across flag wraps and launches, and its waits that end at
# their deadline. On a GPU braid_gpu_tests runs the CUDA kernels; on the emulated GPU the same
# tests built for it, braid_engine_emulated_tests, run the kernels' CPU build.
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

gc_scope "that the engine's kernels compute what the host loops do, bit for bit, for every \
(type, op), and that LL messages and waits hold, on this GPU's architecture" "$GC_ONE_GPU; nor \
how a kernel's loads and stores order when a peer GPU writes its memory over NVLink or PCIe"

tests=$GC_BIN/braid_gpu_tests
((GC_EMULATED)) && tests=$GC_BIN/braid_engine_emulated_tests
gc_gtest unit.kernels 150 "$tests" 'EngineKernel.*'
gc_gtest unit.ll 150 "$tests" 'EngineLl.*'
# Whatever else the binary holds (tests/gpu/), so that a test added there is not left out here.
others='-EngineKernel.*:EngineLl.*'
if [[ -x $tests ]] && "$tests" --gtest_list_tests --gtest_filter="$others" | grep -q '^  '; then
  gc_gtest unit.other 150 "$tests" "$others"
fi
exit 0
