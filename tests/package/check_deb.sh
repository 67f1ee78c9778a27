#!/bin/sh
# The packages of `make package`, used as a user of the .deb would.
#
#   check_deb.sh SOURCE_DIR WORK_DIR [CC] [CMAKE]
#
#   1. tools/make_package.sh builds the .deb and the .tar.gz;
#   2. the .deb is unpacked into WORK_DIR/root (dpkg-deb -x) and holds the
#      libraries (the shared one's soname libtinyecs.so.MAJOR), the headers,
#      tecs-dump, the CMake package and the pkg-config file; the .tar.gz
#      holds the same files;
#   3. find_package/ is built against the root (CMAKE_PREFIX_PATH), linking
#      the static and the shared library, and cc app.c with the flags
#      pkg-config gives from the root's .pc file; each program runs and
#      prints the expected line.
# Exits 77 (CTest: skipped) where dpkg-deb or pkg-config is missing.
set -eu
src=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
cmake=${4:-cmake}
here=$src/tests/package
for tool in dpkg-deb pkg-config; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "check_deb: skipped: $tool is not installed"; exit 77; }
done
version=$(sh "$src/tools/version.sh" "$src")
major=${version%%.*}
expect="tinyecs $version: 3 entities, sum 6"

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$work/log
fail() {
    echo "check_deb: FAILED: $1"
    tail -n 40 "$log" 2>/dev/null || true
    exit 1
}
run() {   # run NAME PROGRAM: it must print the expected line
    out=$("$2" 2>&1) || fail "$1: $2 exited with $?: $out"
    [ "$out" = "$expect" ] || fail "$1: printed '$out', expected '$expect'"
    echo "ok: $1"
}

pkgs=$(sh "$src/tools/make_package.sh" "$src" "$work/build" "$cc" "$cmake" 2>>"$log") ||
    fail "make_package.sh"
deb=$(printf '%s\n' "$pkgs" | grep '\.deb$') || fail "no .deb was made"
tgz=$(printf '%s\n' "$pkgs" | grep '\.tar\.gz$') || fail "no .tar.gz was made"
echo "ok: made $(basename "$deb") and $(basename "$tgz")"

root=$work/root
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "the .deb's version is not $version"
libdir=$(dirname "$(find "$root" -name tinyecs.pc)")
libdir=${libdir%/pkgconfig}
for f in "$root/usr/include/tinyecs.h" "$root/usr/include/tinyecs/system.h" \
         "$root/usr/bin/tecs-dump" "$libdir/libtinyecs.a" "$libdir/libtinyecs.so" \
         "$libdir/libtinyecs.so.$major" "$libdir/libtinyecs.so.$version" \
         "$libdir/cmake/tinyecs/tinyecsConfig.cmake" \
         "$libdir/cmake/tinyecs/tinyecsConfigVersion.cmake"; do
    [ -e "$f" ] || fail "the .deb lacks ${f#"$root"}"
done
soname=$(objdump -p "$libdir/libtinyecs.so.$version" | sed -n 's/^ *SONAME *//p')
[ "$soname" = "libtinyecs.so.$major" ] || fail "soname is '$soname', not libtinyecs.so.$major"
echo "ok: the .deb holds libraries (soname $soname), headers, tecs-dump, CMake and pkg-config files"

mkdir -p "$work/tgz"
tar xzf "$tgz" -C "$work/tgz"
(cd "$root" && find . -type f -o -type l | sort) > "$work/deb.files"
(cd "$work/tgz"/* && find . -type f -o -type l | sort) > "$work/tgz.files"
diff "$work/deb.files" "$work/tgz.files" >>"$log" || fail "the .tar.gz and the .deb hold different files"
echo "ok: the .tar.gz holds the same files"

LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
"$root/usr/bin/tecs-dump" --help >>"$log" 2>&1 || fail "tecs-dump --help"

"$cmake" -S "$here/find_package" -B "$work/find_package" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$root/usr" >>"$log" 2>&1 ||
    fail "find_package: configure"
"$cmake" --build "$work/find_package" >>"$log" 2>&1 || fail "find_package: build"
run "find_package, tinyecs::tinyecs" "$work/find_package/app"
run "find_package, tinyecs::shared" "$work/find_package/app_shared"

flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs tinyecs) ||
    fail "pkg-config does not find tinyecs in the .deb"
case $flags in *"$root"*) ;; *) fail "pkg-config's flags '$flags' do not point into the .deb's root" ;; esac
# shellcheck disable=SC2086  # the flags are meant to split
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic "$here/app.c" $flags -o "$work/app_pc" \
    >>"$log" 2>&1 || fail "pkg-config: cc app.c $flags"
run "pkg-config" "$work/app_pc"
