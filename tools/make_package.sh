#!/bin/sh
# make package: a release build installed under /usr, packed by CPack as a
# .deb and a .tar.gz (CMakeLists.txt's CPack settings).
#
#   make_package.sh SOURCE_DIR BUILD_DIR [CC] [CMAKE] [JOBS]
#
# Prints the two packages' paths. tests/package/check_deb.sh calls it too,
# so that the test checks what `make package` makes.
set -eu
[ $# -ge 2 ] || { echo "usage: make_package.sh SOURCE_DIR BUILD_DIR [CC] [CMAKE] [JOBS]" >&2; exit 2; }
src=$1 build=$2 cc=${3:-cc} cmake=${4:-cmake} jobs=${5:-2}
cpack=$(dirname "$(command -v "$cmake")")/cpack
[ -x "$cpack" ] || cpack=cpack
"$cmake" -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_C_COMPILER="$cc" -DTECS_BUILD_TESTS=OFF -DTECS_BUILD_EXAMPLES=OFF \
    -DTECS_BUILD_BENCH=OFF -DTECS_BUILD_DEMO=OFF >/dev/null
"$cmake" --build "$build" -j"$jobs" >/dev/null
(cd "$build" && "$cpack" >/dev/null)
ls "$build"/*.deb "$build"/*.tar.gz
