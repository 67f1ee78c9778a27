#!/bin/sh
# The benchmark table of docs/BENCHMARKS.md, rendered from the CSV `make
# bench` writes.
#
#   bench_table.sh CSV MACHINE                    print the block
#   bench_table.sh --update PAGE CSV MACHINE      put it into PAGE
#   bench_table.sh --check PAGE CSV MACHINE       fail if PAGE's differs
#
# CSV has the columns scenario,n,value,unit,ratio_to_raw (bench.c --csv);
# its thread rows (NAME_1t, NAME_nt and NAME_speedup, the ratio 1t / nt)
# make another table, "threads", one line a pair with its speed-up, and
# the rows of the three stores a table of their own, "stores";
# MACHINE has "key: value" lines (tools/bench_machine.sh). The block sits in
# PAGE (docs/BENCHMARKS.md) between the lines "<!-- bench-table begin -->" and
# "<!-- bench-table end -->"; nothing in it is written by hand.
set -eu

usage() { echo "usage: bench_table.sh [--update|--check PAGE] CSV MACHINE" >&2; exit 2; }
mode=print readme=
case ${1-} in
--update|--check) [ $# -eq 4 ] || usage; mode=${1#--} readme=$2; shift 2 ;;
*) [ $# -eq 2 ] || usage ;;
esac
csv=$1 machine=$2
begin='<!-- bench-table begin -->'
end='<!-- bench-table end -->'

render() {
    echo "$begin"
    cores=$(awk -F': ' '$1 == "cores" { print $2 }' "$machine")
    awk -F, -v cores="${cores:-N}" '
    function num(v) {          # three significant figures or so
        if (v >= 100) return sprintf("%.0f", v)
        if (v >= 10)  return sprintf("%.1f", v)
        if (v >= 1)   return sprintf("%.2f", v)
        return sprintf("%.3f", v)
    }
    function thousands(s,   out) {
        out = ""
        while (length(s) > 3) {
            out = "," substr(s, length(s) - 2) out
            s = substr(s, 1, length(s) - 3)
        }
        return s out
    }
    NR == 1 {
        if ($0 != "scenario,n,value,unit,ratio_to_raw") {
            print "bench_table: " FILENAME ": not a bench CSV (header: " $0 ")" > "/dev/stderr"
            exit 2
        }
        next
    }
    # The thread rows, NAME_1t, NAME_nt and NAME_speedup (1t / nt), go to
    # a table of their own, one line a pair, in the order the pairs come.
    NF == 5 && $1 ~ /_(1t|nt|speedup)$/ {
        pair = $1
        sub(/_(1t|nt|speedup)$/, "", pair)
        kind = substr($1, length(pair) + 2)
        if (!(pair in seen)) { seen[pair] = 1; order[++npairs] = pair; pn[pair] = $2 }
        if (kind == "speedup") x[pair] = sprintf("%.2fx", $3 + 0)
        else { val[pair, kind] = num($3 + 0); unit[pair] = $4 }
        rows++
        next
    }
    NF == 5 {
        main[++nmain] = sprintf("| %s | %s | %s | %s | %s |", $1, thousands($2), num($3 + 0),
                                $4, $5 == "" ? "" : sprintf("%.2fx", $5 + 0))
        fig[$1] = num($3 + 0) " " $4 ($5 == "" ? "" : sprintf(" (%.2fx raw)", $5 + 0))
        rows++
    }
    END {
        if (NR > 0 && rows == 0) { print "bench_table: no rows in " FILENAME > "/dev/stderr"; exit 2 }
        if (nmain) {
            print "| scenario | N | median | unit | ratio to raw |"
            print "| --- | ---: | ---: | --- | ---: |"
            for (i = 1; i <= nmain; i++) print main[i]
        }
        # The stores side by side: the table store, an enableable
        # component, a sparse one (rows missing from the CSV: no table).
        if (("toggle" in fig) && ("add_remove_sparse" in fig)) {
            print ""
            print "| stores | table | enableable | sparse |"
            print "| --- | --- | --- | --- |"
            printf "| change (a pair) | add_remove %s | toggle %s | add_remove_sparse %s |\n",
                   fig["add_remove"], fig["toggle"], fig["add_remove_sparse"]
            printf "| random lookup | random_get %s | (as table) | random_get_sparse %s |\n",
                   fig["random_get"], fig["random_get_sparse"]
            printf "| p += v, per row handed out | iterate %s | iterate_toggled %s | iterate_sparse_term %s |\n",
                   fig["iterate"], fig["iterate_toggled"], fig["iterate_sparse_term"]
        }
        if (nmain && npairs) print ""
        if (npairs) {
            printf "| threads | N | 1 thread | %s threads | unit | speed-up |\n", cores
            print "| --- | ---: | ---: | ---: | --- | ---: |"
            for (i = 1; i <= npairs; i++) {
                p = order[i]
                printf "| %s | %s | %s | %s | %s | %s |\n", p, thousands(pn[p]),
                       val[p, "1t"], val[p, "nt"], unit[p], x[p]
            }
        }
    }
    ' "$csv"
    echo
    awk -F': ' '
    { v[$1] = substr($0, length($1) + 3) }
    END {
        runs = v["runs"] > 1 ? sprintf(", each figure the median of %d full runs", v["runs"]) : ""
        printf "Measured on %s (%s cores), %s, %s, with `%s`%s.\n",
               v["cpu"], v["cores"], v["compiler"], v["system"], v["command"], runs
    }' "$machine"
    echo "$end"
}

block=$(render)

# PAGE with its block replaced by the file $1.
splice() {
    awk -v b="$begin" -v e="$end" -v f="$1" '
    $0 == b { while ((getline l < f) > 0) print l; skip = 1; found++; next }
    $0 == e { skip = 0; next }
    !skip { print }
    END { if (found != 1) { print "bench_table: the page needs one \"" b "\" line" > "/dev/stderr"; exit 2 } }
    ' "$readme"
}

case $mode in
print) printf '%s\n' "$block" ;;
update)
    tmp=$(mktemp)
    printf '%s\n' "$block" > "$tmp"
    splice "$tmp" > "$tmp.readme" && mv "$tmp.readme" "$readme"
    rm -f "$tmp"
    echo "bench_table: $readme updated from $csv" ;;
check)
    tmp=$(mktemp)
    printf '%s\n' "$block" > "$tmp"
    awk -v b="$begin" -v e="$end" '$0 == b { on = 1 } on { print } $0 == e { on = 0 }' \
        "$readme" > "$tmp.have"
    if cmp -s "$tmp" "$tmp.have"; then
        rm -f "$tmp" "$tmp.have"
        echo "bench_table: the table in $readme is the one $csv gives"
    else
        echo "bench_table: the table in $readme is not the one $csv gives" \
             "(render it with: sh tools/bench_table.sh --update $readme $csv $machine):"
        diff "$tmp.have" "$tmp" || true
        rm -f "$tmp" "$tmp.have"
        exit 1
    fi ;;
esac
