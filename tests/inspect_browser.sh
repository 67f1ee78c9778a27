#!/bin/sh
# inspect_browser.sh SERVE BUILD_DIR — the inspector's page in a headless
# browser, against a running world.
#
# SERVE is tests/inspect_serve: it prints "port N" first, then runs frames
# for --seconds; the script stops it when it ends. The test picks an entity with Position and
# Velocity through the API (curl), loads http://127.0.0.1:N/?select=S.G in
# chromium --dump-dom and checks that the page shows the entity count,
# nodes of the tree, the selected entity's Position and the systems "move"
# and "bounce"; a second load a second later must show other Position values
# (the entities move). Then it writes BUILD_DIR/inspector.png.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no chromium: CTest's
# SKIP_RETURN_CODE). The server is stopped on every path (trap).
set -u
serve=$1
out=$2

browser=$(command -v chromium || command -v chromium-browser) || {
    echo "inspect_browser: skipped: no chromium on PATH (apt-get install chromium)"
    exit 77
}
command -v curl >/dev/null || {
    echo "inspect_browser: skipped: no curl on PATH (apt-get install curl)"
    exit 77
}

tmp=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

fail() {
    echo "inspect_browser: FAILED: $*"
    exit 1
}

: >"$tmp/out"
"$serve" --seconds 120 </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!

port=
i=0
while [ $i -lt 100 ]; do
    port=$(sed -n '1s/^port \([0-9][0-9]*\)$/\1/p' "$tmp/out")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the server exited: $(cat "$tmp/err")"
    sleep 0.1
    i=$((i + 1))
done
[ -n "$port" ] || fail "no 'port N' line from $serve"
base=http://127.0.0.1:$port

# An entity that moves (it has Position and Velocity), from the query
# endpoint.
answer=$(curl -sS --max-time 10 "$base/api/query?q=Position%20Velocity&limit=1") ||
    fail "curl $base/api/query: no answer"
sel=$(printf '%s' "$answer" |
      sed -n 's/.*"entities": *\[ *{ *"id": *\[ *\([0-9]*\), *\([0-9]*\) *\].*/\1.\2/p')
[ -n "$sel" ] || fail "no entity with Position and Velocity in: $answer"
echo "inspect_browser: server on port $port, selecting entity $sel"

# load FILE MS [ARGS...]: the page's DOM (or what ARGS ask for) after its
# scripts ran MS ms of the browser's virtual time.
load() {
    file=$1
    ms=$2
    shift 2
    timeout 90 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$tmp/profile" --virtual-time-budget="$ms" "$@" \
        "$base/?select=$sel" >"$file" 2>"$tmp/browser.err" ||
        fail "chromium failed: $(tail -5 "$tmp/browser.err")"
}

# field DOM NAME: the text of the selected entity's Position field NAME.
field() {
    grep -o 'class="component" data-name="Position">.*' "$1" |
        grep -o "data-name=\"$2\"><span class=\"name\">$2</span><span class=\"value[^\"]*\" data-path=\"$2\">[^<]*" |
        head -1 | sed 's/.*>//'
}

check() {
    dom=$1
    grep -q 'id="entity-count">[0-9][0-9]*<' "$dom" || fail "no entity count in the page"
    grep -q 'id="tree" class="tree"><li class="node[^"]*" data-id="[0-9]*\.[0-9]*"' "$dom" ||
        fail "no entity in the tree"
    grep -q "id=\"entity-id\">$sel<" "$dom" || fail "entity $sel is not the one shown"
    for s in move bounce; do
        grep -q "<tr data-name=\"$s\"" "$dom" || fail "no system '$s' in the systems table"
    done
    x=$(field "$dom" x)
    y=$(field "$dom" y)
    [ -n "$x" ] && [ -n "$y" ] || fail "no Position x and y of entity $sel in the page"
}

load "$tmp/dom1.html" 4000 --dump-dom
check "$tmp/dom1.html"
x1=$x y1=$y
echo "inspect_browser: count $(sed -n 's/.*id="entity-count">\([0-9]*\)<.*/\1/p' "$tmp/dom1.html"), Position ($x1, $y1)"

sleep 1
load "$tmp/dom2.html" 4000 --dump-dom
check "$tmp/dom2.html"
echo "inspect_browser: a second later, Position ($x, $y)"
[ "$x" != "$x1" ] || [ "$y" != "$y1" ] || fail "Position of $sel did not change: ($x, $y)"

mkdir -p "$out"
rm -f "$out/inspector.png"
# Longer, so that the systems chart has some seconds of samples.
load "$tmp/shot.log" 12000 --window-size=1280,900 --screenshot="$out/inspector.png"
[ -s "$out/inspector.png" ] || fail "no screenshot at $out/inspector.png"
echo "inspect_browser: passed; screenshot $out/inspector.png"
