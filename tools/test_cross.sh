#!/bin/sh
# make test-cross: build the library, its tests, examples, demo and
# benchmarks for other platforms and run the whole CTest suite on each.
#
#   tools/test_cross.sh [TARGET...]     TARGET: windows i686 s390x (all by default)
#
#   windows  x86_64 Windows: mingw-w64 cross compiler, tests under wine
#   i686     32-bit x86 Linux: i686 cross compiler, tests under qemu-user
#   s390x    big-endian 64-bit Linux: s390x cross compiler, tests under
#            qemu-user
#
# The toolchain files are cmake/toolchains/*.cmake; each target builds in
# build-cross-TARGET/. Debian packages a target needs and lacks are
# installed (apt-get, as root) after saying which; without root the script
# says what to install and stops. gcc-multilib is not used for 32-bit: it
# conflicts with Debian's cross compilers, and this kernel runs no 32-bit
# binaries itself, so i686 runs under qemu-user like s390x.
#
# Environment: JOBS (parallel builds and tests, default 2), CROSS_MODEL_OPS
# (operations of the long model test, default 250000 where the native run
# does 1,000,000: the emulators run it 5-20 times slower), CROSS_DIST=1
# (the library built from the two-file build, dist/tinyecs.c, in
# build-cross-TARGET-dist/).
set -eu
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
model_ops=${CROSS_MODEL_OPS:-250000}
targets=${*:-windows i686 s390x}
dist_flags=
dist_dir=
if [ "${CROSS_DIST:-0}" = 1 ]; then
    dist_flags=-DTECS_AMALGAMATION=ON
    dist_dir=-dist
fi

# What a target needs: "test-for-presence package" pairs.
needs() {
    case $1 in
    windows) echo "cmd:x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64" \
                  "file:/usr/lib/wine/wine64 wine64" ;;
    i686)    echo "cmd:i686-linux-gnu-gcc gcc-i686-linux-gnu" \
                  "file:/usr/i686-linux-gnu/include/stdio.h libc6-dev-i386-cross" \
                  "cmd:qemu-i386 qemu-user" ;;
    s390x)   echo "cmd:s390x-linux-gnu-gcc gcc-s390x-linux-gnu" \
                  "file:/usr/s390x-linux-gnu/include/stdio.h libc6-dev-s390x-cross" \
                  "cmd:qemu-s390x qemu-user" ;;
    esac
}

for t in $targets; do
    case $t in
    windows|i686|s390x) ;;
    *) echo "test-cross: unknown target '$t' (windows, i686, s390x)" >&2; exit 2 ;;
    esac
done

missing=
for t in $targets; do
    set -- $(needs "$t")
    while [ $# -ge 2 ]; do
        what=$1 pkg=$2
        shift 2
        case $what in
        cmd:*)  command -v "${what#cmd:}" >/dev/null 2>&1 && continue ;;
        file:*) [ -e "${what#file:}" ] && continue ;;
        esac
        case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac
    done
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "test-cross: missing Debian packages:$missing"
        echo "  install them as root: apt-get install$missing"
        exit 1
    fi
    echo "test-cross: installing Debian packages:$missing"
    apt-get update -qq
    # shellcheck disable=SC2086  # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

toolchain() {
    case $1 in
    windows) echo mingw-w64-x86_64 ;;
    i686)    echo i686-linux-gnu ;;
    s390x)   echo s390x-linux-gnu ;;
    esac
}

summary=
failed=0
for t in $targets; do
    b=build-cross-$t$dist_dir
    echo "== test-cross: $t (cmake/toolchains/$(toolchain "$t").cmake, in $b)"
    # shellcheck disable=SC2086  # dist_flags: one word or none
    cmake -S . -B "$b" -DCMAKE_TOOLCHAIN_FILE="$(pwd)/cmake/toolchains/$(toolchain "$t").cmake" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo $dist_flags >/dev/null
    cmake --build "$b" -j"$jobs"
    if [ "$t" = windows ]; then
        # A wine prefix of the build's own, made before the tests start (two
        # tests making it at once fail); one wine server for the whole run
        # (one that exits when idle drops the tests connecting to it); and
        # wine's services started here, away from the tests' output, which
        # CTest would otherwise wait on for as long as the services live.
        WINEPREFIX=$(pwd)/$b/wine WINEDEBUG=-all
        export WINEPREFIX WINEDEBUG
        /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 || true
        wineserver -w
        wineserver -p
        /usr/lib/wine/wine64 wineboot >/dev/null 2>&1 </dev/null || true
    fi
    if (cd "$b" && TECS_MODEL_OPS=$model_ops ctest --output-on-failure --timeout 900 \
            -j"$jobs") \
            >"$b/ctest.log" 2>&1; then
        result=passed
    elif [ "$t" = windows ]; then
        # Wine fails a process now and then, not the test in it: its Linux
        # loader asserts in _dl_fini as a process exits ("Inconsistency
        # detected by ld.so: dl-fini.c"), or a process ends at once with
        # nothing written (a test, or the app the package test builds, never
        # ran). The failed tests run once
        # more; a test that fails again fails the run, so a failure of the
        # code, which repeats, still fails it.
        cat "$b/ctest.log"
        echo "test-cross: Windows tests failed under wine; running the failed tests again"
        if (cd "$b" && TECS_MODEL_OPS=$model_ops ctest --output-on-failure --timeout 900 \
                --rerun-failed) >"$b/ctest.log" 2>&1; then
            result="passed (the failed tests, run again)"
        else
            result=FAILED
            failed=1
        fi
    else
        result=FAILED
        failed=1
    fi
    cat "$b/ctest.log"
    result="$result: $(grep 'tests passed' "$b/ctest.log" || echo 'no CTest summary')"
    [ "$t" = windows ] && wineserver -k 2>/dev/null || true
    summary="$summary
  $t: $result"
done
echo "test-cross (model test at $model_ops operations${dist_dir:+, the library from dist/tinyecs.c}):$summary"
exit $failed
