#!/bin/sh
# The library's version, MAJOR.MINOR.PATCH, as include/tinyecs.h's
# TECS_VERSION_MAJOR, _MINOR and _PATCH lines give it (CMakeLists.txt reads
# the same lines).
#
#   version.sh ROOT
set -eu
sed -n 's/^#define TECS_VERSION_[A-Z]* \([0-9]*\)$/\1/p' "$1/include/tinyecs.h" | paste -sd. -
