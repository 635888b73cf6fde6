# Shared by the end-to-end tests of the shipped binaries (sourced, not run).
#
# Each test script runs braid-perf as a user would, from a temporary directory that the EXIT trap
# removes, and checks what it prints: nccl-tests' table, braid's logs, its errors. Helpers here
# fail with a message that says what was expected and where the output is.

# shellcheck shell=bash

E2E_NAME=$(basename "$0" .sh)
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/braid-e2e.XXXXXX")
E2E_PIDS=()
# shellcheck source=../../scripts/lib/netns.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/netns.sh"

e2e_cleanup() {
  local pid
  for pid in "${E2E_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  braid_netns_cleanup
  rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

# How long one braid-perf run may take before the test calls it a hang.
E2E_RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-60}

# Prints a file to stderr, indented, so that a failure shows the output it judged.
show() {
  local file=$1
  echo "---- $(basename "$file") ----" >&2
  sed 's/^/  | /' "$file" >&2
}

# fail MESSAGE [FILE...]: reports the failure with the files it concerns, and exits 1.
fail() {
  local message=$1
  shift
  echo "FAIL [$E2E_NAME]: $message" >&2
  local file
  for file in "$@"; do show "$file"; done
  exit 1
}

skip() {
  echo "SKIP [$E2E_NAME]: $1"
  exit 77
}

# run_perf OUT ERR ARGS...: runs ARGS (braid-perf and its flags) under a time limit with stdout
# in OUT and stderr in ERR; sets RUN_RC to the exit status (124: it hung and was killed).
run_perf() {
  local out=$1 err=$2
  shift 2
  RUN_RC=0
  timeout --kill-after=5 "$E2E_RUN_LIMIT_S" "$@" >"$out" 2>"$err" || RUN_RC=$?
  if [[ $RUN_RC -eq 124 || $RUN_RC -eq 137 ]]; then
    fail "'$*' did not finish within ${E2E_RUN_LIMIT_S}s" "$out" "$err"
  fi
}

# netns_hosts HOSTS: HOSTS network namespaces as hosts (scripts/lib/netns.sh), deleted on exit.
# Skips (77) where that cannot be done: not root, no `ip` or `unshare`, or no network namespaces;
# but fails under CI=true as root, where the machine has them all (tests/allowed-skips.txt).
netns_hosts() {
  [[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
  local missing=skip
  [[ ${CI:-} == true ]] && missing=fail
  command -v ip >/dev/null || $missing "no ip command (iproute2)"
  command -v unshare >/dev/null || $missing "no unshare command (util-linux)"
  braid_netns_hosts "e$$" "$1" || $missing "cannot create network namespaces here (root, CI=true)"
}

# Fault tests measure from the fault. The moment a fault is made and the moments each rank saw it
# are read on the wall clock (CLOCK_REALTIME, in ns), which every process and network namespace
# of the machine shares.
#
# E2E_FAULT_FILE: one line per fault, `<ns> <pid> <what>`, appended where the fault is made: by
# the library's test-only injectors (BRAID_TEST_FAULT_TIME_FILE, base/test_fault.h: the emulated
# HCA's BRAID_IB_EMULATE_FAULT, the socket transport's BRAID_SOCKET_EMULATE_FAULT, the
# BRAID_TEST_DIE_AT points) or by the script itself (note_fault: a kill, a link taken down).
E2E_FAULT_FILE=$E2E_TMP/faults
export BRAID_TEST_FAULT_TIME_FILE=$E2E_FAULT_FILE
E2E_STAMPERS=()

# now_ns VAR: sets VAR to the wall clock in ns, from bash's own clock (microseconds; no process
# started, so a script reads it right where it acts).
now_ns() {
  local us=${EPOCHREALTIME//[!0-9]/}
  printf -v "$1" '%s000' "$us"
}

# note_fault WHAT: appends the moment now to E2E_FAULT_FILE, as the injectors do. Called just
# before the script's own fault, so that the time it takes to act counts against the ranks.
note_fault() {
  local t
  now_ns t
  echo "$t $$ $1" >>"$E2E_FAULT_FILE"
}

# stamp_stderr ERR: sets STAMP_FIFO to a pipe for a rank's stderr, copied to ERR by a reader that
# writes to ERR.times when the rank's call returned its error (`error <ns>`: braid-perf's line
# `braid-perf: rank R: CALL failed: ...`, printed as the call returns) and when its stderr closed
# (`end <ns>`: the process ended). wait_stampers waits for the readers to finish their files.
stamp_stderr() {
  local err=$1
  STAMP_FIFO=$err.fifo
  rm -f "$STAMP_FIFO"
  mkfifo "$STAMP_FIFO"
  (
    line="" t=""
    while IFS= read -r line || [[ -n $line ]]; do
      if [[ $line == "braid-perf: rank "*" failed: "* ]]; then
        now_ns t
        echo "error $t" >&3
      fi
      printf '%s\n' "$line"
    done
    now_ns t
    echo "end $t" >&3
  ) <"$STAMP_FIFO" >"$err" 3>"$err.times" &
  E2E_STAMPERS+=($!)
}

wait_stampers() {
  local pid
  for pid in "${E2E_STAMPERS[@]}"; do wait "$pid" || true; done
  E2E_STAMPERS=()
}

# rank_file FILE RANK: the file of rank RANK where rank 0's is FILE and rank r's FILE.r (as
# run_on_hosts names its ranks' output).
rank_file() {
  if (($2 == 0)); then echo "$1"; else echo "$1.$2"; fi
}

# fault_to_error BOUND_MS ERR NRANKS [SPARED...]: judges a fault test's run from the fault. The
# run's ranks wrote their stderr through stamp_stderr to ERR, ERR.1, ... (rank_file), and
# E2E_FAULT_FILE holds the one fault. Prints each rank's time from the fault to its error and to
# its exit, and fails when a rank said no error, said it before the fault (something else failed),
# or later than BOUND_MS after it. The ranks in SPARED (a killed one) are not judged. Sets
# FAULT_FIGURES to the printed figures and FAULT_MAX_MS to the slowest rank's time to error.
fault_to_error() {
  local bound_ms=$1 err=$2 nranks=$3
  shift 3
  local spared=" $* " faults fault what rank file error end error_us end_us
  [[ -s $E2E_FAULT_FILE ]] || fail "no fault was recorded in $E2E_FAULT_FILE: the run was not tested"
  faults=$(wc -l <"$E2E_FAULT_FILE")
  ((faults == 1)) || fail "$faults faults were recorded, expected 1" "$E2E_FAULT_FILE"
  read -r fault _ what <"$E2E_FAULT_FILE"
  FAULT_FIGURES="" FAULT_MAX_MS=0
  for ((rank = 0; rank < nranks; rank++)); do
    [[ $spared == *" $rank "* ]] && continue
    file=$(rank_file "$err" "$rank")
    [[ -f $file.times ]] || fail "rank $rank's stderr was not stamped (stamp_stderr)" "$file"
    error=$(awk '$1 == "error" { print $2; exit }' "$file.times")
    end=$(awk '$1 == "end" { print $2; exit }' "$file.times")
    [[ -n $error ]] || fail "rank $rank said no 'braid-perf: rank R: CALL failed:' line" "$file"
    [[ -n $end ]] || fail "rank $rank's stderr was not read to its end" "$file"
    error_us=$(((error - fault) / 1000)) end_us=$(((end - fault) / 1000))
    ((error_us >= 0)) ||
      fail "rank $rank's call failed $((-error_us / 1000)) ms before the fault ($what)" "$file"
    FAULT_FIGURES+="${FAULT_FIGURES:+, }rank $rank $(ms "$error_us") (exit $(ms "$end_us"))"
    ((error_us / 1000 < FAULT_MAX_MS)) || FAULT_MAX_MS=$((error_us / 1000))
  done
  echo "fault-to-error ($what), ms: $FAULT_FIGURES; bound ${bound_ms} ms"
  local files=()
  for ((rank = 0; rank < nranks; rank++)); do files+=("$(rank_file "$err" "$rank")"); done
  ((FAULT_MAX_MS < bound_ms)) || fail "a rank's call failed ${FAULT_MAX_MS} ms after the fault \
($what), over the bound of ${bound_ms} ms: something slower than the fault's path ended it" \
    "${files[@]}"
}

# ms MICROSECONDS: the time in ms with one decimal.
ms() {
  printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100))
}

# run_on_hosts OUT ERR HOSTS NRANKS BRAID_PERF [args...]: NRANKS braid-perf processes, one per
# rank, started as torchrun starts workers (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), ranks
# r*NRANKS/HOSTS .. on host r (BRAID_HOSTID=host<r>), so that braid connects hosts through its
# socket transport. After netns_hosts, host r is namespace r instead, with a host name of its own
# (unshare --uts): braid tells the hosts apart as on real machines and the root is host 0's
# address. Rank 0's output goes to OUT and ERR, rank r's to OUT.r and ERR.r; RUN_RC is the first
# nonzero exit status of a rank (0 when all succeed). With E2E_STAMP_ERRORS=1 each rank's stderr
# goes through stamp_stderr, which notes when the rank's call failed and when it ended.
run_on_hosts() {
  local out=$1 err=$2 hosts=$3 nranks=$4
  shift 4
  local port per_host=$((nranks / hosts)) rank rc pids=()
  port=$(free_port)
  for ((rank = 0; rank < nranks; rank++)); do
    local o e
    o=$(rank_file "$out" "$rank") e=$(rank_file "$err" "$rank")
    if [[ ${E2E_STAMP_ERRORS:-0} == 1 ]]; then
      stamp_stderr "$e"
      e=$STAMP_FIFO
    fi
    local host=$((rank / per_host))
    if ((${#BRAID_NETNS_HOSTS[@]})); then
      (unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE BRAID_HOSTID
       braid_netns_exec "$host" env RANK=$rank WORLD_SIZE=$nranks \
         MASTER_ADDR="$(braid_netns_addr 0)" MASTER_PORT=$port \
         BRAID_SOCKET_IFNAME=bveth BRAID_DEBUG="${BRAID_DEBUG:-INFO}" \
         timeout --kill-after=5 "$E2E_RUN_LIMIT_S" "$@") >"$o" 2>"$e" &
    else
      (unset BRAID_COMM_ID NCCL_COMM_ID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE
       BRAID_HOSTID="host$host" RANK=$rank WORLD_SIZE=$nranks \
         MASTER_ADDR=127.0.0.1 MASTER_PORT=$port BRAID_DEBUG=${BRAID_DEBUG:-INFO} \
         exec timeout --kill-after=5 "$E2E_RUN_LIMIT_S" "$@") >"$o" 2>"$e" &
    fi
    pids+=($!)
    E2E_PIDS+=($!)
  done
  RUN_RC=0
  for ((rank = 0; rank < nranks; rank++)); do
    rc=0
    wait "${pids[$rank]}" || rc=$?
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then
      # Rank 0 writes to $out and $err themselves, the others to $out.N and $err.N: show the
      # hung rank's stderr, and every other rank's too (a hang is often another rank's doing).
      local logs=("$out" "$err")
      for ((r = 1; r < nranks; r++)); do logs+=("$err.$r"); done
      fail "rank $rank of '$*' did not finish within ${E2E_RUN_LIMIT_S}s" "${logs[@]}"
    fi
    ((RUN_RC != 0)) || RUN_RC=$rc
  done
  wait_stampers
}

# expect_success OUT ERR: the run recorded by run_perf exited 0.
expect_success() {
  [[ $RUN_RC -eq 0 ]] || fail "exit status $RUN_RC, expected 0" "$1" "$2"
}

# expected_sizes MIN MAX FACTOR ELEM: the sizes nccl-tests' sweep visits (MIN, MIN*FACTOR, ... up
# to MAX), each as the table prints it: whole elements of ELEM bytes.
expected_sizes() {
  local size=$1 max=$2 factor=$3 elem=$4
  while ((size <= max)); do
    echo $((size / elem * elem))
    size=$((size * factor))
  done
}

# check_table OUT NRANKS MIN MAX FACTOR ELEM: OUT holds braid-perf's output for NRANKS ranks: the
# header lists every rank, there is one row per size of the sweep, in order, and both #wrong
# columns (out-of-place and in-place) of every row read 0.
check_table() {
  local out=$1 nranks=$2 min=$3 max=$4 factor=$5 elem=$6
  local listed
  listed=$(grep -c '^#  Rank ' "$out" || true)
  [[ $listed -eq $nranks ]] || fail "header lists $listed ranks, expected $nranks" "$out"
  # A row: size count type redop root, then time algbw busbw #wrong twice.
  local rows
  rows=$(awk '!/^#/ && NF == 13 { print $1, $9, $13 }' "$out")
  [[ -n $rows ]] || fail "no table rows" "$out"
  local size wrongOut wrongIn
  while read -r size wrongOut wrongIn; do
    [[ $wrongOut == 0 && $wrongIn == 0 ]] ||
      fail "size $size: #wrong is $wrongOut out of place, $wrongIn in place; expected 0, 0" \
        "$out"
  done <<<"$rows"
  local got want
  got=$(awk '{ print $1 }' <<<"$rows" | tr '\n' ' ')
  want=$(expected_sizes "$min" "$max" "$factor" "$elem" | tr '\n' ' ')
  [[ $got == "$want" ]] || fail "row sizes are [$got], expected [$want]" "$out"
  grep -q '^# Wrong elements *: 0 OK' "$out" || fail "no '# Wrong elements : 0 OK' line" "$out"
}

# type_size NAME: bytes per element of braid-perf's datatype NAME (-d).
type_size() {
  case $1 in
    int8 | uint8 | f8e4m3 | f8e5m2) echo 1 ;;
    half | bfloat16) echo 2 ;;
    int32 | uint32 | float) echo 4 ;;
    int64 | uint64 | double) echo 8 ;;
    *) fail "unknown datatype '$1'" ;;
  esac
}

# free_port: a TCP port nobody listens on now (tests/support/free_port.py says how it picks one).
free_port() {
  if command -v python3 >/dev/null; then
    python3 "$(dirname "${BASH_SOURCE[0]}")/../support/free_port.py"
  else
    echo $((10000 + RANDOM % 10000))
  fi
}
