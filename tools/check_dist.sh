#!/bin/sh
# The committed two-file build, dist/, is what tools/amalgamate.sh makes of
# today's sources; and those two files, with nothing else, build a program.
#
#   check_dist.sh ROOT WORKDIR CC SOURCE...
#
# SOURCE... as for amalgamate.sh (CMakeLists.txt passes TECS_SOURCES).
# Fails, printing the start of the difference, when dist/ is out of date:
# `make dist` writes it again. Then compiles examples/hello.c against
# dist/ alone, as the README's two-file way in says, and runs it.
set -eu
[ $# -ge 4 ] || { echo "usage: check_dist.sh ROOT WORKDIR CC SOURCE..." >&2; exit 2; }
root=$1 work=$2 cc=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
sh "$root/tools/amalgamate.sh" "$root" "$work/dist" "$@"
if ! diff -r "$root/dist" "$work/dist" > "$work/dist.diff"; then
    echo "check_dist: dist/ is out of date with the sources; run make dist"
    head -40 "$work/dist.diff"
    exit 1
fi
# A program built from the two files and nothing else of the repository.
mkdir -p "$work/app"
cp "$root/dist/tinyecs.c" "$root/dist/tinyecs.h" "$root/examples/hello.c" "$work/app/"
cp -r "$root/dist/tinyecs" "$work/app/"
cd "$work/app"
# shellcheck disable=SC2086  # CC may carry flags
$cc -std=c11 -Wall -Wextra -Werror -pedantic -O1 hello.c tinyecs.c -o hello -pthread -lm
./hello > hello.out
[ -s hello.out ] || { echo "check_dist: hello built from dist/ printed nothing"; exit 1; }
echo "check_dist: dist/ is up to date; hello built from it and ran"
