# Sourced by scripts/test: runs the phases of a test run, times them, adds up what every ctest run
# said (scripts/sanitize's too, through the log it writes), and prints the line a run ends with.

BRAID_PHASES=()      # "name minutes status cpu-seconds" per phase
BRAID_PASSED=0 BRAID_FAILED=0 BRAID_SKIPPED=0
BRAID_UNEXPECTED=()  # skipped tests that no line of tests/allowed-skips.txt allows
BRAID_RUN_FAILED=0

# braid_cpu_seconds: the CPU time (user + system) of this shell and every child it has waited
# for, in seconds: what the machine spent, which contention and a VM's slow state change far less
# than the minutes. Prints nothing: it sets BRAID_CPU (`times` must run in this shell, not in a
# $(...) subshell, which would report its own).
braid_cpu_seconds() {
  local file="${TMPDIR:-/tmp}/braid-times.$$"
  times >"$file"
  BRAID_CPU=$(awk '{ for (i = 1; i <= NF; ++i) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } }
                   END { printf "%.0f", s }' "$file")
  rm -f "$file"
}

# braid_phase NAME COMMAND...: runs COMMAND, records how long it took, the CPU time it spent and
# whether it failed; a failure does not stop the run, so that the summary says what else passed.
braid_phase() {
  local name=$1 started=$SECONDS status=0 cpu
  shift
  echo "== $name"
  braid_cpu_seconds
  cpu=$BRAID_CPU
  "$@" || status=$?
  braid_cpu_seconds
  cpu=$((BRAID_CPU - cpu))
  BRAID_PHASES+=("$name $(awk -v s=$((SECONDS - started)) 'BEGIN { printf "%.1f", s / 60 }') $status $cpu")
  ((status == 0)) || BRAID_RUN_FAILED=1
  return 0
}

# braid_ctest LOG [ctest args...]: runs ctest with its output on the terminal and in LOG, then
# adds its counts to the run's. Fails when ctest does.
braid_ctest() {
  local log=$1 status=0
  shift
  ctest "$@" 2>&1 | tee "$log" || status=$?  # pipefail: ctest's own failure
  braid_count_ctest "$log"
  return "$status"
}

# braid_count_ctest LOG: the passed, failed and skipped tests of one ctest run's output. A skip
# (GTEST_SKIP, an e2e script's exit 77) is judged against tests/allowed-skips.txt: where this
# machine has what a test needs, it must not skip.
braid_count_ctest() {
  local log=$1 line total failed name
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  [[ -n $line ]] || return 0
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")
  total=$(sed -E 's/.*failed out of ([0-9]+).*/\1/' <<<"$line")
  local skipped=0
  while read -r name; do
    [[ -n $name ]] || continue
    skipped=$((skipped + 1))
    braid_skip_allowed "$name" || BRAID_UNEXPECTED+=("$name")
  done < <(sed -nE 's/^[[:space:]]+[0-9]+ - (.*) \(Skipped\)$/\1/p' "$log")
  # ctest counts skipped and disabled tests (e2e cases pending, tests/CMakeLists.txt) among
  # those that did not fail.
  local disabled
  disabled=$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Disabled\)$' "$log" || true)
  BRAID_FAILED=$((BRAID_FAILED + failed))
  BRAID_SKIPPED=$((BRAID_SKIPPED + skipped))
  BRAID_PASSED=$((BRAID_PASSED + total - failed - skipped - disabled))
}

# braid_skip_allowed NAME: whether a line of tests/allowed-skips.txt (a regular expression, then
# why) allows test NAME to skip.
braid_skip_allowed() {
  local pattern reason
  while read -r pattern reason; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    [[ $1 =~ $pattern ]] && return 0
  done <"$BRAID_ROOT/tests/allowed-skips.txt"
  return 1
}

# braid_summary WHAT: the line a run ends with; returns non-zero when a phase failed or, under
# CI=true, a test skipped that the allowed list does not name.
braid_summary() {
  local what=$1 phases="" p cpu_total=0
  for p in "${BRAID_PHASES[@]}"; do
    read -r name minutes status cpu <<<"$p"
    phases+="${phases:+, }$name ${minutes} min (${cpu} CPU-s)"
    cpu_total=$((cpu_total + cpu))
    ((status == 0)) || phases+=" (FAILED)"
  done
  phases+="; ${cpu_total} CPU-seconds in all"
  if ((${#BRAID_UNEXPECTED[@]})); then
    echo "$what: ${#BRAID_UNEXPECTED[@]} skipped tests are not on tests/allowed-skips.txt:"
    printf '  %s\n' "${BRAID_UNEXPECTED[@]}"
    [[ ${CI:-} != true ]] || BRAID_RUN_FAILED=1
  fi
  local verdict=PASSED
  ((BRAID_RUN_FAILED == 0)) || verdict=FAILED
  echo "$what: $verdict: $BRAID_PASSED tests passed, $BRAID_FAILED failed, $BRAID_SKIPPED skipped" \
    "(${#BRAID_UNEXPECTED[@]} not allowed); $phases"
  return $BRAID_RUN_FAILED
}
