#!/bin/sh
# Every public function of the header has a doc comment: the declaration is
# directly preceded (blank lines aside) by a comment that opens with /**.
#
#   check_doc_comments.sh [HEADER]     (default: include/tinyecs.h)
#
# A declaration is a line at column 0 that names a tecs_ function and opens
# its parameter list (static inline definitions included, typedefs not).
# Prints each one that lacks the comment and fails; prints the count if none.
set -eu
header=${1:-"$(dirname "$0")/../../include/tinyecs.h"}
awk '
/^\/\*\*/         { incomment = 1; isdoc = 1 }
/^\/\*([^*]|$)/   { incomment = 1; isdoc = 0 }
{
    if (incomment) {
        if ($0 ~ /\*\//) { incomment = 0; last = isdoc ? "doc" : "comment" }
        next
    }
    if ($0 ~ /^[ \t]*$/) next
    if ($0 ~ /^(static inline )?[A-Za-z_][A-Za-z0-9_ *]*[ *]tecs_[a-z0-9_]+\(/ &&
        $0 !~ /^typedef/) {
        n++
        if (last != "doc") { print FILENAME ":" NR ": no doc comment: " $0; bad++ }
    }
    last = "code"
}
END {
    if (bad) { print bad " of " n " public functions have no doc comment"; exit 1 }
    print n " public functions, each with a doc comment"
}
' "$header"
