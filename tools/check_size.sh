#!/bin/sh
# The library's size, as the README states it, holds.
#
#   check_size.sh README DIR...
#
# README says "under N lines of C" once; the .c and .h files under the DIRs
# (src/ and include/) must hold fewer than N lines in all, comments and
# blank lines included, and more than 4/5 of N, so that the figure stays a
# close bound: when the code outgrows it, or shrinks well below it, the
# README's N changes with it.
set -eu
[ $# -ge 2 ] || { echo "usage: check_size.sh README DIR..." >&2; exit 2; }
readme=$1
shift

claims=$(grep -o 'under [0-9][0-9,]* lines of C' "$readme" || true)
n_claims=$(printf '%s' "$claims" | grep -c . || true)
if [ "$n_claims" -ne 1 ]; then
    echo "check_size: $readme should say \"under N lines of C\" once; it says it $n_claims times"
    exit 1
fi
bound=$(printf '%s\n' "$claims" | sed 's/under \([0-9,]*\) lines of C/\1/; s/,//g')
lines=$(find "$@" -name '*.[ch]' -exec cat {} + | wc -l | tr -d ' ')

if [ "$lines" -ge "$bound" ]; then
    echo "check_size: $* hold $lines lines, not under $bound as $readme says: raise the figure"
    exit 1
fi
if [ $((lines * 5)) -le $((bound * 4)) ]; then
    echo "check_size: $* hold $lines lines, well under the $bound $readme says: lower the figure"
    exit 1
fi
echo "check_size: $lines lines of C, under $bound as $readme says"
