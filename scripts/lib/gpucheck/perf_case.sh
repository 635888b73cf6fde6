# shellcheck shell=bash
# Sourced by the phases perf and multigpu (scripts/lib/gpucheck/<phase>.sh), after record.sh: a
# braid-perf run as a case, its tables read whole and checked.

# perf_table KIND LOG: perf_table.awk's one line on LOG (KIND perf or kernels): "unreadable<TAB>
# line N: 'TEXT'..." where a line is none of what the table may hold, else "table<TAB>ROWS<TAB>
# WHAT". In awk: a Python start a case took 0.36 s on a slow VM.
perf_table() { awk -v table="$1" -v summary=1 -f "$GC_LIB/perf_table.awk" "$2"; }

# perf_case NAME WANT THROUGH COMMAND...: a braid-perf run that passes when it exits 0, every line
# of its output reads (perf_table.awk), its tables have rows and each reads "0 OK" (a list of
# collectives prints a table each), and its header says the devices are reached through THROUGH
# (a prefix).
perf_case() {
  local name=$1 want=$2 through=$3
  shift 3
  gc_run "$name" "$want" "$@" || return 0
  local what rows read seen wrong tables
  IFS=$'\t' read -r what rows read < <(perf_table perf "$GC_LOG")
  seen=$(grep -m1 '^#  devices through' "$GC_LOG" | sed 's/^#  devices through //')
  tables=$(grep -c '^# Wrong elements' "$GC_LOG")
  # The first count that is not "0 OK", else "0 OK".
  wrong=$(grep '^# Wrong elements' "$GC_LOG" | sed 's/^# Wrong elements *: *//' |
    sort -u | grep -v -m1 -x '0 OK' || true)
  ((tables == 0)) || wrong=${wrong:-0 OK}
  if gc_timed_out; then
    gc_finish "$name" FAIL "did not finish within $GC_LIMIT s"
  elif [[ $what != table ]]; then
    # (The second field of an "unreadable" line, in rows, is the line it names.)
    gc_finish "$name" FAIL "exit status $GC_RC, and its output has a line no table holds: $rows"
  elif ((GC_RC != 0)); then
    local said
    said=$(grep -m1 -E 'braid-perf: |error' "$GC_LOG" | cut -c1-160)
    gc_finish "$name" FAIL "exit status $GC_RC (the table says: ${wrong:-nothing}): $said"
  elif [[ $wrong != "0 OK" || $rows -eq 0 ]]; then
    gc_finish "$name" FAIL "$rows rows, wrong elements: ${wrong:-none counted}"
  elif [[ $seen != "$through"* ]]; then
    gc_finish "$name" FAIL "devices through ${seen:-none (host memory)}, not $through"
  else
    local of=""
    ((tables == 1)) || of=" in $tables tables"
    gc_finish "$name" PASS "$rows rows$of, 0 wrong, $read"
  fi
}
