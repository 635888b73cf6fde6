# Shared by scripts/test, scripts/demo and the bench scripts: installs the
# Debian packages braid needs (only those missing) and builds into build/.

BRAID_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BRAID_BUILD="${BRAID_BUILD:-$BRAID_ROOT/build}"

# Packages for building, testing and benchmarking against OpenMPI; hwloc for
# topology discovery (its lstopo writes the XML braid-topo --load reads).
BRAID_PACKAGES=(cmake g++ make pkg-config libgtest-dev libgmock-dev libbenchmark-dev
                libopenmpi-dev openmpi-bin clang-format libhwloc-dev hwloc)

braid_install_deps() {
  local missing=()
  for p in "${BRAID_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# braid_build [targets...]: configures build/ (CUDA when nvcc is found) and
# builds the given targets, or everything.
braid_build() {
  cmake -S "$BRAID_ROOT" -B "$BRAID_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$BRAID_BUILD" -j"$(nproc)" "${targets[@]}"
}
