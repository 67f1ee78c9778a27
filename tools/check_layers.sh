#!/bin/sh
# The layers of src/: every call between two source files goes down.
#
#   check_layers.sh LAYERS SRC_DIR OBJECTS
#   check_layers.sh LAYERS SRC_DIR -          (the sources alone, no objects)
#
# LAYERS lists the source files of SRC_DIR, one path (relative to SRC_DIR)
# a line, the bottom layer first; '#' starts a comment. A file may use the
# tecs_ / tecs__ symbols of the files listed above it and of no other file,
# and the same holds for the inline functions and macros of the headers:
# a header D/X.h belongs to D/X.c, a header without such a file (private.h,
# internal.h) to the first file of its folder in LAYERS.
# A line `allow A -> B` lets A call B although B is listed below A: a known
# upward edge, to be taken out once it is gone. OBJECTS are the library's
# object files (one argument each, or one ';'-separated argument as CMake's
# $<TARGET_OBJECTS:...> gives them, or a directory to search); an object's
# source path is what follows the last "/src/" in its path, less ".o".
#
# From the objects' symbol tables (nm: "U" used, "T D B R ..." defined), and
# from the sources' text (each tecs_ / TECS_ identifier a .c file names,
# comments and strings left out, against the static inline functions and
# macros each header defines, so that a use the compiler inlines is seen
# too), it computes which file uses which other file's symbols, and fails, naming each
# offending edge and a symbol that makes it, when
#   - a file uses a file listed below it, without an allow line;
#   - a source file of SRC_DIR is missing from LAYERS, or listed twice, or
#     LAYERS lists a file SRC_DIR does not have;
#   - an allow line names an edge that is not an upward call (any more).
# Exit status 0 when the layers hold, 1 when they do not, 2 on bad use.
set -eu

[ $# -ge 3 ] || { echo "usage: check_layers.sh LAYERS SRC_DIR OBJECTS..." >&2; exit 2; }
layers=$1 src=$2
shift 2
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The object files, whatever form they came in.
: > "$tmp/objects"
for a in "$@"; do
    old_ifs=$IFS
    IFS=';'
    for o in $a; do
        IFS=$old_ifs
        if [ -d "$o" ]; then
            find "$o" -name '*.o' -o -name '*.obj' >> "$tmp/objects"
        elif [ "$o" = - ]; then
            sources_only=1
        elif [ -n "$o" ]; then
            printf '%s\n' "$o" >> "$tmp/objects"
        fi
    done
    IFS=$old_ifs
done
[ -s "$tmp/objects" ] || [ -n "${sources_only:-}" ] || { echo "check_layers: no object files given" >&2; exit 2; }

# "U file symbol" and "D file symbol" for every tecs_ symbol of every object.
while IFS= read -r o; do
    [ -f "$o" ] || { echo "check_layers: $o: no such object file" >&2; exit 2; }
    name=$(printf '%s\n' "$o" | sed 's|.*/src/||; s|\.o$||; s|\.obj$||')
    "$NM" "$o" | awk -v n="$name" '
        $1 == "U" && $2 ~ /^tecs_/ { print "U", n, $2 }
        NF == 3 && $2 ~ /^[TDBRCGSVW]$/ && $3 ~ /^tecs_/ { print "D", n, $3 }'
done < "$tmp/objects" > "$tmp/symbols"

# The source files, relative to SRC_DIR.
(cd "$src" && find . -name '*.c' | sed 's|^\./||' | sort) > "$tmp/sources"

# "H header name" for every static inline function and macro a header of
# SRC_DIR defines with a tecs_ / TECS_ name (its owner is found below).
(cd "$src" && find . -name '*.h' | sed 's|^\./||' | sort) | while IFS= read -r h; do
    awk -v h="$h" '
        /^[ \t]*#[ \t]*define[ \t]+(tecs_|TECS_)/ {
            sub(/^[ \t]*#[ \t]*define[ \t]+/, ""); sub(/[^A-Za-z0-9_].*/, ""); print "H", h, $0 }
        /^static[^(]*(inline|TECS__INLINE)[^(]*[ *](tecs_|TECS_)[A-Za-z0-9_]*[ \t]*\(/ {
            s = $0; sub(/[ \t]*\(.*/, "", s); sub(/.*[ *]/, "", s); print "H", h, s }' "$src/$h"
done >> "$tmp/symbols"

# "S file name" for every tecs_ / TECS_ identifier a source file names,
# outside comments, strings and character constants.
while IFS= read -r f; do
    awk -v f="$f" '
    { text = text $0 "\n" }
    END {
        n = length(text); out = ""; st = 0       # 0 code, 1 /* */, 2 //, 3 "", 4 \x27\x27
        for (i = 1; i <= n; i++) {
            c = substr(text, i, 1); d = substr(text, i + 1, 1)
            if (st == 0) {
                if (c == "/" && d == "*") { st = 1; i++; c = " " }
                else if (c == "/" && d == "/") { st = 2; i++; c = " " }
                else if (c == "\"") { st = 3; c = " " }
                else if (c == "\x27") { st = 4; c = " " }
                out = out c
            } else if (st == 1) {
                if (c == "*" && d == "/") { st = 0; i++ }
            } else if (st == 2) {
                if (c == "\n") { st = 0; out = out c }
            } else {
                if (c == "\\") i++
                else if ((st == 3 && c == "\"") || (st == 4 && c == "\x27")) st = 0
            }
        }
        while (match(out, /(tecs_|TECS_)[A-Za-z0-9_]*/)) {
            id = substr(out, RSTART, RLENGTH)
            if (RSTART == 1 || substr(out, RSTART - 1, 1) !~ /[A-Za-z0-9_]/)
                if (!(id in seen)) { seen[id] = 1; print "S", f, id }
            out = substr(out, RSTART + RLENGTH)
        }
    }' "$src/$f"
done < "$tmp/sources" >> "$tmp/symbols"

awk -v layers="$layers" -v sources="$tmp/sources" '
BEGIN {
    bad = 0
    while ((getline line < layers) > 0) {
        ln++
        sub(/#.*/, "", line)
        gsub(/^[ \t]+|[ \t]+$/, "", line)
        if (line == "")
            continue
        if (line ~ /^allow[ \t]/) {
            if (split(line, a, /[ \t]+/) != 4 || a[3] != "->") {
                printf "%s:%d: an allow line reads \"allow A -> B\", not \"%s\"\n", layers, ln, line
                bad = 1
                continue
            }
            allow[a[2] " -> " a[4]] = ln
            continue
        }
        if (line in pos) {
            printf "%s:%d: %s is listed twice (first on line %d)\n", layers, ln, line, pos[line]
            bad = 1
            continue
        }
        pos[line] = ln
        name[++nfiles] = line
    }
    close(layers)
    while ((getline f < sources) > 0) {
        have[f] = 1
        if (!(f in pos)) {
            printf "%s: %s is a source file but is not listed: give it its layer\n", layers, f
            bad = 1
        }
    }
    for (i = 1; i <= nfiles; i++)
        if (!(name[i] in have)) {
            printf "%s:%d: %s is listed but there is no such source file\n", layers, pos[name[i]], name[i]
            bad = 1
        }
}
# The file a header belongs to: D/X.c, else the first file of folder D.
function owner(h,    c, d, i, best) {
    c = h; sub(/\.h$/, ".c", c)
    if (c in pos)
        return c
    d = h; if (!sub(/\/[^\/]*$/, "/", d)) d = ""
    best = ""
    for (i = 1; i <= nfiles; i++)
        if (substr(name[i], 1, length(d)) == d && (d != "" || name[i] !~ /\//)) {
            best = name[i]
            break
        }
    return best
}
$1 == "D" { def[$3] = $2 }
$1 == "U" { nu++; user[nu] = $2; sym[nu] = $3 }
$1 == "H" {
    o = owner($2)
    if (o != "" && (!($3 in hdef) || pos[o] < pos[hdef[$3]])) {
        hdef[$3] = o
        hfrom[$3] = $2
    }
}
$1 == "S" { nu++; user[nu] = $2; sym[nu] = $3; text[nu] = 1 }
END {
    for (i = 1; i <= nu; i++) {
        s = sym[i]
        if (s in def)
            d = def[s]
        else if (text[i] && (s in hdef))
            d = hdef[s]
        else
            continue
        if (d == user[i])
            continue
        e = user[i] " -> " d
        if (!(e in edge))
            edge[e] = (s in def) ? s : s " (" hfrom[s] ")"
    }
    for (e in edge) {
        split(e, a, " -> ")
        if (!(a[1] in pos) || !(a[2] in pos))
            continue            # reported above as not listed
        if (pos[a[1]] > pos[a[2]])
            continue            # a call down: the rule
        if (e in allow) {
            used[e] = 1
            continue
        }
        printf "upward call: %s -> %s (uses %s): %s (%s:%d) is a layer above %s (line %d);" \
               " a file calls only the files listed before it\n",
               a[1], a[2], edge[e], a[2], layers, pos[a[2]], a[1], pos[a[1]]
        bad = 1
    }
    for (e in allow)
        if (!(e in used)) {
            printf "%s:%d: allow %s: no such upward call any more; remove the line\n",
                   layers, allow[e], e
            bad = 1
        }
    n = 0
    for (e in edge) n++
    a_n = 0
    for (e in used) a_n++
    if (bad)
        exit 1
    printf "layers hold: %d files, %d edges between them, %d allowed upward\n", nfiles, n, a_n
}' "$tmp/symbols"
