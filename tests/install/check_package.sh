#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` from the build tree, its contents, `dpkg -i`, the example
# project built against /usr with find_package(braid) and with pkg-config and run, the tools run,
# then `dpkg -P` and every file the package had installed gone. It changes the system, so it runs
# only as root and where nothing of the package's is there already (it skips, exit 77, otherwise),
# and the EXIT trap removes the package whatever happens in between.
#
# usage: check_package.sh CPACK CMAKE BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL...
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $# -ge 7 ]] || fail "usage: $0 CPACK CMAKE BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL..."
CPACK=$1 CMAKE=$2
shift 2
parse_common_args "$@"
prefix=/usr lib=/usr/$LIBDIR

[[ $(id -u) -eq 0 ]] || skip "installing a package needs root"
for tool in dpkg dpkg-deb dpkg-query "$CPACK"; do
  command -v "$tool" >/dev/null || skip "$tool is not available"
done
package_status() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || echo not-installed; }
for other in braid libnccl2 libnccl-dev; do
  [[ $(package_status "$other") == not-installed ]] ||
    skip "package $other is on this machine; this check installs and removes braid's"
done

step "cpack -G DEB"
run "$CHECK_TMP/cpack.log" "$CPACK" -G DEB --config "$BUILD_DIR/CPackConfig.cmake" \
  -B "$CHECK_TMP/package"
debs=("$CHECK_TMP"/package/braid_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "cpack made no single braid_*.deb" \
  "$CHECK_TMP/cpack.log"
deb=${debs[0]}

step "contents of $(basename "$deb")"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$CHECK_TMP/contents"
for file in "$lib/libnccl.so.2" "$lib/libnccl.so.2.32.3" "$lib/libnccl.so" \
  "$prefix/include/nccl.h" "$prefix/include/braid_ext.h" "$prefix/include/nccl_device.h" \
  "$prefix/include/nccl_device/core.h" "$lib/pkgconfig/braid.pc" \
  "$lib/cmake/braid/braidConfig.cmake" "$lib/cmake/braid/braidConfigVersion.cmake" \
  "${TOOLS[@]/#/$prefix/bin/}"; do
  grep -qxF "$file" "$CHECK_TMP/contents" || fail "the package lacks $file" "$CHECK_TMP/contents"
done
! grep -E '\.a$|_tests$|gtest' "$CHECK_TMP/contents" >"$CHECK_TMP/extra" ||
  fail "the package ships build-only files" "$CHECK_TMP/extra"
dpkg-deb -f "$deb" Depends >"$CHECK_TMP/depends"
grep -q libhwloc "$CHECK_TMP/depends" || fail "the package does not depend on hwloc" \
  "$CHECK_TMP/depends"
# Files already on the system would be overwritten now and deleted by the removal.
grep -v '/$' "$CHECK_TMP/contents" >"$CHECK_TMP/contents-files"
while read -r file; do
  [[ ! -e $file && ! -L $file ]] || skip "$file exists already; it would be replaced"
done <"$CHECK_TMP/contents-files"

# Whether the loader's cache (ldconfig -p) has a libnccl.so.2 at the package's path, which the
# postinst and postrm scripts' ldconfig add and remove. /lib may be a link to /usr/lib.
cache_has_package_nccl() {
  local want path
  want=$(readlink -f "$lib/libnccl.so.2")
  ldconfig -p >"$CHECK_TMP/ldconfig.out"
  while read -r path; do
    [[ $(readlink -f "$path") != "$want" ]] || return 0
  done < <(awk '$1 == "libnccl.so.2" { print $NF }' "$CHECK_TMP/ldconfig.out")
  return 1
}

undo_system_changes() {
  if [[ $(package_status braid) != not-installed ]]; then
    echo "== removing the package braid"
    dpkg -P braid >"$CHECK_TMP/undo.log" 2>&1 || cat "$CHECK_TMP/undo.log" >&2
  fi
}

step "dpkg -i"
if ! timeout "$STEP_LIMIT_S" dpkg -i "$deb" >"$CHECK_TMP/dpkg-i.log" 2>&1; then
  # A dependency is missing: apt-get fetches it and finishes the installation.
  run "$CHECK_TMP/apt.log" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb"
fi
[[ $(package_status braid) == installed ]] || fail "braid is not installed" "$CHECK_TMP/dpkg-i.log"
dpkg -L braid >"$CHECK_TMP/listed"
while read -r path; do
  [[ -e $path ]] || fail "dpkg -L lists $path, which is not there"
  [[ -d $path ]] || echo "$path"
done <"$CHECK_TMP/listed" >"$CHECK_TMP/files"
cache_has_package_nccl || fail "the loader's cache does not know $lib/libnccl.so.2"

step "the headers and tools in $prefix"
check_headers_compile "$prefix/include"
run_tools "$prefix/bin"
if [[ -x $prefix/bin/braid-perf ]]; then expect_nccl_from "$prefix/bin/braid-perf" "$lib"; fi

step "examples/allreduce against $prefix with find_package(braid)"
build_example_cmake "$CHECK_TMP/example-cmake"
grep -qx "braid_DIR:PATH=$lib/cmake/braid" "$CHECK_TMP/example-cmake/CMakeCache.txt" ||
  fail "find_package(braid) did not find $lib/cmake/braid" \
    "$CHECK_TMP/example-cmake/CMakeCache.txt"
expect_nccl_from "$CHECK_TMP/example-cmake/allreduce" "$lib"
run_example "$CHECK_TMP/example-cmake/allreduce"

step "examples/allreduce against $prefix with pkg-config"
if command -v pkg-config >/dev/null; then
  unset PKG_CONFIG_PATH
  build_example_pkgconfig "$CHECK_TMP/example-pkgconfig"
  expect_nccl_from "$CHECK_TMP/example-pkgconfig" "$lib"
  run_example "$CHECK_TMP/example-pkgconfig"
fi

step "dpkg -P braid"
run "$CHECK_TMP/dpkg-P.log" dpkg -P braid
while read -r file; do
  [[ ! -e $file && ! -L $file ]] || fail "$file is still there after dpkg -P"
done <"$CHECK_TMP/files"
for dir in "$lib/cmake/braid" "$prefix/share/doc/braid"; do
  [[ ! -e $dir ]] || fail "$dir is still there after dpkg -P"
done
if dpkg -s braid >"$CHECK_TMP/status" 2>&1; then
  fail "dpkg -s still knows braid" "$CHECK_TMP/status"
fi
grep -q "not installed" "$CHECK_TMP/status" || fail "dpkg -s braid says" "$CHECK_TMP/status"
! cache_has_package_nccl || fail "the loader's cache still has $lib/libnccl.so.2"
echo "PASS [$CHECK_NAME]"
