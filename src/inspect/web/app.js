/*
 * app.js — the inspector's page: every panel is drawn from the JSON API
 * (docs/inspector.md) and drawn again on a timer, so the page follows the
 * running world without a reload.
 *
 * Rules it keeps:
 * - Every request goes through api(): it sends the token of the page's own
 *   address (?token=T) as "Authorization: Bearer T", and turns an error
 *   answer ({"error", "message"}) into an exception the status line shows.
 * - Each refresher runs again only after its last run finished (every()),
 *   so a slow server never piles requests up.
 * - A paged list remembers how many rows it has shown and asks for that
 *   many again on a refresh, in pages of at most PAGE: "more" adds a page.
 * - The write controls (edit a field, enable a system, destroy) exist only
 *   when /api/world says "writes": true.
 * - Entity ids are "S.G" in URLs and in data-id attributes, [s, g] in JSON.
 */
'use strict';

const PAGE = 100;               /* rows one request asks for              */
const CHART_SECONDS = 30;       /* the systems chart's time span          */
const COLORS = ['#2b7bb9', '#d9534f', '#5cb85c', '#f0ad4e', '#8e44ad',
                '#16a085', '#e67e22', '#7f8c8d', '#c0392b', '#2c3e50'];

const params = new URLSearchParams(location.search);
const state = {
    token: params.get('token'),
    writes: false,
    selected: params.get('select'),     /* "S.G" or null                  */
    described: new Set(),               /* components with fields         */
    componentCount: 0,                  /* components /api/components had */
    editing: false,                     /* a field's input is open        */
    samples: [],                        /* {t, times: {name: seconds}}    */
    colors: new Map(),                  /* system name -> color           */
    query: null,                        /* the query text shown           */
    queryShown: 0,
    archetypesShown: PAGE,
    lastError: 0,                       /* Date.now() of the last error   */
};

/* ---- helpers ---- */

/* An element with attributes (on* are listeners) and children. */
function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else if (k === 'class') e.className = v;
        else e.setAttribute(k, v);
    }
    for (const c of children) {
        if (c !== null && c !== undefined) e.append(c);
    }
    return e;
}

const idText = (id) => (id ? id[0] + '.' + id[1] : '');

function bytesText(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
}

function numberText(v) {
    return Number.isInteger(v) ? String(v) : String(+v.toPrecision(6));
}

/* A value in one line: numbers shortened, objects as key=value. */
function shortText(v) {
    if (typeof v === 'number') return numberText(v);
    if (v === true) return 'tag';
    if (v === null || typeof v !== 'object') return String(v);
    if (Array.isArray(v)) return '[' + v.map(shortText).join(', ') + ']';
    return '{' + Object.entries(v).map(([k, x]) => k + ': ' + shortText(x)).join(', ') + '}';
}

class ApiError extends Error {
    constructor(status, code, message) {
        super(message);
        this.status = status;
        this.code = code;
    }
}

/* GET path, or POST body to it; the answer's JSON, or an ApiError. */
async function api(path, body) {
    const opts = { headers: {}, cache: 'no-store' };
    if (state.token) opts.headers.Authorization = 'Bearer ' + state.token;
    if (body !== undefined) {
        opts.method = 'POST';
        opts.headers['Content-Type'] = 'application/json';
        opts.body = JSON.stringify(body);
    }
    let res;
    try {
        res = await fetch(path, opts);
    } catch (e) {
        throw new ApiError(0, 'unreachable', 'the inspector does not answer');
    }
    let json = null;
    try { json = await res.json(); } catch (e) { /* not JSON: judged below */ }
    if (!res.ok) {
        throw new ApiError(res.status, json && json.error ? json.error : 'http',
                           json && json.message ? json.message : res.statusText);
    }
    if (json === null) throw new ApiError(res.status, 'internal', 'the answer is not JSON');
    return json;
}

function setStatus(text, error) {
    const s = document.getElementById('status');
    s.textContent = text;
    s.classList.toggle('error', !!error);
}

/* Show an error in the status line; it stays there for a few seconds. */
function report(where, e) {
    state.lastError = Date.now();
    const code = e instanceof ApiError ? (e.status ? e.status + ' ' : '') + e.code : 'error';
    setStatus(where + ': ' + code + ': ' + e.message, true);
}

/* Run fn now and again ms after each run ends; its errors are reported. */
function every(ms, where, fn) {
    const tick = async () => {
        try { await fn(); } catch (e) { report(where, e); }
        setTimeout(tick, ms);
    };
    tick();
}

/* Rows offset..offset+count of a paged endpoint, in requests of PAGE. */
async function paged(path, count, key) {
    const sep = path.includes('?') ? '&' : '?';
    let first = null, rows = [];
    for (let offset = 0; offset < Math.max(count, 1); offset += PAGE) {
        const page = await api(path + sep + 'offset=' + offset + '&limit=' + PAGE);
        if (!first) first = page;
        rows = rows.concat(page[key]);
        if (page[key].length < PAGE) break;
    }
    first[key] = rows.slice(0, Math.max(count, PAGE));
    return first;
}

function moreButton(shown, total, onclick) {
    if (shown >= total) return null;
    return el('button', { class: 'more', type: 'button', onclick },
              'more (' + shown + ' of ' + total + ')');
}

function select(id) {
    state.selected = id;
    const url = new URL(location.href);
    url.searchParams.set('select', id);
    history.replaceState(null, '', url);
    for (const li of document.querySelectorAll('#tree li.selected')) li.classList.remove('selected');
    for (const li of document.querySelectorAll('#tree li[data-id="' + id + '"]')) li.classList.add('selected');
    refreshEntity().catch((e) => report('entity', e));
}

function entityLink(id) {
    const t = idText(id);
    return el('a', { href: '#', class: 'entity-link', 'data-id': t,
                     onclick: (ev) => { ev.preventDefault(); select(t); } }, t);
}

/* ---- the world ---- */

async function refreshWorld() {
    const w = await api('/api/world');
    const set = (id, v) => { document.getElementById(id).textContent = v; };
    set('entity-count', w.entities);
    set('component-count', w.components);
    set('archetype-count', w.archetypes);
    set('system-count', w.systems);
    set('resource-count', w.resources);
    set('memory', bytesText(w.memory));
    set('frame', w.frame);
    set('writes', w.writes ? 'on' : 'off');
    document.getElementById('tree-hint').textContent =
        w.relations ? 'by hierarchy' : '(no relation add-on: every entity)';
    if (w.writes !== state.writes) {
        state.writes = w.writes;
        document.body.classList.toggle('writes', w.writes);
        await Promise.all([refreshSystems(), refreshEntity()]);
    }
    if (w.components !== state.componentCount) await refreshComponents();
    if (Date.now() - state.lastError > 5000) setStatus('live: frame ' + w.frame, false);
}

async function refreshComponents() {
    const c = await api('/api/components');
    state.described = new Set(c.components.filter((x) => x.fields.length).map((x) => x.name));
    state.componentCount = c.components.length;
}

/* ---- the entity tree ---- */

/* The children of one parent (null: the roots), as a <ul> of nodes; an
 * expanded node keeps its own list, found again by its id on a redraw. */
class TreeList {
    constructor(parent, ul) {
        this.parent = parent;
        this.ul = ul;
        this.shown = PAGE;
        this.open = new Map();          /* "S.G" -> TreeList              */
    }

    async refresh() {
        const path = '/api/tree' + (this.parent ? '?parent=' + this.parent : '');
        const page = await paged(path, this.shown, 'entities');
        const items = page.entities.map((e) => this.node(e));
        const more = moreButton(page.entities.length, page.total, () => {
            this.shown += PAGE;
            this.refresh().catch((e) => report('tree', e));
        });
        this.ul.replaceChildren(...items, more ? el('li', { class: 'more' }, more) : '');
        await Promise.all([...this.open.values()].map((t) => t.refresh()));
    }

    node(e) {
        const id = idText(e.id);
        const li = el('li', { class: 'node', 'data-id': id, 'data-children': e.children });
        if (id === state.selected) li.classList.add('selected');
        const toggle = el('button', { type: 'button', class: 'toggle' },
                          e.children ? (this.open.has(id) ? '\u25be' : '\u25b8') : '');
        if (e.children) toggle.addEventListener('click', () => this.toggle(id));
        else toggle.disabled = true;
        li.append(toggle, entityLink(e.id),
                  el('span', { class: 'names' }, e.components.join(', ')),
                  e.children ? el('span', { class: 'count' }, '(' + e.children + ')') : '');
        const sub = this.open.get(id);
        if (sub) li.append(sub.ul);
        return li;
    }

    toggle(id) {
        if (this.open.has(id)) this.open.delete(id);
        else this.open.set(id, new TreeList(id, el('ul', { class: 'children' })));
        this.refresh().catch((e) => report('tree', e));
    }
}

const roots = new TreeList(null, document.getElementById('tree'));

/* Open the tree down to entity id: each of its ancestors, root first. */
async function reveal(id) {
    const chain = [];
    let e = await api('/api/entity?id=' + encodeURIComponent(id));
    while (e.parent && chain.length < 32) {
        chain.unshift(idText(e.parent));
        e = await api('/api/entity?id=' + idText(e.parent));
    }
    let list = roots;
    for (const a of chain) {
        if (!list.open.has(a)) list.open.set(a, new TreeList(a, el('ul', { class: 'children' })));
        list = list.open.get(a);
    }
    await roots.refresh();
}

/* ---- the selected entity ---- */

/* A value as nested fields; path is the field's path for /api/set. */
function valueNode(component, path, v, editable) {
    if (v !== null && typeof v === 'object') {
        const box = el('div', { class: 'fields' });
        for (const [k, x] of Object.entries(v)) {
            const sub = Array.isArray(v) ? path + '[' + k + ']' : (path ? path + '.' + k : k);
            box.append(el('div', { class: 'field', 'data-name': k },
                          el('span', { class: 'name' }, k),
                          valueNode(component, sub, x, editable)));
        }
        return box;
    }
    const span = el('span', { class: 'value', 'data-path': path },
                    typeof v === 'number' ? numberText(v) : String(v));
    if (editable) {
        span.classList.add('editable');
        span.title = 'click to edit';
        span.addEventListener('click', () => editField(span, component, path, v));
    }
    return span;
}

/* Replace span with an input; Enter sends POST /api/set, Escape cancels. */
function editField(span, component, field, old) {
    state.editing = true;
    const input = el('input', { type: 'text', class: 'edit' });
    input.value = JSON.stringify(old);
    const done = () => { state.editing = false; refreshEntity().catch((e) => report('entity', e)); };
    input.addEventListener('keydown', async (ev) => {
        if (ev.key === 'Escape') done();
        if (ev.key !== 'Enter') return;
        let value;
        try { value = JSON.parse(input.value); } catch (e) { value = input.value; }
        try {
            await api('/api/set', { id: state.selected, component, field, value });
        } catch (e) {
            report('set ' + component + '.' + field, e);
        }
        done();
    });
    input.addEventListener('blur', done);
    span.replaceWith(input);
    input.focus();
    input.select();
}

function componentBox(name, value, e, cls) {
    const box = el('div', { class: 'component' + (cls ? ' ' + cls : ''), 'data-name': name });
    const head = el('h3', {}, name);
    if (name in e.enabled) {
        head.append(el('span', { class: 'enable ' + (e.enabled[name] ? 'on' : 'off'),
                                 'data-enabled': String(e.enabled[name]) },
                       e.enabled[name] ? 'enabled' : 'disabled'));
    }
    box.append(head);
    if (value === true) {
        box.append(el('span', { class: 'value tag' }, 'tag'));
    } else if (!state.described.has(name) && value && 'bytes' in value) {
        box.append(el('span', { class: 'value raw' }, value.size + ' bytes: ' + (value.bytes || '-')));
    } else {
        const editable = state.writes && !cls && state.described.has(name);
        box.append(valueNode(name, '', value, editable));
    }
    return box;
}

async function refreshEntity() {
    const box = document.getElementById('entity');
    if (!state.selected || state.editing) return;
    const id = state.selected;
    let e;
    try {
        e = await api('/api/entity?id=' + encodeURIComponent(id));
    } catch (err) {
        if (err.code === 'dead' || err.code === 'bad_argument') {
            box.replaceChildren(el('p', { class: 'hint dead' }, 'Entity ' + id + ': ' + err.message));
            box.dataset.id = id;
        }
        throw err;
    }
    const kids = e.children ? await api('/api/tree?parent=' + id + '&limit=' + PAGE) : null;
    if (id !== state.selected || state.editing) return;
    const head = el('div', { class: 'entity-head' },
        el('span', { class: 'entity-id', id: 'entity-id' }, idText(e.id)),
        el('span', {}, ' archetype ', el('span', { id: 'entity-archetype' }, String(e.archetype))),
        el('span', {}, ' parent ', e.parent ? entityLink(e.parent) : 'none'),
        el('span', {}, ' children ', el('span', { id: 'entity-children' }, String(e.children))));
    if (state.writes) {
        head.append(el('button', { type: 'button', id: 'destroy', onclick: () => destroy(id) }, 'destroy'));
    }
    const parts = [head];
    if (kids) {
        parts.push(el('div', { class: 'children-list' }, 'children: ',
                      ...kids.entities.map((c) => entityLink(c.id)),
                      kids.total > kids.entities.length ? ' \u2026' : ''));
    }
    for (const [name, v] of Object.entries(e.components)) parts.push(componentBox(name, v, e));
    for (const [name, v] of Object.entries(e.inherited || {})) {
        parts.push(componentBox(name, v, e, 'inherited'));
    }
    if (e.pairs && e.pairs.length) {
        parts.push(el('h3', {}, 'pairs'), el('ul', { class: 'pairs' }, ...e.pairs.map((p) =>
            el('li', { class: 'pair', 'data-relation': p.relation },
               p.relation + ' \u2192 ', entityLink(p.target),
               'value' in p ? ' ' + shortText(p.value) : ''))));
    }
    box.dataset.id = id;
    box.replaceChildren(...parts);
}

async function destroy(id) {
    try {
        await api('/api/destroy', { id });
        state.selected = null;
        document.getElementById('entity').replaceChildren(el('p', { class: 'hint' }, 'Destroyed ' + id + '.'));
        await roots.refresh();
    } catch (e) {
        report('destroy ' + id, e);
    }
}

/* ---- the systems: table and chart ---- */

function colorOf(name) {
    if (!state.colors.has(name)) state.colors.set(name, COLORS[state.colors.size % COLORS.length]);
    return state.colors.get(name);
}

async function refreshSystems() {
    const s = await api('/api/systems');
    const now = Date.now();
    const times = {};
    for (const x of s.systems) times[x.name] = x.time_last;
    state.samples.push({ t: now, times });
    while (state.samples.length && state.samples[0].t < now - CHART_SECONDS * 1000) state.samples.shift();
    document.querySelector('#systems tbody').replaceChildren(...s.systems.map(systemRow));
    drawChart(s.systems.map((x) => x.name));
}

function systemRow(x) {
    let enabled = x.enabled ? 'yes' : 'no';
    if (state.writes) {
        enabled = el('input', { type: 'checkbox', class: 'system-enable' });
        enabled.checked = x.enabled;
        enabled.addEventListener('change', async () => {
            try {
                await api('/api/system', { name: x.name, enabled: enabled.checked });
            } catch (e) {
                report('system ' + x.name, e);
            }
        });
    }
    return el('tr', { 'data-name': x.name, 'data-enabled': String(x.enabled) },
        el('td', { class: 'name' }, el('span', { class: 'swatch', style: 'background:' + colorOf(x.name) }), x.name),
        el('td', { class: 'phase' }, x.phase),
        el('td', { class: 'enabled' }, enabled),
        el('td', { class: 'runs' }, String(x.runs)),
        el('td', { class: 'time' }, (1e3 * x.time_last).toFixed(3)),
        el('td', { class: 'entities' }, String(x.entities_last)));
}

/* One line per system: its time_last (ms) against the sample's time. */
function drawChart(names) {
    const canvas = document.getElementById('chart');
    if (canvas.clientWidth && canvas.width !== canvas.clientWidth) canvas.width = canvas.clientWidth;
    const ctx = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height, left = 64, bottom = 20, top = 8;
    const now = Date.now(), t0 = now - CHART_SECONDS * 1000;
    let max = 0;
    for (const s of state.samples) for (const n of names) max = Math.max(max, s.times[n] || 0);
    max = max > 0 ? max * 1.15 : 1e-3;
    const x = (t) => left + (w - left - 4) * (t - t0) / (CHART_SECONDS * 1000);
    const y = (v) => top + (h - top - bottom) * (1 - v / max);
    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px sans-serif';
    ctx.strokeStyle = '#ddd';
    ctx.fillStyle = '#666';
    for (let i = 0; i <= 4; i++) {
        const v = max * i / 4;
        ctx.beginPath(); ctx.moveTo(left, y(v)); ctx.lineTo(w - 4, y(v)); ctx.stroke();
        ctx.fillText((1e3 * v).toFixed(3) + ' ms', 2, y(v) + 4);
    }
    for (let s = 0; s <= CHART_SECONDS; s += 10) {
        const label = s === CHART_SECONDS ? 'now' : '-' + (CHART_SECONDS - s) + ' s';
        ctx.fillText(label, x(t0 + s * 1000) - ctx.measureText(label).width * s / CHART_SECONDS, h - 4);
    }
    for (const n of names) {
        ctx.strokeStyle = colorOf(n);
        ctx.lineWidth = 2;
        ctx.beginPath();
        state.samples.forEach((s, i) => {
            const px = x(s.t), py = y(s.times[n] || 0);
            if (i) ctx.lineTo(px, py); else ctx.moveTo(px, py);
        });
        ctx.stroke();
    }
    document.getElementById('legend').replaceChildren(...names.map((n) =>
        el('span', { class: 'item', 'data-name': n },
           el('span', { class: 'swatch', style: 'background:' + colorOf(n) }), n)));
}

/* ---- archetypes ---- */

async function refreshArchetypes() {
    const a = await paged('/api/archetypes', state.archetypesShown, 'archetypes');
    document.querySelector('#archetypes tbody').replaceChildren(...a.archetypes.map((x) =>
        el('tr', { 'data-id': String(x.id) },
           el('td', {}, String(x.id)),
           el('td', { class: 'names' }, x.components.join(', ') || '(empty)'),
           el('td', {}, String(x.entities)),
           el('td', {}, String(x.chunks)))));
    const more = moreButton(a.archetypes.length, a.total, () => {
        state.archetypesShown += PAGE;
        refreshArchetypes().catch((e) => report('archetypes', e));
    });
    document.getElementById('archetypes-more').replaceChildren(more || '');
}

/* ---- the query box ---- */

async function refreshQuery() {
    if (state.query === null) return;
    const box = document.getElementById('query-result');
    const text = state.query;
    let r;
    try {
        r = await paged('/api/query?q=' + encodeURIComponent(text), state.queryShown, 'entities');
    } catch (e) {
        box.replaceChildren(el('p', { class: 'error', id: 'query-error' }, e.code + ': ' + e.message));
        throw e;
    }
    if (text !== state.query) return;
    const terms = r.terms.filter((t) => !t.startsWith('!')).map((t) => t.replace(/^\?/, ''));
    const table = el('table', { id: 'query-table' },
        el('thead', {}, el('tr', {}, el('th', {}, 'entity'), ...terms.map((t) => el('th', {}, t)))),
        el('tbody', {}, ...r.entities.map((e) => el('tr', { 'data-id': idText(e.id) },
            el('td', {}, entityLink(e.id)),
            ...terms.map((t) => el('td', { 'data-name': t },
                                   t in e.components ? shortText(e.components[t]) : '\u2013'))))));
    const more = moreButton(r.entities.length, r.total, () => {
        state.queryShown += PAGE;
        refreshQuery().catch((e) => report('query', e));
    });
    box.replaceChildren(el('p', { class: 'total', id: 'query-total' },
                           r.total + ' entities match ' + (r.terms.join(', ') || 'everything')),
                        table, more || '');
}

document.getElementById('query-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.query = document.getElementById('query-text').value;
    state.queryShown = PAGE;
    refreshQuery().catch((e) => report('query', e));
});

/* ---- start ---- */

if (state.selected) reveal(state.selected).catch((e) => report('tree', e));
every(1000, 'world', refreshWorld);
every(1000, 'tree', () => roots.refresh());
every(1000, 'archetypes', refreshArchetypes);
every(1000, 'query', refreshQuery);
every(500, 'entity', refreshEntity);
every(500, 'systems', refreshSystems);
