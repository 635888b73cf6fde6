# shellcheck shell=bash
# Sourced by scripts/gpu-check and scripts/gpu-bundle: configures and builds, for sm_90 alone, the
# targets the GPU check runs, so that a tree built here and carried to a GPU machine and a tree
# built there are the same build.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# What the check runs: braid's library, its benchmarks, the doctor that reads flight-recorder
# dumps, the two test binaries of label gpu (braid_gpu_api_tests runs on the emulated GPU too),
# the engine's tests built for the emulated GPU (braid_gpu_tests' skip there), and tests/verdict's
# lying library, which GPU_CHECK_BREAK preloads to break a case on purpose.
GPU_CHECK_TARGETS=(nccl braid-perf braid-kernel-bench braid-doctor braid_gpu_tests
  braid_gpu_api_tests braid_engine_emulated_tests braid_lying_nccl)

# gpu_build BUILD LOG: configures BUILD and builds GPU_CHECK_TARGETS with GPU_CHECK_JOBS jobs (all
# cores by default), the output to LOG. The binaries find libnccl.so.2, and libnccl.so.2 finds
# the libraries carried beside it, through $ORIGIN: the tree runs wherever it is copied to.
# braid_gpu_api_tests finds braid-doctor on PATH for the same reason.
gpu_build() {
  local build=$1 log=$2 deps="$BRAID_ROOT/.gpu-deps"
  # sm_90's machine code alone (no PTX), its fatbins compressed: the kernels' code, copied into
  # libnccl.so.2 and both engine test binaries, shrinks from 26 MB to under 1 MB each, which keeps
  # scripts/gpu-bundle's folder within what a device machine takes with one call.
  # shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
  local args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRAID_CUDA=ON -DBRAID_CUDA_ARCHS=90-real
    -DCMAKE_CUDA_FLAGS=-Xfatbin=-compress-all -DBRAID_SANITIZED_SUITE=ON -DBRAID_BUILD_TORCH=OFF
    -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON
    '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' -DBRAID_TEST_DOCTOR_ON_PATH=ON)
  # A GPU machine without hwloc's, rdma-core's, pugixml's or GoogleTest's packages builds with the
  # copies scripts/gpu-check --prepare put in .gpu-deps/.
  if ! pkg-config --exists hwloc 2>/dev/null && [[ -d $deps/hwloc ]]; then
    args+=(-DBRAID_HWLOC_ROOT="$deps/hwloc")
  fi
  if [[ ! -e /usr/include/infiniband/verbs.h && -d $deps/verbs ]]; then
    args+=(-DBRAID_VERBS_ROOT="$deps/verbs")
  fi
  if [[ ! -e /usr/include/pugixml.hpp && -d $deps/pugixml ]]; then
    args+=(-DBRAID_PUGIXML_ROOT="$deps/pugixml")
  fi
  if [[ ! -e /usr/include/gtest/gtest.h && ! -e /usr/local/include/gtest/gtest.h &&
    -d $deps/googletest ]]; then
    args+=(-DBRAID_GTEST_SOURCE="$deps/googletest")
  fi
  local targets=() t generator
  for t in "${GPU_CHECK_TARGETS[@]}"; do targets+=(--target "$t"); done
  generator=$(braid_generator "$build")
  cmake -S "$BRAID_ROOT" -B "$build" ${generator:+"$generator"} "${args[@]}" >>"$log" 2>&1 &&
    cmake --build "$build" -j"${GPU_CHECK_JOBS:-$(nproc)}" "${targets[@]}" >>"$log" 2>&1
}
