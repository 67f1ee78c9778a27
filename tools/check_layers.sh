#!/bin/sh
# The layers of src/: every call between two source files goes down.
#
#   check_layers.sh LAYERS SRC_DIR OBJECTS
#
# LAYERS lists the source files of SRC_DIR, one path (relative to SRC_DIR)
# a line, the bottom layer first; '#' starts a comment. A file may use the
# tecs_ / tecs__ symbols of the files listed above it and of no other file.
# A line `allow A -> B` lets A call B although B is listed below A: a known
# upward edge, to be taken out once it is gone. OBJECTS are the library's
# object files (one argument each, or one ';'-separated argument as CMake's
# $<TARGET_OBJECTS:...> gives them, or a directory to search); an object's
# source path is what follows the last "/src/" in its path, less ".o".
#
# From the objects' symbol tables (nm: "U" used, "T D B R ..." defined) it
# computes which file uses which other file's symbols, and fails, naming each
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
        elif [ -n "$o" ]; then
            printf '%s\n' "$o" >> "$tmp/objects"
        fi
    done
    IFS=$old_ifs
done
[ -s "$tmp/objects" ] || { echo "check_layers: no object files given" >&2; exit 2; }

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
$1 == "D" { def[$3] = $2 }
$1 == "U" { nu++; user[nu] = $2; sym[nu] = $3 }
END {
    for (i = 1; i <= nu; i++) {
        if (!(sym[i] in def) || def[sym[i]] == user[i])
            continue
        e = user[i] " -> " def[sym[i]]
        if (!(e in edge))
            edge[e] = sym[i]
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
