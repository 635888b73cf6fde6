#!/usr/bin/env bash
# scripts/gpu-check's phase preflight: what the machine is and whether the binaries can run on it,
# before any phase spends its minutes. On a GPU: the device, its compute mode, MPS, the driver's
# and CUDA's versions; everywhere: the tools the later phases use, the binaries' libraries, and one
# 8-byte all_reduce of two ranks as threads through braid on the device the phases will use, which
# must launch the engine's kernel on each rank (one rank alone would only copy).
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

gc_scope "that the device comes up, the binaries and their libraries load, and braid's engine \
kernel launches and is right for two ranks sharing the GPU" "$GC_ONE_GPU"

# have TOOL: TOOL's path, on PATH or in the CUDA toolkit.
have() { command -v "$1" 2>/dev/null || ls /usr/local/cuda/bin/"$1" 2>/dev/null; }

if ((GC_EMULATED)); then
  what="emulated GPU (BRAID_EMULATE_GPUS=$BRAID_EMULATE_GPUS): device memory is host memory,"
  what+=" streams are threads, a kernel launch runs the engine's CPU build; skipped: nvidia-smi,"
  what+=" braid-kernel-bench, NVIDIA's NCCL, the timing goals, PyTorch on CUDA,"
  what+=" compute-sanitizer and cuobjdump"
  gc_record preflight.mode INFO "$what"
else
  if smi=$(nvidia-smi --query-gpu=name,memory.total,compute_mode,driver_version \
    --format=csv,noheader 2>&1); then
    gc_record preflight.gpu PASS "$(echo "$smi" | cut -d, -f1,2 | paste -sd';')"
    mode=$(echo "$smi" | head -1 | cut -d, -f3 | xargs)
    case $mode in
      Default) gc_record preflight.compute_mode INFO "$mode: several processes may share the GPU" ;;
      Prohibited) gc_record preflight.compute_mode FAIL "$mode: no process may use the GPU" ;;
      *)
        why="one process at a time, so the cases with ranks as processes on one GPU"
        gc_record preflight.compute_mode INFO "$mode: $why (api.processes, sanitize) will fail"
        ;;
    esac
    cuda=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1)
    gc_record preflight.host INFO "kernel $(uname -r) (4.4.0: gVisor), $(nproc) cores"
    gc_record preflight.driver INFO "driver $(echo "$smi" | head -1 | cut -d, -f4 | xargs), $cuda"
  else
    gc_record preflight.gpu FAIL "nvidia-smi failed: $(echo "$smi" | tail -1)"
  fi
  if echo get_server_list | timeout 5 nvidia-cuda-mps-control >/dev/null 2>&1 ||
    pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1; then
    gc_record preflight.mps INFO "the MPS control daemon runs: ranks as processes share the SMs"
  else
    why="ranks as processes on one GPU time-slice (correct but slow)"
    gc_record preflight.mps INFO "no MPS: $why; ranks as threads of one process are the fast way"
  fi
fi

for tool in nvcc cmake compute-sanitizer cuobjdump; do
  if path=$(have "$tool"); then
    version=$("$path" --version 2>/dev/null | grep -Eo '(release |version )[0-9.]+' | head -1)
    gc_record "preflight.$tool" INFO "$path${version:+ ($version)}"
  else
    gc_record "preflight.$tool" INFO "absent"
  fi
done
probe='import torch; print(torch.__version__, "CUDA", torch.cuda.is_available())'
torch=$(timeout 20 python3 -c "$probe" 2>/dev/null) || torch="absent"
gc_record preflight.torch INFO "$torch"

# Every binary the phases run there, every library it needs found, and each test binary able to
# start (list its tests): a tree carried from another machine may need a library this one lacks
# (scripts/gpu-bundle carries hwloc's and udev's).
tests=(braid_gpu_tests braid_gpu_api_tests)
((GC_EMULATED)) && tests+=(braid_engine_emulated_tests)
missing=() unresolved=() unstarted=()
for f in "$GC_LIBDIR/libnccl.so.2" "$GC_BIN"/{braid-perf,braid-kernel-bench,braid-doctor} \
  "${tests[@]/#/$GC_BIN/}"; do
  if [[ ! -e $f ]]; then
    missing+=("${f##*/}")
  elif ldd "$f" 2>&1 | grep -q 'not found'; then
    unresolved+=("${f##*/}: $(ldd "$f" | grep 'not found' | awk '{print $1}' | paste -sd, -)")
  elif [[ $f == *_tests ]] && ! timeout 20 "$f" --gtest_list_tests >/dev/null 2>&1; then
    unstarted+=("${f##*/}")
  fi
done
if ((${#missing[@]} + ${#unresolved[@]} + ${#unstarted[@]})); then
  what="missing: ${missing[*]:-none}; libraries not found: ${unresolved[*]:-none}"
  gc_record preflight.binaries FAIL "$what; could not start: ${unstarted[*]:-none}"
else
  hwloc=$(ldd "$GC_LIBDIR/libnccl.so.2" | grep -o 'libhwloc[^ ]* => [^ ]*' | head -1)
  gc_record preflight.binaries PASS "in ${GC_BIN%/bin}, every library found (${hwloc:-no hwloc})"
fi

# One call through braid on the device the other phases use: the runtime comes up, and which; two
# ranks as threads, since N = 1 short-circuits to a copy and launches no kernel. braid's trace
# (BRAID_DEBUG=TRACE) logs each launch of the engine's kernel with the rank that made it.
first=(env BRAID_DEBUG=TRACE "$GC_BIN/braid-perf" all_reduce -b 8 -e 8 -n 1 -w 0 -c 1 -t 2)
if gc_run preflight.first_call 40 "${first[@]}"; then
  through=$(grep -m1 '^#  devices through' "$GC_LOG" | sed 's/^#  devices through //')
  device=$(grep -m1 -E '^#  Rank +0 ' "$GC_LOG" | sed -E 's/.*on device +[0-9]+: //')
  wrong=$(grep -m1 '^# Wrong elements' "$GC_LOG" | sed 's/^# Wrong elements *: *//')
  launched=$(grep -oE '\[[01]\] braid TRACE gpu: launched' "$GC_LOG" | cut -c2 | sort -u | wc -l)
  launches=$(grep -c 'braid TRACE gpu: launched' "$GC_LOG")
  if ((GC_RC != 0)); then
    gc_finish preflight.first_call FAIL "braid-perf exited $GC_RC: $(tail -1 "$GC_LOG")"
  elif [[ -z $through ]]; then
    gc_finish preflight.first_call FAIL "braid-perf ran on host memory: no device was seen"
  elif ((GC_EMULATED)) && [[ $through != emulated* ]]; then
    gc_finish preflight.first_call FAIL "not on the emulated GPU but through $through"
  elif ((!GC_EMULATED)) && [[ $through == emulated* ]]; then
    gc_finish preflight.first_call FAIL "on the emulated GPU, where a real one was asked for"
  elif [[ $wrong != "0 OK" ]]; then
    gc_finish preflight.first_call FAIL "wrong elements: ${wrong:-none counted}"
  elif ((launched != 2)); then
    gc_finish preflight.first_call FAIL \
      "the engine's kernel was launched by $launched of the 2 ranks (braid's trace): no kernel ran"
  else
    gc_finish preflight.first_call PASS "8 B all_reduce of 2 ranks as threads on $device, through \
$through: $launches launches of the engine's kernel, by both ranks; 0 wrong"
  fi
fi
exit 0
