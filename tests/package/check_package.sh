#!/bin/sh
# The packaging test: tinyecs used from outside its tree, three ways.
#
#   check_package.sh SOURCE_DIR WORK_DIR [CC] [CMAKE]
#
#   1. configure, build and install the library into WORK_DIR/prefix
#      (cmake --install --prefix, so the installed files must be relocatable);
#   2. find_package(tinyecs CONFIG REQUIRED) from find_package/, linking
#      tinyecs::tinyecs (static) and tinyecs::shared;
#   3. add_subdirectory of the source tree from subdirectory/, and
#      FetchContent from fetchcontent/: only the static library is built
#      (no tests, demo, examples, benchmarks, tools or shared library);
#   4. cc app.c $(pkg-config --cflags --libs tinyecs) against the prefix,
#      skipped with a message when pkg-config is not installed.
#   5. cc app_json.c $(pkg-config --cflags --libs tinyecs_json) when the JSON
#      module was built (jansson installed), skipped with a message if not.
# Each program must run and print the expected line. Output of the builds
# goes to WORK_DIR/log; it is shown when a step fails.
# A cross build passes, in the environment, TECS_TOOLCHAIN (its CMake
# toolchain file), TECS_RUN (what runs its programs: wine, qemu-user) and
# TECS_EXE (the suffix of a program's file: .exe).
set -eu

src=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
cmake=${4:-cmake}
here=$src/tests/package
version=$(sh "$src/tools/version.sh" "$src")
expect="tinyecs $version: 3 entities, sum 6"

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$work/log

fail() {
    echo "check_package: FAILED: $1"
    tail -n 40 "$log" 2>/dev/null || true
    exit 1
}

step() {
    echo "== $1" >>"$log"
}

toolchain=${TECS_TOOLCHAIN:-}
emu=${TECS_RUN:-}
exe=${TECS_EXE:-}

run() {   # run NAME PROGRAM: the program's output must be the expected line
    # shellcheck disable=SC2086  # emu is a command and its options, or empty
    out=$($emu "$2$exe" 2>&1) || fail "$1: $2 exited with $?: $out"
    out=$(printf '%s' "$out" | tr -d '\r')     # Windows ends its lines with CR LF
    [ "$out" = "$expect" ] || fail "$1: printed '$out', expected '$expect'"
    echo "ok: $1"
}

build() {   # build NAME SOURCE BINARY [cmake options...]
    name=$1 s=$2 b=$3
    shift 3
    step "$name"
    if [ -n "$toolchain" ]; then
        set -- -DCMAKE_TOOLCHAIN_FILE="$toolchain" "$@"
    else
        set -- -DCMAKE_C_COMPILER="$cc" "$@"
    fi
    "$cmake" -S "$s" -B "$b" -DCMAKE_BUILD_TYPE=Release \
        "$@" >>"$log" 2>&1 || fail "$name: configure"
    "$cmake" --build "$b" -j2 >>"$log" 2>&1 || fail "$name: build"
}

build "library" "$src" "$work/lib" -DTECS_BUILD_TESTS=OFF -DTECS_BUILD_EXAMPLES=OFF \
    -DTECS_BUILD_BENCH=OFF
"$cmake" --install "$work/lib" --prefix "$work/prefix" >>"$log" 2>&1 || fail "install"
for f in include/tinyecs.h lib/cmake/tinyecs/tinyecsConfig.cmake \
         lib/cmake/tinyecs/tinyecsConfigVersion.cmake lib/pkgconfig/tinyecs.pc \
         "bin/tecs-dump$exe"; do
    [ -f "$work/prefix/$f" ] || fail "install: $f is missing"
done
# shellcheck disable=SC2086  # emu is a command and its options, or empty
$emu "$work/prefix/bin/tecs-dump$exe" --help >>"$log" 2>&1 || fail "tecs-dump --help"
echo "ok: installed into $work/prefix"
# Windows finds a DLL beside the program or on the PATH; under wine, WINEPATH.
WINEPATH="$work/prefix/bin"
export WINEPATH

build "find_package" "$here/find_package" "$work/find_package" \
    -DCMAKE_PREFIX_PATH="$work/prefix"
run "find_package, tinyecs::tinyecs" "$work/find_package/app"
run "find_package, tinyecs::shared" "$work/find_package/app_shared"

only_libraries() {   # only_libraries NAME DIR: DIR built no program but the app
    extra=$(find "$2" -type f \( -name 'tecs-dump*' -o -name 'boids*' -o -name 'example_*' \
            -o -name 'tinyecs_tests*' -o -name 'tinyecs_bench*' -o -name 'libtinyecs.so*' \
            -o -name '*.dll' \) | head -n 3)
    [ -z "$extra" ] || fail "$1: a subproject built more than the libraries: $extra"
}
build "add_subdirectory" "$here/subdirectory" "$work/subdirectory" \
    -DTINYECS_SOURCE_DIR="$src"
run "add_subdirectory" "$work/subdirectory/app"
only_libraries "add_subdirectory" "$work/subdirectory/tinyecs"
build "FetchContent" "$here/fetchcontent" "$work/fetchcontent" \
    -DTINYECS_SOURCE_DIR="$src"
run "FetchContent" "$work/fetchcontent/app"
only_libraries "FetchContent" "$work/fetchcontent/_deps"

if ! command -v pkg-config >/dev/null 2>&1; then
    echo "skipped: pkg-config is not installed, the .pc file was not tried"
    exit 0
fi
step "pkg-config"
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs tinyecs) \
    || fail "pkg-config does not find tinyecs"
# shellcheck disable=SC2086  # the flags are meant to split
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic "$here/app.c" $flags -o "$work/app_pc" \
    >>"$log" 2>&1 || fail "pkg-config: cc app.c $flags"
# -ltinyecs picks the shared library; it is not in the loader's path. An
# emulator that sets the guest's LD_LIBRARY_PATH itself (qemu-user's -E,
# see cmake/toolchains) is given one that has the library's directory too.
LD_LIBRARY_PATH="$work/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
emu_libs=$(printf '%s' "$emu" | sed -n 's/.*-E LD_LIBRARY_PATH=\([^ ]*\).*/\1/p')
[ -z "$emu_libs" ] || emu="$emu -E LD_LIBRARY_PATH=$work/prefix/lib:$emu_libs"
run "pkg-config: $flags" "$work/app_pc"

# The JSON module, when the library was built with it (jansson installed).
if [ ! -f "$work/prefix/lib/pkgconfig/tinyecs_json.pc" ]; then
    echo "skipped: tinyecs_json was not built (no jansson), its .pc was not tried"
    exit 0
fi
step "pkg-config tinyecs_json"
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs tinyecs_json) \
    || fail "pkg-config does not find tinyecs_json"
# shellcheck disable=SC2086  # the flags are meant to split
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic "$here/app_json.c" $flags -o "$work/app_json" \
    >>"$log" 2>&1 || fail "pkg-config: cc app_json.c $flags"
expect="tinyecs_json: 3 entities, pb 1"
run "pkg-config tinyecs_json: $flags" "$work/app_json"
