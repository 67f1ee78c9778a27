#!/bin/sh
# The README's benchmark summary is a copy of lines of the generated table.
#
#   bench_summary.sh README BENCHMARKS
#
# Every non-blank line of README between "<!-- bench-summary begin" and
# "<!-- bench-summary end -->" is a line of BENCHMARKS between
# "<!-- bench-table begin -->" and "<!-- bench-table end -->" (the block
# tools/bench_table.sh renders), so the headline rows change when
# make bench-table does: copy them again from BENCHMARKS.
set -eu
[ $# -eq 2 ] || { echo "usage: bench_summary.sh README BENCHMARKS" >&2; exit 2; }
readme=$1 bench=$2
tmp=${TMPDIR:-/tmp}/bench_summary.$$
trap 'rm -f "$tmp".*' EXIT
awk '/^<!-- bench-table begin -->/ { on = 1; next } /^<!-- bench-table end -->/ { on = 0 }
     on' "$bench" > "$tmp.table"
awk '/^<!-- bench-summary begin/ { on = 1; n++; next } /^<!-- bench-summary end -->/ { on = 0 }
     on && NF { print } END { if (n != 1) exit 3 }' "$readme" > "$tmp.summary" || {
    echo "bench_summary: $readme needs one bench-summary block"; exit 1; }
[ -s "$tmp.summary" ] || { echo "bench_summary: the summary of $readme is empty"; exit 1; }
bad=0
while IFS= read -r line; do
    if ! grep -qxF -- "$line" "$tmp.table"; then
        echo "bench_summary: not in the table of $bench: $line"
        bad=1
    fi
done < "$tmp.summary"
[ "$bad" -eq 0 ] || { echo "bench_summary: copy the rows again from $bench"; exit 1; }
echo "bench_summary: the $(wc -l < "$tmp.summary" | tr -d ' ') lines of $readme's summary are in $bench"
