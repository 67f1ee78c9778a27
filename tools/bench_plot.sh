#!/bin/sh
# The --scaling figures of the benchmark as an SVG line chart, on stdout:
# the value (ns per entity, per lookup, ...) against N, both axes log
# scale, one line per scenario, in the CSV's order.
#
#   bench_plot.sh RESULTS.CSV [MACHINE.TXT] > scaling.svg
#
# RESULTS.CSV is what `tinyecs_bench --scaling --csv FILE` writes
# (scenario,n,value,unit,ratio_to_raw); rows whose unit is not a time
# ("ns/...") are left out. MACHINE.TXT (tools/bench_machine.sh) adds its
# cpu and compiler lines as a caption. Plain awk: no package needed.
set -eu
csv=$1
machine=${2:-}
caption=""
if [ -n "$machine" ] && [ -r "$machine" ]; then
    caption=$(awk -F': ' '/^(cpu|compiler):/ { s = s (s ? "; " : "") $2 } END { print s }' \
        "$machine")
fi

awk -F, -v caption="$caption" '
function lg(v) { return log(v) / log(10) }
function fl(v) { v += 1e-9; return v >= 0 || v == int(v) ? int(v) : int(v) - 1 }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); return s }
function px(n) { return L + (lg(n) - x0) / (x1 - x0) * PW }
function py(v) { return T + (y1 - lg(v)) / (y1 - y0) * PH }
function num(n) {                       # 1000 -> 1e3
    e = int(lg(n) + 0.5)
    return (n == 10 ^ e) ? "1e" e : n
}
NR == 1 { next }                        # the header line
$3 + 0 > 0 && $4 ~ /^ns\// {
    s = $1
    if (!(s in seen)) { seen[s] = 1; order[++ns] = s; unit[s] = $4 }
    k = ++np[s]
    xs[s, k] = $2 + 0
    ys[s, k] = $3 + 0
    if (nx == 0 || $2 + 0 < xmin) xmin = $2 + 0
    if (nx == 0 || $2 + 0 > xmax) xmax = $2 + 0
    if (nx == 0 || $3 + 0 < ymin) ymin = $3 + 0
    if (nx == 0 || $3 + 0 > ymax) ymax = $3 + 0
    nx++
}
END {
    W = 760; H = 460; L = 70; R = 190; T = 40; B = 70
    PW = W - L - R; PH = H - T - B
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" ", W, H
    printf "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
    printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
    if (nx == 0) {
        printf "<text x=\"%d\" y=\"%d\">no time rows in the CSV</text>\n</svg>\n", L, T + 20
        exit 0
    }
    x0 = fl(lg(xmin)); x1 = fl(lg(xmax)); if (10 ^ x1 < xmax * (1 - 1e-9)) x1++
    if (x1 == x0) x1 = x0 + 1
    y0 = fl(lg(ymin)); y1 = fl(lg(ymax)); if (10 ^ y1 < ymax * (1 - 1e-9)) y1++
    if (y1 == y0) y1 = y0 + 1
    printf "<text x=\"%d\" y=\"24\" font-size=\"15\">tinyecs --scaling: time per unit against N</text>\n", L
    # the grid: a line per decade, lighter ones at 2 and 5
    for (e = x0; e <= x1; e++) {
        x = px(10 ^ e)
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ccc\"/>\n", x, T, x, T + PH
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, T + PH + 18, num(10 ^ e)
    }
    for (e = y0; e <= y1; e++) {
        for (m = 1; m <= 5 && e + lg(m) <= y1; m += (m == 1 ? 1 : 3)) {
            y = py(m * 10 ^ e)
            printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", L, y, L + PW, y,
                   (m == 1 ? "#ccc" : "#eee")
            v = m * 10 ^ e
            printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, y + 4, v
        }
    }
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#666\"/>\n", L, T, PW, PH
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">N (entities; log scale)</text>\n", L + PW / 2, T + PH + 38
    printf "<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">ns per unit (log scale)</text>\n", T + PH / 2
    if (caption != "")
        printf "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\">%s</text>\n", L, H - 10, esc(caption)
    split("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf #7f7f7f #bcbd22", col, " ")
    for (i = 1; i <= ns; i++) {
        s = order[i]; c = col[(i - 1) % 10 + 1]
        pts = ""
        for (k = 1; k <= np[s]; k++)
            pts = pts sprintf("%.1f,%.1f ", px(xs[s, k]), py(ys[s, k]))
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", c, pts
        for (k = 1; k <= np[s]; k++)
            printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s, N = %d: %g %s</title></circle>\n",
                   px(xs[s, k]), py(ys[s, k]), c, esc(s), xs[s, k], ys[s, k], unit[s]
        ly = T + 10 + (i - 1) * 20
        printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n",
               L + PW + 14, ly, L + PW + 38, ly, c
        printf "<text x=\"%d\" y=\"%d\">%s (%s)</text>\n", L + PW + 44, ly + 4, esc(s), unit[s]
    }
    printf "</svg>\n"
}' "$csv"
