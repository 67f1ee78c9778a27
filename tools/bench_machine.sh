#!/bin/sh
# The machine a benchmark ran on, as "key: value" lines (for docs/bench/).
#
#   bench_machine.sh BUILD_DIR COMMAND [RUNS]
#
# BUILD_DIR is the benchmark's CMake build directory (its compiler is read
# from CMakeCache.txt); COMMAND is the command line that ran the benchmark;
# RUNS (default 1) how many full runs its figures are the median of.
set -eu
build=$1 command=$2 runs=${3-1}

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
[ -n "$cpu" ] || cpu=$(uname -m)
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
cc=$(awk -F= '/^CMAKE_C_COMPILER:/ { print $2; exit }' "$build/CMakeCache.txt")
flags=$(awk -F= '/^CMAKE_C_FLAGS_RELEASE:/ { print $2; exit }' "$build/CMakeCache.txt")
compiler=$("$cc" --version 2>/dev/null | head -1)

echo "cpu: $cpu"
echo "cores: $cores"
echo "compiler: $compiler, $flags"
echo "system: $(uname -sr)"
echo "command: $command"
echo "runs: $runs"
