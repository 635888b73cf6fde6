# Shared by the checks of the installed tree and of the Debian package (sourced, not run).
#
# Both take, after their own leading arguments: BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL...
# (the build tree to install from, examples/allreduce, CMAKE_INSTALL_LIBDIR, the compilers, the
# tools the install ships). Each works in a temporary directory that the EXIT trap removes. Every
# step runs under a time limit, so that a hang fails the check while its trap can still clean up.

# shellcheck shell=bash

CHECK_NAME=$(basename "$0" .sh)
CHECK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/braid-install.XXXXXX")
STEP_LIMIT_S=${STEP_LIMIT_S:-120}

# What a check must undo before its files go (check_package.sh removes the package); default none.
undo_system_changes() { :; }

check_cleanup() {
  undo_system_changes
  rm -rf "$CHECK_TMP"
}
trap check_cleanup EXIT
trap 'exit 1' INT TERM

# The loader must find libnccl.so.2 by the installed files alone, never by the caller's paths.
unset LD_LIBRARY_PATH

# shellcheck disable=SC2034  # the variables are for the scripts that source this file
parse_common_args() {
  [[ $# -ge 5 ]] || fail "usage: BUILD_DIR EXAMPLE_DIR LIBDIR CC CXX TOOL..."
  BUILD_DIR=$1 EXAMPLE_DIR=$2 LIBDIR=$3 CC=$4 CXX=$5
  shift 5
  TOOLS=("$@")
}

step() { echo "== $*"; }

# fail MESSAGE [FILE...]: reports the failure with the files it concerns, and exits 1.
fail() {
  echo "FAIL [$CHECK_NAME]: $1" >&2
  shift
  local file
  for file in "$@"; do
    echo "---- $file ----" >&2
    sed 's/^/  | /' "$file" >&2
  done
  exit 1
}

skip() {
  echo "SKIP [$CHECK_NAME]: $1"
  exit 77
}

# run LOG COMMAND...: runs COMMAND with its output in LOG; fails with that output on error.
run() {
  local log=$1
  shift
  local rc=0
  timeout "$STEP_LIMIT_S" "$@" >"$log" 2>&1 || rc=$?
  ((rc == 0)) || fail "exit status $rc from: $*" "$log"
}

# Compiles each installed header alone, as C99 and as C++17, with warnings as errors: a header
# that needs another one first, or one that is not installed, fails here.
check_headers_compile() {
  local include=$1 header
  for header in nccl.h braid_ext.h nccl_device.h "$include"/nccl_device/*.h; do
    header=${header#"$include"/}
    [[ -f $include/$header ]] || fail "$include/$header is missing"
    echo "#include <$header>" >"$CHECK_TMP/header.c"
    run "$CHECK_TMP/header.log" "$CC" -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only \
      -I"$include" "$CHECK_TMP/header.c"
    run "$CHECK_TMP/header.log" "$CXX" -std=c++17 -Wall -Wextra -Werror -fsyntax-only \
      -I"$include" -x c++ "$CHECK_TMP/header.c"
  done
}

# expect_nccl_from BINARY LIBDIR: the loader resolves BINARY's libnccl.so.2 to LIBDIR's copy.
expect_nccl_from() {
  local binary=$1 want got
  want=$(readlink -f "$2/libnccl.so.2")
  ldd "$binary" >"$CHECK_TMP/ldd.log" 2>&1 || fail "ldd $binary failed" "$CHECK_TMP/ldd.log"
  got=$(awk '$1 == "libnccl.so.2" { print $3 }' "$CHECK_TMP/ldd.log")
  [[ -n $got ]] || fail "$binary does not load libnccl.so.2" "$CHECK_TMP/ldd.log"
  [[ $(readlink -f "$got") == "$want" ]] ||
    fail "$binary loads libnccl.so.2 from $got, not $want" "$CHECK_TMP/ldd.log"
}

# expect_no_build_paths BINARY: no RPATH or RUNPATH entry of BINARY points into the build tree.
expect_no_build_paths() {
  readelf -d "$1" >"$CHECK_TMP/readelf.log" || fail "readelf -d $1 failed"
  if grep -E 'R(UN)?PATH' "$CHECK_TMP/readelf.log" | grep -qF "$BUILD_DIR"; then
    fail "$1 searches the build tree for libraries" "$CHECK_TMP/readelf.log"
  fi
}

# run_example BINARY: the example prints OK and exits 0.
run_example() {
  local out=$CHECK_TMP/example.out
  run "$out" "$1"
  grep -qx OK "$out" || fail "$1 did not print OK" "$out"
}

# build_example_cmake OUT_DIR [CMAKE_ARGS...]: configures and builds examples/allreduce with
# find_package(braid); prints nothing, leaves OUT_DIR/allreduce.
build_example_cmake() {
  local out=$1
  shift
  run "$CHECK_TMP/cmake-configure.log" "$CMAKE" -S "$EXAMPLE_DIR" -B "$out" \
    -DCMAKE_C_COMPILER="$CC" "$@"
  run "$CHECK_TMP/cmake-build.log" "$CMAKE" --build "$out"
  [[ -x $out/allreduce ]] || fail "the example's build made no $out/allreduce"
}

# build_example_pkgconfig OUT: compiles the example with the flags `pkg-config braid` gives (from
# the PKG_CONFIG_PATH in force), and the libdir it names as the run path.
build_example_pkgconfig() {
  local out=$1 flags libdir
  flags=$(pkg-config --cflags --libs braid) || fail "pkg-config knows no braid"
  libdir=$(pkg-config --variable=libdir braid)
  # shellcheck disable=SC2086  # the flags are words
  run "$CHECK_TMP/pkgconfig-build.log" "$CC" -std=c99 -Wall -Wextra -Werror \
    "$EXAMPLE_DIR/allreduce.c" $flags -Wl,-rpath,"$libdir" -o "$out"
}

# run_tools BINDIR: each shipped tool does a small job and prints what it should.
run_tools() {
  local bindir=$1 tool out=$CHECK_TMP/tool.out
  for tool in "${TOOLS[@]}"; do
    [[ -x $bindir/$tool ]] || fail "$bindir/$tool is missing"
    case $tool in
      braid-perf)
        run "$out" "$bindir/$tool" all_reduce -t 2 -b 8 -e 64K -f 8 -n 1 -w 0 -c 1
        grep -qE '^# Wrong elements *: 0 OK' "$out" || fail "$tool: wrong results" "$out" ;;
      braid-schedule)
        run "$out" "$bindir/$tool" all_reduce --nranks 4 --count 1000
        grep -q '^schedule: ' "$out" || fail "$tool printed no schedule" "$out" ;;
      braid-topo)
        run "$out" "$bindir/$tool" --nranks 2
        grep -q '^Summary: topology' "$out" || fail "$tool printed no summary" "$out" ;;
      braid-sim)
        run "$out" "$bindir/$tool" --coll all_reduce --algo ring --nranks 8
        grep -q '^OK: symbolic check of 8 ranks' "$out" || fail "$tool: no OK" "$out" ;;
      braid-doctor)
        run "$out" "$bindir/$tool" --help
        grep -q '^usage: braid-doctor' "$out" || fail "$tool printed no usage" "$out" ;;
      *) fail "no check for tool $tool" ;;
    esac
  done
}
