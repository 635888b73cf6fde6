#!/usr/bin/env bash
# The installed tree as a user meets it. `cmake --install` puts the build into a temporary prefix,
# which is then moved, so that nothing can lean on the build tree or on the path it was installed
# to. In the moved tree: exactly the files braid ships, headers that compile alone, the example
# project built with find_package(braid) and with pkg-config and run, the tools run, and every
# binary loading the tree's own libnccl.so.2.
#
# usage: check_install.sh CMAKE BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL...
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 6 ]] || fail "usage: $0 CMAKE BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL..."
CMAKE=$1
shift
parse_common_args "$@"

step "cmake --install $BUILD_DIR"
run "$CHECK_TMP/install.log" "$CMAKE" --install "$BUILD_DIR" --prefix "$CHECK_TMP/staged"
mv "$CHECK_TMP/staged" "$CHECK_TMP/prefix"
prefix=$CHECK_TMP/prefix lib=$CHECK_TMP/prefix/$LIBDIR

step "what is installed"
# Everything but the documentation, sorted; nothing of the tests, braid_core or GoogleTest.
(cd "$prefix" && find . ! -type d ! -path './share/doc/*' | sed 's|^\./||' | sort) \
  >"$CHECK_TMP/installed"
{
  printf 'bin/%s\n' "${TOOLS[@]}"
  printf '%s\n' include/braid_ext.h include/nccl.h include/nccl_device.h
  # The device API's headers (docs/device-api.md), beside nccl.h.
  for header in barrier comm coop core gin lsa_barrier ptr utility window_layout; do
    echo "include/nccl_device/$header.h"
  done
  for file in libnccl.so libnccl.so.2 libnccl.so.2.32.3 pkgconfig/braid.pc \
    cmake/braid/braidConfig.cmake cmake/braid/braidConfigVersion.cmake \
    cmake/braid/braidTargets.cmake; do
    echo "$LIBDIR/$file"
  done
  # The per-configuration part of the exported targets (braidTargets-relwithdebinfo.cmake, ...).
  grep -E "^$LIBDIR/cmake/braid/braidTargets-[a-z]+\.cmake$" "$CHECK_TMP/installed" || true
} | sort >"$CHECK_TMP/expected"
diff "$CHECK_TMP/expected" "$CHECK_TMP/installed" >"$CHECK_TMP/files.diff" ||
  fail "the installed files differ from those expected (< expected, > installed)" \
    "$CHECK_TMP/files.diff"
[[ $(readlink "$lib/libnccl.so") == libnccl.so.2 &&
  $(readlink "$lib/libnccl.so.2") == libnccl.so.2.32.3 ]] ||
  fail "libnccl.so -> libnccl.so.2 -> libnccl.so.2.32.3 links are wrong"
[[ -f $prefix/share/doc/braid/README.md ]] || fail "README.md is not installed"
check_headers_compile "$prefix/include"

step "the tools, from the installed tree"
for tool in "${TOOLS[@]}"; do expect_no_build_paths "$prefix/bin/$tool"; done
expect_no_build_paths "$lib/libnccl.so.2"
# braid-perf is the tool that links libnccl.so.2 (the others link braid's core statically).
if [[ -x $prefix/bin/braid-perf ]]; then expect_nccl_from "$prefix/bin/braid-perf" "$lib"; fi
run_tools "$prefix/bin"

step "examples/allreduce with find_package(braid)"
build_example_cmake "$CHECK_TMP/example-cmake" -DCMAKE_PREFIX_PATH="$prefix"
# The prefix's package, not another one the machine may have.
grep -qx "braid_DIR:PATH=$lib/cmake/braid" "$CHECK_TMP/example-cmake/CMakeCache.txt" ||
  fail "find_package(braid) did not find $lib/cmake/braid" \
    "$CHECK_TMP/example-cmake/CMakeCache.txt"
expect_nccl_from "$CHECK_TMP/example-cmake/allreduce" "$lib"
run_example "$CHECK_TMP/example-cmake/allreduce"

step "examples/allreduce with pkg-config"
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH=$lib/pkgconfig
  build_example_pkgconfig "$CHECK_TMP/example-pkgconfig"
  expect_nccl_from "$CHECK_TMP/example-pkgconfig" "$lib"
  run_example "$CHECK_TMP/example-pkgconfig"
else
  echo "pkg-config is not installed: the pkg-config build is not checked"
fi
echo "PASS [$CHECK_NAME]"
