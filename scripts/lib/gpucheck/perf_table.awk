# What a line of braid-perf's or braid-kernel-bench's output may be, for scripts/gpu-check's perf
# phase (perf.sh, each case) and its goals (perf_goals.py, the tables read back): the one place
# that says it, so that the case and the goal judged on its table cannot read it differently.
#
#   awk -v table=perf|kernels [-v summary=1] -f perf_table.awk LOG
#
# Allowed besides a table's rows: comments (#), blank lines, the program's own errors
# ("braid-perf: ...", "braid-kernel-bench: ...") and braid's or NVIDIA's log lines ("host:pid:tid
# [rank] braid WARN ..."). Any other line is unreadable: a row cut short, a number printed as
# "inf", a message nobody expected. A check must not pass on a table it read only in part, so
# every such line is reported, never skipped.
#
# Prints, without summary: "row<TAB>field<TAB>..." for each row (perf: braid-perf's 13 or 14
# columns; kernels: what, ms, GB/s, vs copy) and "unreadable<TAB>LINE<TAB>TEXT" for each line that
# is none of the above. With summary=1, one line: "unreadable<TAB>line N: 'TEXT'[ and K more]"
# where there is one, else "table<TAB>ROWS<TAB>DETAIL" (perf: its sizes, the time of the smallest
# and the bus bandwidth of the largest, out of place; kernels: the rows it timed).

function number(s) { return s ~ /^[0-9]+(\.[0-9]+)?$/ }

# The four columns of one placement from field i: time, algbw, busbw, #wrong, or N/A in each.
function placement(i) {
  if ($i == "N/A") return $(i + 1) == "N/A" && $(i + 2) == "N/A" && $(i + 3) == "N/A"
  return number($i) && number($(i + 1)) && number($(i + 2)) && ($(i + 3) ~ /^[0-9]+$/ ||
                                                                $(i + 3) == "N/A")
}

function perf_row() {
  return (NF == 13 || NF == 14 && number($14)) && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ &&
         $3 ~ /^[a-z0-9]+$/ && $4 ~ /^[a-z]+$/ && $5 ~ /^-?[0-9]+$/ && placement(6) &&
         placement(10)
}

function size(n) {
  if (n >= 2 ^ 30 && n % 2 ^ 30 == 0) return n / 2 ^ 30 " GiB"
  if (n >= 2 ^ 20 && n % 2 ^ 20 == 0) return n / 2 ^ 20 " MiB"
  if (n >= 2 ^ 10 && n % 2 ^ 10 == 0) return n / 2 ^ 10 " KiB"
  return n " B"
}

function unreadable() {
  if (!bad++) first = sprintf("line %d: '%s'", FNR, substr($0, 1, 160))
  if (!summary) printf "unreadable\t%d\t%s\n", FNR, $0
}

BEGIN {
  if (table != "perf" && table != "kernels") {
    print "perf_table.awk: table must be perf or kernels" > "/dev/stderr"
    invalid = 1
    exit 2
  }
}

/^#/ || /^[ \t]*$/ { next }
/^(braid-perf|braid-kernel-bench): / { next }
/^[^ ]+:[0-9]+:[0-9]+ (\[[0-9]+\] )?(braid|NCCL) [A-Z]+ / || /^braid [A-Z]+ / { next }

table == "perf" {
  if (!perf_row()) { unreadable(); next }
  rows++
  if (!summary) {
    line = "row"
    for (i = 1; i <= NF; i++) line = line "\t" $i
    print line
  }
  if (rows == 1 || $1 + 0 < lo) { lo = $1 + 0; us = $6 }
  if (rows == 1 || $1 + 0 > hi) { hi = $1 + 0; busbw = $8 }
  next
}

# braid-kernel-bench: "  what (words)   ms   GB/s   vs copy", two spaces in front.
table == "kernels" {
  if ($0 !~ /^  [^ ]/ || NF < 4 || !number($(NF - 2)) || !number($(NF - 1)) || !number($NF)) {
    unreadable()
    next
  }
  rows++
  what = $0
  sub(/^ +/, "", what)
  sub(/ +[^ ]+ +[^ ]+ +[^ ]+ *$/, "", what)
  if (!summary) printf "row\t%s\t%s\t%s\t%s\n", what, $(NF - 2), $(NF - 1), $NF
  if (what ~ /^engine /) engines++
}

END {
  if (invalid) exit 2
  if (!summary) exit
  if (bad) {
    printf "unreadable\t%s%s\n", first, (bad > 1 ? sprintf(" and %d more", bad - 1) : "")
  } else if (table == "kernels") {
    printf "table\t%d\t%d rows, %d of them engine loops timed against the copy\n", rows, rows,
           engines
  } else if (!rows) {
    printf "table\t0\tno table\n"
  } else {
    printf "table\t%d\t%s .. %s: %.1f us at %s, busbw %.1f GB/s at %s\n", rows, size(lo), size(hi),
           us, size(lo), busbw, size(hi)
  }
}
