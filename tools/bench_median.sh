#!/bin/sh
# The median of several `make bench` CSVs, row by row, as one CSV.
#
#   bench_median.sh RUN1.csv RUN2.csv ...  > MEDIAN.csv
#
# Each file has the columns scenario,n,value,unit,ratio_to_raw (bench.c
# --csv). A row's value and its ratio to raw are each the median of that
# row's figures over the files (the mean of the middle two for an even
# count); n and unit come from the first file, whose row order is kept. A
# row missing from any file, or one with another n or unit, is an error:
# the runs must be of one benchmark.
set -eu
[ $# -ge 1 ] || { echo "usage: bench_median.sh CSV..." >&2; exit 2; }
awk -F, -v files=$# '
function median(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++)            # insertion sort: a few figures
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
FNR == 1 { file++; if (file == 1) header = $0; next }
{
    key = $1
    if (file == 1) {
        order[++rows] = key; n[key] = $2; unit[key] = $4
    } else if (!(key in n) || n[key] != $2 || unit[key] != $4) {
        printf "bench_median: %s: row %s is not in the first file as it is here\n",
               FILENAME, key > "/dev/stderr"
        bad = 1; exit 1
    }
    seen[key]++
    vals[key] = vals[key] " " $3
    if ($5 != "") ratios[key] = ratios[key] " " $5
}
END {
    if (bad) exit 1
    for (i = 1; i <= rows; i++)
        if (seen[order[i]] != files) {
            printf "bench_median: row %s is in %d of %d files\n",
                   order[i], seen[order[i]], files > "/dev/stderr"
            exit 1
        }
    print header
    for (i = 1; i <= rows; i++) {
        key = order[i]
        r = (key in ratios) ? sprintf("%.3f", median(ratios[key])) : ""
        printf "%s,%s,%.4f,%s,%s\n", key, n[key], median(vals[key]), unit[key], r
    }
}' "$@"
