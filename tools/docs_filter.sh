#!/bin/sh
# Doxygen's input filter for the manual's Markdown pages (Doxyfile's
# FILTER_PATTERNS), so that the pages written for reading on GitHub link
# the same way in the site `make docs` builds:
#
#   docs_filter.sh FILE.md          (run from the repository's root)
#
# - each page gets a label, its file's name: docs/queries.md is
#   queries.html (README.md stays the main page, index.html);
# - each heading below the title gets a label, the page's and its GitHub
#   anchor's ("queries_the_iteration"), so that [x](queries.md#the-iteration)
#   becomes @ref queries_the_iteration; headings that repeat one before take
#   _1, _2, ... as GitHub's anchors take -1, -2;
# - a link to another page (or to its title) becomes @ref PAGE; to an image (docs/img/,
#   docs/*.svg), the image's name (Doxyfile copies them beside the pages);
#   to a public header, @ref of its reference page; to anything else of the
#   repository (a directory, a source file), the link's text alone.
# Code fences are left as they are.
set -eu
f=$1
# Doxygen passes the path it found, absolute: make it the repository's.
case $f in "$PWD"/*) f=${f#"$PWD"/} ;; esac
awk -v file="$f" '
function dirname(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
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
function slug(h) {
    h = tolower(h)
    gsub(/[^a-z0-9 _-]/, "", h)
    gsub(/ /, "-", h)
    return h
}
function label(s) { gsub(/-/, "_", s); return s }
# The label of the page of a repository path, or "" when it is no page.
function page_of(p,   stem) {
    if (p == "README.md") return "index"
    if (p == "CHANGES.md") return "changes"
    if (p ~ /^docs\/[^\/]*\.md$/) {
        stem = p; sub(/^docs\//, "", stem); sub(/\.md$/, "", stem)
        return label(tolower(stem))
    }
    return ""
}
# The GitHub anchor of the title of file p (its first "# " line).
function title_slug(p,   line, t) {
    if (p in titles) return titles[p]
    t = ""
    while ((getline line < p) > 0)
        if (line ~ /^# /) { sub(/^# +/, "", line); t = slug(line); break }
    close(p)
    titles[p] = t
    return t
}
function rewrite(text, target, bang,   path, anchor, p, pg, h, i) {
    if (target ~ /^(https?|mailto):/) return bang "[" text "](" target ")"
    anchor = ""
    i = index(target, "#")
    if (i) { anchor = substr(target, i + 1); path = substr(target, 1, i - 1) }
    else path = target
    p = path == "" ? file : tidy(dirname(file) "/" path)
    pg = page_of(p)
    if (pg != "") {
        # A link to the title of a page is a link to the page.
        if (anchor != "" && anchor != title_slug(p))
            return "[" text "](" pg ".html#" pg "_" label(anchor) ")"
        return "[" text "](" pg ".html)"
    }
    if (p ~ /^docs\/img\// || p ~ /^docs\/[^\/]*\.svg$/) {
        h = p; sub(/.*\//, "", h)
        return bang "[" text "](" h ")"
    }
    if (p ~ /^include\/tinyecs\.h$/ || p ~ /^include\/tinyecs\/[^\/]*\.h$/) {
        h = p; sub(/.*\//, "", h); gsub(/_/, "__", h); gsub(/\./, "_8", h)
        return "[" text "](" h ".html)"
    }
    return text
}
BEGIN { me = page_of(file); inb = 0 }
/^```/ { flush(); inb = !inb; print; next }
inb { print; next }
/^#+ / { flush() }
/^# / && !titled { titled = 1; print $0 (me == "index" ? "" : " {#" me "}"); next }
/^#+ / {
    h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
    s = slug(h)
    if (s in seen) { s2 = s "-" (++dup[s]) } else s2 = s
    seen[s] = 1
    print $0 " {#" me "_" label(s2) "}"
    next
}
function links(line,   out, start, len, m, bang, text, target) {
    out = ""
    while (match(line, /!?\[[^]]*\]\([^) ]*\)/)) {
        start = RSTART; len = RLENGTH
        m = substr(line, start, len)
        bang = substr(m, 1, 1) == "!" ? "!" : ""
        if (bang) m = substr(m, 2)
        text = substr(m, 2, index(m, "](") - 2)
        target = substr(m, index(m, "](") + 2); target = substr(target, 1, length(target) - 1)
        out = out substr(line, 1, start - 1) rewrite(text, target, bang)
        line = substr(line, start + len)
    }
    return out line
}
# Text outside fences and headings is rewritten a paragraph at a time, so
# that a link whose text spans two lines is one link.
function flush() { if (para != "") printf "%s", links(para); para = "" }
{ para = para $0 "\n" }
END { flush() }
' "$f"
