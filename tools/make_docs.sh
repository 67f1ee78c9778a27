#!/bin/sh
# make docs: the documentation site, the manual's pages and the API
# reference, built by Doxygen (Doxyfile) into OUT/html.
#
#   make_docs.sh ROOT OUT [--check]
#
# The version shown is the header's. --check then runs tools/check_site.sh
# on the site: every internal link resolves and every public function of
# include/ has a reference entry. Exits 77 when doxygen is not installed
# (CTest: skipped), saying how to add it.
set -eu
[ $# -ge 2 ] || { echo "usage: make_docs.sh ROOT OUT [--check]" >&2; exit 2; }
root=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
doxygen=${DOXYGEN:-doxygen}
if ! command -v "$doxygen" >/dev/null 2>&1; then
    echo "make_docs: doxygen is not installed: apt-get install doxygen (or see https://www.doxygen.nl)"
    exit 77
fi
version=$(sh "$root/tools/version.sh" "$root")
rm -rf "$out/html"
(cd "$root" && TECS_VERSION=$version TECS_DOCS_OUT=$out "$doxygen" Doxyfile)
echo "make_docs: $out/html/index.html"
if [ "${3:-}" = --check ]; then
    sh "$root/tools/check_site.sh" "$out/html" "$root/include/tinyecs.h" "$root"/include/tinyecs/*.h
fi
