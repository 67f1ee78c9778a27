#!/bin/sh
# The two-file build: dist/tinyecs.c and dist/tinyecs.h, made from the
# sources, so that a user drops two files into a project and compiles one.
#
#   amalgamate.sh ROOT OUTDIR SOURCE...
#
# SOURCE... are the library's .c files relative to ROOT, in the order
# CMakeLists.txt compiles them (it passes its TECS_SOURCES list, every
# add-on on, so the list lives in one place). OUTDIR receives:
#
#   tinyecs.h           include/tinyecs.h and the headers of the add-ons the
#                       library holds (index, observer, system, snapshot,
#                       resource, relation, meta, change, handle), each once
#   tinyecs/NAME.h      one line each, including ../tinyecs.h, so that code
#                       written against the installed headers
#                       (#include <tinyecs/system.h>) builds unchanged
#   tinyecs.c           every source, in order, with the library's own
#                       headers inlined where first included
#
# The JSON module and the inspector need jansson and libmicrohttpd; they
# stay libraries of their own, built with CMake.
#
# Rules the output keeps, so that one translation unit behaves as the many:
# - A header is inlined once, where first included; a later include of it
#   is dropped (its guard would skip it). A core layer's header that has a
#   second pass (src/core/private.h, TECS__WORLD_DONE) is inlined once per
#   pass.
# - The feature macros a source sets before its first #include (os.c's
#   _POSIX_C_SOURCE) move to the top, before any system header.
# - The macros a source file defines are undefined after it, so that no
#   file sees another's.
# - A comment names each file where its text begins and resumes. (No
#   #line directives: a user's compiler messages and debugger point into
#   the file the user has.)
# The output is the same for the same sources (no date, no path of the
# machine), so that the committed copy can be compared with a fresh one.
set -eu
LC_ALL=C
export LC_ALL
[ $# -ge 3 ] || { echo "usage: amalgamate.sh ROOT OUTDIR SOURCE..." >&2; exit 2; }
root=$1
out=$2
shift 2
mkdir -p "$out/tinyecs"

publics="include/tinyecs.h"
for h in "$root"/include/tinyecs/*.h; do
    name=$(basename "$h")
    case $name in
        json.h|inspect.h) ;;          # add-ons on other libraries
        *) publics="$publics include/tinyecs/$name" ;;
    esac
done

version=$(sed -n 's/^project(tinyecs VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")

# inline.awk: print the files named on its command line (relative to
# ROOT), inlining the library's headers by the rules above. mode=header
# writes the public header; mode=source the .c file, where a public header
# becomes one #include "tinyecs.h".
cat > "$out/.inline.awk" <<'AWK'
function dirof(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
# a/b/../c -> a/c
function tidy(p,   n, parts, i, outp, k, stack) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "." || parts[i] == "") continue
        if (parts[i] == ".." && k > 0 && stack[k] != "..") { k--; continue }
        stack[++k] = parts[i]
    }
    outp = ""
    for (i = 1; i <= k; i++) outp = outp (i > 1 ? "/" : "") stack[i]
    return outp
}
function exists(p,   line, r) {
    r = (getline line < (root "/" p)) >= 0
    close(root "/" p)
    return r
}
# A quoted include: beside the including file, else under include/.
function resolve(from, name,   p) {
    p = tidy(dirof(from) "/" name)
    if (exists(p)) return p
    p = tidy("include/" name)
    if (exists(p)) return p
    p = tidy("src/core/" name)
    if (exists(p)) return p
    printf "amalgamate: %s includes \"%s\", not found\n", from, name > "/dev/stderr"
    failed = 1
    exit 1
}
function two_pass(p,   line, r) {
    if (p in passes) return passes[p]
    r = 0
    while ((getline line < (root "/" p)) > 0)
        if (line ~ /defined\(TECS__WORLD_DONE\)/) r = 1
    close(root "/" p)
    passes[p] = r
    return r
}
function is_public(p) { return p ~ /^include\// }
function emit(p,   line, name, target, key, m) {
    print "/* ---- " p " ---- */"
    while ((getline line < (root "/" p)) > 0) {
        if (line ~ /^[ \t]*#[ \t]*include[ \t]*"/) {
            name = line
            sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", name)
            sub(/".*$/, "", name)
            target = resolve(p, name)
            if (mode == "source" && is_public(target)) {
                if (!public_done) print "#include \"tinyecs.h\""
                else print ""
                public_done = 1
                continue
            }
            key = target (two_pass(target) ? ":" world_done : "")
            if (key in done) { print ""; continue }
            done[key] = 1
            emit(target)
            print "/* ---- " p " (continued) ---- */"
            continue
        }
        if (line ~ /^#define TECS__WORLD_DONE/) world_done = 1
        # In a source file, its own macros are undefined after it.
        if (mode == "source" && p ~ /\.c$/ && line ~ /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]/) {
            m = line
            sub(/^[ \t]*#[ \t]*define[ \t]+/, "", m)
            sub(/[^A-Za-z0-9_].*$/, "", m)
            if (!(m in hoisted)) macros[p] = macros[p] " " m
        }
        print line
    }
    close(root "/" p)
}
# The feature macros before a source's first #include, for the top.
function prelude(p,   line, depth, block, keep) {
    block = ""; keep = 0
    while ((getline line < (root "/" p)) > 0) {
        if (line ~ /^[ \t]*#[ \t]*include/) break
        if (line ~ /^[ \t]*#/) {
            block = block line "\n"
            if (line ~ /^[ \t]*#[ \t]*define[ \t]+_/) {
                m = line
                sub(/^[ \t]*#[ \t]*define[ \t]+/, "", m)
                sub(/[^A-Za-z0-9_].*$/, "", m)
                hoisted[m] = 1
                keep = 1
            }
        }
    }
    close(root "/" p)
    if (keep) { printf "%s", block; hoisted_from[p] = 1 }
}
# Skip a source's lines before its first #include when they were hoisted.
BEGIN {
    world_done = 0
    if (mode == "source") {
        for (i = 1; i < ARGC; i++) prelude(ARGV[i])
        print "#if defined(TECS__RELATION) && !TECS__RELATION"
        print "#error \"tinyecs.c holds the relation add-on\""
        print "#endif"
        print "#define TECS__RELATION 1"
        print "#if defined(__clang__)"
        print "/* One translation unit: clang counts the layers' unused static inline"
        print "** functions as the main file's. */"
        print "#pragma clang diagnostic ignored \"-Wunused-function\""
        print "#endif"
    }
    for (i = 1; i < ARGC; i++) {
        p = ARGV[i]
        if (mode == "source" && (p in hoisted_from)) {
            print "/* " p ": its feature macros are at the top of this file. */"
        }
        key = p (two_pass(p) ? ":" world_done : "")
        if (key in done) continue
        done[key] = 1
        emit(p)
        if (mode == "source") {
            n = split(macros[p], ms, " ")
            for (j = 1; j <= n; j++) print "#undef " ms[j]
        }
    }
    exit failed
}
AWK

{
    cat <<EOF
/*
** tinyecs.h — the whole public API of tinyecs $version in one header: the
** core and the add-ons dist/tinyecs.c holds. Generated from include/ by
** tools/amalgamate.sh (make dist); edit the sources, not this file.
** Build: compile tinyecs.c with this header beside it (C11; -pthread on
** POSIX). The JSON module and the inspector are built with CMake.
*/
EOF
    awk -v root="$root" -v mode=header -f "$out/.inline.awk" $publics
} > "$out/tinyecs.h.tmp"

{
    cat <<EOF
/*
** tinyecs.c — the tinyecs $version library in one file: the core and the
** add-ons index, observer, system, snapshot, resource and relation.
** Generated from src/ by tools/amalgamate.sh (make dist); edit the
** sources, not this file. Compile it as C11 with tinyecs.h beside it,
** e.g.  cc -std=c11 -O2 -c tinyecs.c  (and link with -pthread on POSIX).
*/
EOF
    awk -v root="$root" -v mode=source -f "$out/.inline.awk" "$@"
} > "$out/tinyecs.c.tmp"

for p in $publics; do
    case $p in
        include/tinyecs/*)
            name=$(basename "$p")
            printf '/* tinyecs/%s: in ../tinyecs.h with the rest of the API. */\n#include "../tinyecs.h"\n' \
                "$name" > "$out/tinyecs/$name"
            ;;
    esac
done
rm -f "$out/.inline.awk"
mv "$out/tinyecs.h.tmp" "$out/tinyecs.h"
mv "$out/tinyecs.c.tmp" "$out/tinyecs.c"
