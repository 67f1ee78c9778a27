#!/bin/sh
# tools/bench_median.sh: medians row by row over three runs, order kept,
# blank ratios kept blank; a run that lacks a row is an error.
set -eu
tool=$1 data=$2
got=$(sh "$tool" "$data/run1.csv" "$data/run2.csv" "$data/run3.csv")
want='scenario,n,value,unit,ratio_to_raw
iterate,1000,0.3000,ns/entity,1.100
raw,1000,0.2500,ns/entity,1.000
save,10,2.0000,ns/entity,'
[ "$got" = "$want" ] || { printf 'medians:\n%s\nwanted:\n%s\n' "$got" "$want"; exit 1; }
if sh "$tool" "$data/run1.csv" "$data/run4-missing.csv" >/dev/null 2>&1; then
    echo "a run without the save row was taken"; exit 1
fi
echo "bench_median: ok"
