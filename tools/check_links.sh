#!/bin/sh
# The manual's relative links lead somewhere.
#
#   check_links.sh FILE.md...
#
# For every link or image [text](target) of each FILE, outside ``` fences,
# whose target is not a URL (http:, https:, mailto:): the file or directory
# it names exists, relative to FILE's directory (an empty path is FILE
# itself), and an #anchor names a heading of that file by GitHub's rule:
# lowercased, punctuation but '-' and '_' dropped, each space a '-'; a
# heading that repeats one before it takes -1, -2, ... Headings inside
# fences do not count.
set -eu
[ $# -ge 1 ] || { echo "usage: check_links.sh FILE.md..." >&2; exit 2; }

awk '
function dirname(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
function slug(h) {
    h = tolower(h)
    gsub(/[^a-z0-9 _-]/, "", h)
    gsub(/ /, "-", h)
    return h
}
# The anchors of file f, as keys of anchors[f, slug]; read once.
function load(f,   line, inb, s, rc) {
    if ((f, "") in anchors) return 1
    inb = 0
    while ((rc = getline line < f) > 0) {
        if (line ~ /^```/) { inb = !inb; continue }
        if (inb || line !~ /^#+ /) continue
        sub(/^#+ +/, "", line)
        sub(/ +#* *$/, "", line)
        s = slug(line)
        if ((f, s) in anchors) s = s "-" (++dup[f, s])
        anchors[f, s] = 1
    }
    close(f)
    if (rc < 0) return 0
    anchors[f, ""] = 1
    return 1
}
function exists(p) { return system("test -e \"" p "\"") == 0 }
FNR == 1 { inb = 0 }
/^```/ { inb = !inb; next }
inb { next }
{
    rest = $0
    while (match(rest, /\]\([^) ]+\)/)) {
        target = substr(rest, RSTART + 2, RLENGTH - 3)
        rest = substr(rest, RSTART + RLENGTH)
        if (target ~ /^(https?|mailto):/) continue
        path = target; anchor = ""
        if (index(target, "#")) {
            path = substr(target, 1, index(target, "#") - 1)
            anchor = substr(target, index(target, "#") + 1)
        }
        file = path == "" ? FILENAME : dirname(FILENAME) "/" path
        n++
        if (path != "" && !exists(file)) {
            printf "%s:%d: %s: no such file\n", FILENAME, FNR, target; bad++
        } else if (anchor != "" && file ~ /\.md$/ && !(load(file) && (file, anchor) in anchors)) {
            printf "%s:%d: %s: no heading with that anchor\n", FILENAME, FNR, target; bad++
        }
    }
}
END {
    printf "check_links: %d links checked, %d broken\n", n, bad + 0
    exit bad > 0
}
' "$@"
