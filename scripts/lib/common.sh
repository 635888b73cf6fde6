# Shared by scripts/test, scripts/demo and the bench scripts: installs the
# Debian packages braid needs (only those missing) and builds into build/.

BRAID_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BRAID_BUILD="${BRAID_BUILD:-$BRAID_ROOT/build}"

# Packages for building, testing and benchmarking against OpenMPI; hwloc for
# topology discovery (its lstopo writes the XML braid-topo --load reads); rdma-core's verbs
# headers for the verbs transport (the library is dlopen'ed); pugixml for reading topology files.
BRAID_PACKAGES=(cmake g++ make ninja-build pkg-config libgtest-dev libgmock-dev libbenchmark-dev
                libopenmpi-dev openmpi-bin clang-format libhwloc-dev hwloc iproute2
                libibverbs-dev libpugixml-dev)

# clang 19 and its compiler-rt (libFuzzer and the sanitizers' runtimes) for the fuzz targets
# (scripts/fuzz, tests/fuzz) and the sanitizer builds (scripts/sanitize). 19 rather than
# Debian's default 14: its ASan locks its allocator across fork(), which the forking tests need
# (docs/reliability.md, "Sanitizers").
# llvm-19 for its llvm-symbolizer, which turns a report's addresses into file:line.
BRAID_CLANG_PACKAGES=(clang-19 libclang-rt-19-dev llvm-19)
BRAID_SYMBOLIZER=/usr/lib/llvm-19/bin/llvm-symbolizer
BRAID_CC=clang-19
BRAID_CXX=clang++-19

# PyTorch 1.13 for braid_torch (python/) and its tests: Debian's, for /usr/bin/python3. Without
# their recommendations (a desktop's worth of GTK and Qt), which the backend does not need.
BRAID_TORCH_PACKAGES=(python3-torch libtorch-dev pybind11-dev)

# braid_prefer_system_python: Debian's Python for every script and test that runs `python3`, the
# one braid_torch is built for (BRAID_TORCH_PYTHON), whose start takes 0.05 s. A pyenv shim first
# on PATH (this VM's image has one) runs shell scripts before each start, 0.36-0.63 s here, and the
# suite starts Python hundreds of times. A folder of one link, first on PATH, leaves every other
# tool as it was. For scripts/test only: gpu-check may need a Python of its own (PyTorch with
# CUDA, NVIDIA's NCCL wheel).
braid_prefer_system_python() {
  [[ -x /usr/bin/python3 && $(command -v python3) != /usr/bin/python3 ]] || return 0
  local dir
  dir="${TMPDIR:-/tmp}/braid-python3-$(id -u)"
  mkdir -p "$dir" && ln -sfn /usr/bin/python3 "$dir/python3" || return 0
  export PATH="$dir:$PATH"
}

# braid_apt_install [apt-get options] -- packages...: installs those of the packages missing.
braid_apt_install() {
  local options=()
  while [ "$1" != "--" ]; do options+=("$1"); shift; done
  shift
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    [ -n "${BRAID_APT_UPDATED:-}" ] || $sudo apt-get update -qq
    BRAID_APT_UPDATED=1
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${options[@]}" "${missing[@]}" \
      >/dev/null
  fi
}

braid_install_deps() {
  braid_apt_install -- "${BRAID_PACKAGES[@]}"
  braid_apt_install --no-install-recommends -- "${BRAID_CLANG_PACKAGES[@]}"
  braid_apt_install --no-install-recommends -- "${BRAID_TORCH_PACKAGES[@]}"
}

# braid_generator DIR: the generator option for a build in DIR. Ninja where it is installed, for
# a folder not yet configured: on two cores it keeps both busy across targets, where make waits
# for each library to link. A folder configured before keeps its generator, as CMake requires.
braid_generator() {
  if [[ ! -f $1/CMakeCache.txt ]] && command -v ninja >/dev/null; then echo "-GNinja"; fi
}

# braid_build [targets...]: configures build/ (CUDA when nvcc is found) and
# builds the given targets, or everything.
braid_build() {
  # BRAID_CUDA_ARCHS, where set, picks the CUDA architectures (scripts/test: sm_90 alone);
  # BRAID_SANITIZED_SUITE=OFF leaves out the sanitized build's test binaries (scripts/test);
  # BRAID_LIBRARY_FLAGS, where set, replaces the library's "-O3 -g -DNDEBUG" (scripts/test);
  # BRAID_CUDA_FLAGS are CMAKE_CUDA_FLAGS, reset to none where unset (scripts/test: less device
  # optimization for kernels that never run there), so that no later build keeps them.
  cmake -S "$BRAID_ROOT" -B "$BRAID_BUILD" $(braid_generator "$BRAID_BUILD") --no-warn-unused-cli \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    ${BRAID_CUDA_ARCHS:+-DBRAID_CUDA_ARCHS=$BRAID_CUDA_ARCHS} \
    ${BRAID_SANITIZED_SUITE:+-DBRAID_SANITIZED_SUITE=$BRAID_SANITIZED_SUITE} \
    ${BRAID_LIBRARY_FLAGS:+"-DBRAID_RELWITHDEBINFO_FLAGS=$BRAID_LIBRARY_FLAGS"} \
    "-DCMAKE_CUDA_FLAGS=${BRAID_CUDA_FLAGS-}" >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$BRAID_BUILD" -j"$(nproc)" "${targets[@]}"
}
