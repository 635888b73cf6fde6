# Shared by the bench/compare-*.sh scripts (sourced, not run).
# shellcheck shell=bash

# median V...: the middle value (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# time_of FILE SIZE: the out-of-place time (us) of row SIZE of a braid-perf table.
time_of() { awk -v s="$2" '$1 == s { print $6; exit }' "$1"; }
