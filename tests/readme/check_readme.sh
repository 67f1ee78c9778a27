#!/bin/sh
# The C code of the README and of the manual's pages (docs/*.md) must
# compile and run, so that it cannot rot. CTest runs it once a file.
#
#   check_readme.sh README INCLUDE_DIR LIBRARY WORK_DIR CC [FLAGS...]
#
# README is the Markdown file to check. Every block fenced as ```c in it is
# one of:
#
#   a program   it has a line with `int main(`: compiled as written, linked
#               with LIBRARY, run; it must exit with 0;
#   a fragment  the last non-blank line before the fence is
#               <!-- fragment -->: the block becomes the body of a function
#               that is handed `tecs_world_t *w`, the component ids
#               `tecs_comp_t pos, vel` of the types Position and Velocity
#               ({ float x, y; } each) and an entity `tecs_entity_t e` that
#               has both; compiled, linked and run like a program;
#               <!-- fragment: file -->: the block is put at file scope after
#               the same types; compiled only.
#   Fragments see <stdbool.h> <stddef.h> <stdint.h> <stdio.h> <stdlib.h>
#   <string.h>, "tinyecs.h" and the add-on headers (tinyecs/*.h), and are compiled with -Wno-unused (a snippet
#   may declare what it does not use).
#
# Any other ```c block fails the test: every block is checked or marked.
# Compiler flags: -std=c11 -Wall -Wextra -Werror -pedantic, then FLAGS (the
# build's own: -m32, -fsanitize, ...). Errors point at the file's lines.
# In the environment, TECS_RUN is what runs a program of a cross build
# (wine, qemu-user) and TECS_EXE the suffix of a program's file (.exe).
set -eu
run=${TECS_RUN:-}
exe=${TECS_EXE:-}

readme=$1 inc=$2 lib=$3 work=$4 cc=$5
shift 5
rm -rf "$work"
mkdir -p "$work"

# Split the README: one file per block (block_N.c) and a list "N kind line".
awk -v dir="$work" '
function flush_prev() { if ($0 !~ /^[ \t]*$/) prev = $0 }
/^```c[ \t]*$/ && !inblock {
    n++; inblock = 1; start = NR + 1; body = ""; hasmain = 0
    kind = "none"
    if (prev ~ /^<!-- fragment -->[ \t]*$/) kind = "body"
    if (prev ~ /^<!-- fragment: file -->[ \t]*$/) kind = "file"
    next
}
/^```[ \t]*$/ && inblock {
    inblock = 0
    if (hasmain) kind = "program"
    f = dir "/block_" n ".c"
    printf "%s", body > f
    close(f)
    print n, kind, start > (dir "/blocks")
    prev = "```"
    next
}
inblock { body = body $0 "\n"; if ($0 ~ /int main\(/) hasmain = 1; next }
{ flush_prev() }
' "$readme"
[ -f "$work/blocks" ] || { echo "check_readme: no \`\`\`c block in $readme"; exit 1; }

prelude() {
    cat <<'PRE'
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs.h"
#include "tinyecs/change.h"
#include "tinyecs/handle.h"
#include "tinyecs/index.h"
#include "tinyecs/meta.h"
#include "tinyecs/observer.h"
#include "tinyecs/relation.h"
#include "tinyecs/resource.h"
#include "tinyecs/snapshot.h"
#include "tinyecs/system.h"
typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
PRE
}

failed=0
count=0
while read -r n kind line; do
    src=$work/block_$n.c
    out=$work/block_$n.out
    where="$(basename "$readme"):$line"
    extra=
    case $kind in
    program)
        { echo "#line $line \"$readme\""; cat "$src"; } >"$work/t_$n.c" ;;
    body)
        extra=-Wno-unused
        { prelude
          echo "static void fragment(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel,"
          echo "                     tecs_entity_t e)"
          echo "{"
          echo "    (void)w; (void)pos; (void)vel; (void)e;"
          echo "#line $line \"$readme\""
          cat "$src"
          echo "}"
          echo "int main(void)"
          echo "{"
          echo "    tecs_world_t *w = tecs_world_new();"
          echo "    tecs_comp_t pos = TECS_COMPONENT(w, Position);"
          echo "    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);"
          echo "    tecs_entity_t e = tecs_new(w);"
          echo "    TECS_SET(w, e, pos, Position, {1, 2});"
          echo "    TECS_SET(w, e, vel, Velocity, {3, 4});"
          echo "    fragment(w, pos, vel, e);"
          echo "    tecs_world_free(w);"
          echo "    return 0;"
          echo "}"
        } >"$work/t_$n.c" ;;
    file)
        extra=-Wno-unused
        { prelude; echo "#line $line \"$readme\""; cat "$src"; } >"$work/t_$n.c" ;;
    *)
        echo "FAILED $where: a \`\`\`c block must be a program (int main) or follow" \
             "<!-- fragment --> / <!-- fragment: file -->"
        failed=$((failed + 1))
        continue ;;
    esac
    count=$((count + 1))
    # shellcheck disable=SC2086  # extra is one flag or none
    if [ "$kind" = file ]; then
        if ! "$cc" -std=c11 -Wall -Wextra -Werror -pedantic $extra "$@" -I"$inc" \
                -c "$work/t_$n.c" -o "$work/t_$n.o" 2>"$out"; then
            echo "FAILED $where (fragment at file scope) does not compile:"
            cat "$out"
            failed=$((failed + 1))
        else
            echo "ok: $where (fragment at file scope, compiled)"
        fi
        continue
    fi
    # shellcheck disable=SC2086
    if ! "$cc" -std=c11 -Wall -Wextra -Werror -pedantic $extra "$@" -I"$inc" \
            "$work/t_$n.c" "$lib" -o "$work/t_$n$exe" 2>"$out"; then
        echo "FAILED $where ($kind) does not compile:"
        cat "$out"
        failed=$((failed + 1))
    # shellcheck disable=SC2086  # run is a command and its options, or empty
    elif ! $run "$work/t_$n$exe" >"$out" 2>&1; then
        echo "FAILED $where ($kind) exited with an error:"
        tail -n 30 "$out"
        failed=$((failed + 1))
    else
        echo "ok: $where ($kind, compiled and run)"
    fi
done <"$work/blocks"

echo "check_readme: $count blocks checked, $failed failed"
[ "$failed" -eq 0 ]
