#!/bin/sh
# The documentation site `make docs` builds holds together.
#
#   check_site.sh SITE_DIR HEADER...
#
# SITE_DIR is Doxygen's html/ folder. Checks:
# - every internal link leads somewhere: each href and src of each page,
#   and each page named in the navigation tree and the search index (the
#   site's .js files), names a file of the site, and its #anchor an id (or
#   name) in that file. Links with a scheme (https:, mailto:, javascript:)
#   are not followed;
# - every public function (each tecs_NAME declared or defined at the start
#   of a line of the HEADERs, tecs__ ones being private) has an entry in
#   the reference: the search index lists it with a link.
# Prints each failure and exits 1 if there is one.
set -eu
[ $# -ge 2 ] || { echo "usage: check_site.sh SITE_DIR HEADER..." >&2; exit 2; }
site=$1
shift
headers=
for h in "$@"; do
    headers="$headers $(cd "$(dirname "$h")" && pwd)/$(basename "$h")"
done
[ -f "$site/index.html" ] || { echo "check_site: $site/index.html is missing"; exit 1; }
cd "$site"
LC_ALL=C
export LC_ALL

# Every link, as "FROM TARGET" (TARGET relative to FROM's folder).
find . -name '*.html' | sed 's|^\./||' | sort > .files
find . -type f | sed 's|^\./||' | sort > .all
while read -r f; do
    grep -o ' \(href\|src\)="[^"]*"' "$f" | sed 's/^ [a-z]*="//; s/"$//' |
        sed "s|^|$f |"
done < .files > .links
# The navigation tree and the search index name pages in quoted strings.
find . -name '*.js' | sed 's|^\./||' | while read -r f; do
    grep -o "[\"'][A-Za-z0-9_./-]*[A-Za-z0-9_]\.html\(#[A-Za-z0-9_-]*\)\?[\"']" "$f" |
        tr -d "\"'" | sed "s|^|$f |"
done >> .links

# The ids of every page, as "FILE ID".
while read -r f; do
    grep -o ' \(id\|name\)="[^"]*"' "$f" | sed 's/^ [a-z]*="//; s/"$//' | sed "s|^|$f |"
done < .files > .ids

awk '
FILENAME == ".all" { have[$0] = 1; next }
FILENAME == ".ids" { id[$1 " " $2] = 1; next }
function dirof(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "" }
function tidy(p,   n, parts, i, k, st, o) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "." || parts[i] == "") continue
        if (parts[i] == ".." && k > 0) { k--; continue }
        st[++k] = parts[i]
    }
    o = ""
    for (i = 1; i <= k; i++) o = o (i > 1 ? "/" : "") st[i]
    return o
}
{
    from = $1; t = $2
    if (t ~ /^[a-z]+:/ || t == "" || t == "#") next
    anchor = ""
    i = index(t, "#")
    if (i) { anchor = substr(t, i + 1); t = substr(t, 1, i - 1) }
    # The search index links from search/ to its pages with ../; the
    # navigation tree from the site root.
    base = from ~ /^search\// && from ~ /\.js$/ ? "search" : dirof(from)
    if (from ~ /\.js$/ && from !~ /^search\//) base = ""
    p = t == "" ? from : tidy((base == "" ? "" : base "/") t)
    sub(/\?.*$/, "", p)
    if (!(p in have)) { print "check_site: " from ": link to " $2 ": no such file"; bad = 1; next }
    if (anchor != "" && p ~ /\.html$/ && !((p " " anchor) in id)) {
        print "check_site: " from ": link to " $2 ": no anchor " anchor " in " p; bad = 1
    }
    n++
}
END { printf "check_site: %d internal links checked\n", n; exit bad }
' .all .ids .links || failed=1

# Every public function has an entry in the search index.
for h in $headers; do
    sed -n 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\(tecs_[a-z0-9][a-z0-9_]*\)(.*/\1/p' "$h"
done | sort -u > .functions
cat search/*.js | grep -o "\['tecs_[a-z0-9_]*',\['\.\./[^']*\.html#[a-z0-9]*'" |
    sed "s/^\['\([^']*\)'.*/\1/" | sort -u > .entries
missing=$(comm -23 .functions .entries)
if [ -n "$missing" ]; then
    echo "check_site: public functions without a reference entry:"
    printf '  %s\n' $missing
    failed=1
else
    echo "check_site: $(wc -l < .functions | tr -d ' ') public functions, each with a reference entry"
fi
rm -f .files .all .links .ids .functions .entries
exit ${failed:-0}
