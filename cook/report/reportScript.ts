/**
 * The cook report page's script, as text. It reads the embedded report data and builds every
 * section with DOM calls (text goes in through textContent, never as markup). Sections: totals,
 * the zoomable treemap (chunk > folder > asset, sized by cooked bytes), largest assets, what
 * re-cooked and why, time per phase and slowest assets, soft-only / excluded / missing
 * references, problems, and an asset inspector (referrers and the chain from a cook root) that
 * any asset link opens (`#asset=<index>`, so it can be shared).
 */
import { SQUARIFY_JS } from './treemapScript.js';

export const REPORT_JS =
  SQUARIFY_JS +
  String.raw`
'use strict';
const R = JSON.parse(document.getElementById('report-data').textContent);
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== undefined && k !== null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
function fmtBytes(n) {
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB']; let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + ' ' + u[i];
}
const fmtMs = (ms) => ms < 1000 ? (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + ' ms' : (ms / 1000).toFixed(2) + ' s';
const shortClass = (c) => c.slice(c.lastIndexOf('.') + 1);
const pct = (a, b) => b ? (100 * a / b).toFixed(1) + '%' : '';
const A = R.assets;
const REASONS = {
  new: 'not in the cook cache yet',
  content: 'its source changed',
  settings: 'a cook setting that affects it changed',
  format: 'the cooker\'s output format changed',
  output: 'its cooked file was missing or changed',
};
function kindOf(a) {
  const c = a.className;
  if (a.via === 'mount' || c.startsWith('Text.')) return 'text';
  if (/Texture/i.test(c)) return 'texture';
  if (/Mesh/i.test(c)) return 'mesh';
  if (/Material/i.test(c)) return 'material';
  if (/World|Map|Level/i.test(c)) return 'map';
  if (/Sound|Audio/i.test(c)) return 'audio';
  return 'other';
}
const KIND_COLOR = { texture: '#3f7fbf', mesh: '#4f9d69', material: '#c98a3c', map: '#8a62c4', audio: '#c45f86', text: '#6b7380', other: '#3f9aa0' };
function assetLink(i) {
  return el('a', { href: '#asset=' + i, class: 'alink' }, A[i].path);
}
function table(headers, rows, empty) {
  if (!rows.length) return el('p', { class: 'empty' }, empty);
  return el('table', {}, el('thead', {}, el('tr', {}, headers.map((h) => el('th', { class: h.endsWith('#') ? 'num' : '' }, h.replace(/#$/, ''))))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c, k) => el('td', { class: headers[k].endsWith('#') ? 'num' : (k === 0 ? 'path' : '') }, c))))));
}
/* A table of the first n items, with a button that shows up to 2000 (all of them are in cook-report.json). */
function listTable(headers, list, n, render, empty) {
  const box = el('div');
  const draw = (limit) => {
    const more = list.length > limit
      ? (limit === n && n < 2000
        ? el('button', { class: 'more', onclick: () => draw(2000) }, 'show ' + (Math.min(list.length, 2000) - n) + ' more')
        : el('p', { class: 'dim' }, 'and ' + (list.length - limit) + ' more (all of them are in cook-report.json)'))
      : null;
    box.replaceChildren(table(headers, list.slice(0, limit).map(render), empty), more || '');
  };
  draw(n);
  return box;
}

// ---- header and totals ----
document.title = 'Cook report: ' + R.project;
$('title-project').textContent = R.project;
$('title-when').textContent = new Date(R.generatedAt).toLocaleString();
const okPill = $('title-ok');
okPill.textContent = R.ok ? 'cook ok' : 'cook FAILED';
okPill.className = 'pill ' + (R.ok ? 'ok' : 'err');
const T = R.totals;
const errorsN = R.problems.filter((p) => p.severity === 'error').length;
const stats = [
  ['assets', T.assets], ['cooked', T.cooked], ['from cache', T.cached], ['failed', T.failed],
  ['source', fmtBytes(T.bytesIn)], ['cooked size', fmtBytes(T.bytesOut)], ['time', fmtMs(T.ms)], ['errors / warnings', errorsN + ' / ' + (R.problems.length - errorsN)],
];
$('totals').replaceChildren(...stats.map(([k, v]) => el('div', { class: 'stat' }, el('div', { class: 'v' }, v), el('div', { class: 'k' }, k))),
  ...(R.listed ? [el('p', { class: 'dim', id: 'listed-note' }, 'A large cook: this report lists ' + R.listed.assets + ' of its ' + R.listed.of + ' assets one by one (the largest, the slowest, failures, soft-only ones, the roots and every asset on their chains); sizes by chunk and folder cover all of them.')] : []));
$('paks').replaceChildren(table(['pak', 'chunk', 'entries#', 'size#', ''],
  R.chunks.filter((c) => c.pak).map((c) => [c.pak.file, c.name, c.pak.entries, fmtBytes(c.pak.bytes), c.pak.written ? 'written' : el('span', { class: 'dim' }, 'up to date')]),
  R.ok ? 'No paks were written (the cook ran without them).' : 'No paks were written: the cook failed, the last good paks were left as they were.'));

// ---- treemap ----
function buildTree() {
  const root = { name: R.project, kind: 'root', size: 0, kids: new Map(), parent: null };
  const chunkIdx = new Map(R.chunks.map((c, i) => [c.name, i]));
  // Every chunk is listed, even one whose assets all failed (it shows as an empty box).
  for (const c of R.chunks) root.kids.set(c.name, { name: c.name, kind: 'chunk', chunk: c.name, size: 0, kids: new Map(), parent: root });
  A.forEach((a, i) => {
    if (!(a.bytesOut > 0)) return;
    let node = root.kids.get(a.chunk);
    if (!node) { node = { name: a.chunk, kind: 'chunk', chunk: a.chunk, size: 0, kids: new Map(), parent: root }; root.kids.set(a.chunk, node); }
    const segs = a.path.split('/').filter(Boolean);
    for (let s = 0; s < segs.length - 1; s++) {
      let next = node.kids.get(segs[s]);
      if (!next) { next = { name: segs[s], kind: 'folder', chunk: a.chunk, size: 0, kids: new Map(), parent: node }; node.kids.set(segs[s], next); }
      node = next;
    }
    node.kids.set(segs[segs.length - 1] + '#' + i, { name: segs[segs.length - 1], kind: 'asset', chunk: a.chunk, asset: i, size: a.bytesOut, parent: node });
  });
  // A bounded report (R.listed) lists some assets; each folder's unlisted rest is one box.
  if (R.folders) {
    const shown = new Map();
    for (const a of A) {
      if (!(a.bytesOut > 0)) continue;
      const key = a.chunk + '\0' + a.path.slice(0, a.path.lastIndexOf('/'));
      const s = shown.get(key) || { size: 0, count: 0 };
      s.size += a.bytesOut; s.count++;
      shown.set(key, s);
    }
    R.folders.forEach((f, k) => {
      const s = shown.get(f.chunk + '\0' + f.folder) || { size: 0, count: 0 };
      const rest = f.bytesOut - s.size;
      if (!(rest > 0)) return;
      let node = root.kids.get(f.chunk);
      if (!node) { node = { name: f.chunk, kind: 'chunk', chunk: f.chunk, size: 0, kids: new Map(), parent: root }; root.kids.set(f.chunk, node); }
      for (const seg of f.folder.split('/').filter(Boolean)) {
        let next = node.kids.get(seg);
        if (!next) { next = { name: seg, kind: 'folder', chunk: f.chunk, size: 0, kids: new Map(), parent: node }; node.kids.set(seg, next); }
        node = next;
      }
      const count = f.assets - s.count;
      node.kids.set('#rest' + k, { name: count + ' more asset' + (count === 1 ? '' : 's'), kind: 'rest', chunk: f.chunk, size: rest, count, parent: node });
    });
  }
  const finish = (n) => {
    if (!n.kids) return n.size;
    // A folder holding only one folder is shown as one box ("Game/Textures"), so single-child
    // chains do not stack empty headers.
    while (n.kind !== 'root' && n.kids.size === 1) {
      const only = [...n.kids.values()][0];
      if (only.kind !== 'folder') break;
      n.name = n.kind === 'chunk' ? n.name : n.name + '/' + only.name;
      if (n.kind === 'chunk') n.under = (n.under || '') + '/' + only.name;
      n.kids = only.kids;
      for (const k of n.kids.values()) k.parent = n;
    }
    n.children = [...n.kids.values()];
    n.size = n.children.reduce((s, c) => s + finish(c), 0);
    n.children.sort((x, y) => y.size - x.size || (x.name < y.name ? -1 : 1));
    n.count = n.children.reduce((s, c) => s + (c.kind === 'asset' ? 1 : c.count), 0);
    delete n.kids;
    return n.size;
  };
  finish(root);
  root.chunkIdx = chunkIdx;
  return root;
}
const TREE = buildTree();
const CHUNK_HUES = [210, 140, 35, 280, 0, 180, 320, 90];
const chunkHue = (name) => CHUNK_HUES[(TREE.chunkIdx.get(name) ?? 0) % CHUNK_HUES.length];
let current = TREE;
const HEADER = 18;
function nodeLabel(n) {
  return n.kind === 'asset' ? A[n.asset].path : n.kind === 'chunk' ? n.name + '.pak' + (n.under ? ' ' + n.under : '') : n.name;
}
function drawNode(box, n, x, y, w, h, depth) {
  if (w < 2 || h < 2) return;
  const d = el('div', { class: 'tm-node tm-' + n.kind, 'data-kind': n.kind, 'data-name': n.kind === 'asset' ? A[n.asset].path : n.name,
    title: nodeLabel(n) + '\n' + fmtBytes(n.size) + (n.kind === 'asset' ? ' cooked, ' + A[n.asset].className : ' in ' + n.count + ' asset' + (n.count === 1 ? '' : 's')) });
  d.style.left = x + 'px'; d.style.top = y + 'px'; d.style.width = Math.max(0, w - 1) + 'px'; d.style.height = Math.max(0, h - 1) + 'px';
  if (n.kind === 'asset') d.style.background = KIND_COLOR[kindOf(A[n.asset])];
  else if (n.kind === 'rest') d.style.background = '#2a2e36';
  else d.style.background = 'hsl(' + chunkHue(n.chunk) + ', 25%, ' + (n.kind === 'chunk' ? 20 : 16 + 4 * (depth % 3)) + '%)';
  if (n.kind === 'chunk') d.style.borderColor = 'hsl(' + chunkHue(n.chunk) + ', 60%, 55%)';
  if (w > 44 && h > 15) d.append(el('span', { class: 'tm-label' }, (n.kind === 'chunk' ? nodeLabel(n) : n.name) + (w > 120 ? '  ' + fmtBytes(n.size) : '')));
  d.addEventListener('click', (ev) => { ev.stopPropagation(); if (n.kind === 'asset') location.hash = 'asset=' + n.asset; else if (n.kind !== 'rest') zoom(n); });
  box.append(d);
  if (n.children && depth < 3 && w > 60 && h > 40) {
    for (const r of squarify(n.children, x + 2, y + HEADER, w - 4, h - HEADER - 2)) drawNode(box, r.item, r.x, r.y, r.w, r.h, depth + 1);
  }
}
function renderTreemap() {
  const box = $('treemap');
  box.replaceChildren();
  const w = box.clientWidth, h = box.clientHeight;
  const kids = current.children || [];
  if (!kids.length) { box.append(el('p', { class: 'empty', style: 'padding:12px' }, 'Nothing was cooked.')); }
  // At the top every chunk gets a box big enough to see and click, however small it is.
  const floor = current.kind === 'root' ? Math.max(current.size, 1) * 0.02 : 0;
  const items = kids.map((n) => ({ size: Math.max(n.size, floor), node: n }));
  for (const r of squarify(items, 0, 0, w, h)) drawNode(box, r.item.node, r.x, r.y, r.w, r.h, 0);
  const crumbs = [];
  for (let n = current; n; n = n.parent) crumbs.unshift(n);
  $('tm-crumbs').replaceChildren(...crumbs.flatMap((n, i) => [
    i ? el('span', { class: 'dim' }, ' / ') : null,
    i === crumbs.length - 1 ? el('b', {}, nodeLabel(n)) : el('a', { href: '#', onclick: (ev) => { ev.preventDefault(); zoom(n); } }, nodeLabel(n)),
  ].filter(Boolean)), el('span', { class: 'dim' }, '  ' + fmtBytes(current.size) + ' in ' + current.count + ' assets'));
  $('tm-up').disabled = !current.parent;
}
function zoom(n) { current = n; renderTreemap(); }
$('tm-up').addEventListener('click', () => { if (current.parent) zoom(current.parent); });
document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && current.parent) zoom(current.parent); });
new ResizeObserver(() => renderTreemap()).observe($('treemap'));
$('tm-legend').replaceChildren(...Object.entries(KIND_COLOR).map(([k, c]) => el('span', { class: 'legend' }, el('i', { style: 'background:' + c }), k)));

// ---- largest assets ----
{
  const chunkBytes = new Map(R.chunks.map((c) => [c.name, c.bytesOut]));
  const order = A.map((_, i) => i).filter((i) => A[i].bytesOut > 0).sort((x, y) => A[y].bytesOut - A[x].bytesOut);
  $('largest').replaceChildren(listTable(['asset', 'chunk', 'class', 'cooked#', 'of chunk#'], order, 25,
    (i) => [assetLink(i), A[i].chunk, shortClass(A[i].className), fmtBytes(A[i].bytesOut), pct(A[i].bytesOut, chunkBytes.get(A[i].chunk))], 'Nothing was cooked.'));
}

// ---- re-cooked and why ----
{
  const recooked = A.map((_, i) => i).filter((i) => A[i].status !== 'cached');
  const reasons = Object.entries(R.recooked).sort((a, b) => b[1] - a[1]);
  let filter = null;
  const list = el('div');
  const draw = () => {
    const sel = recooked.filter((i) => !filter || A[i].reason === filter);
    list.replaceChildren(listTable(['asset', 'reason', 'result', 'time#'], sel, 25,
      (i) => [assetLink(i), A[i].reason || '', A[i].status === 'cooked' ? 'cooked' : el('span', { class: A[i].status === 'failed' ? 'err' : 'dim' }, A[i].status), fmtMs(A[i].ms)], 'Everything came from the cook cache.'));
  };
  const chips = reasons.map(([r, n]) => el('button', { class: 'chip', 'data-reason': r, title: REASONS[r] || r, onclick: () => { filter = filter === r ? null : r; chips.forEach((c) => c.classList.toggle('on', c.dataset.reason === filter)); draw(); } }, r + ': ' + n));
  $('recooked').replaceChildren(
    el('p', {}, (T.assets - T.cached) + ' of ' + T.assets + ' assets were cooked; ' + T.cached + ' came from the cache.' + (R.listed ? ' The slowest ' + recooked.length + ' are listed.' : '')),
    el('div', { class: 'chips' }, chips),
    el('ul', { class: 'dim reasons' }, reasons.map(([r]) => el('li', {}, el('b', {}, r), ': ' + (REASONS[r] || '')))),
    list);
  draw();
}

// ---- time ----
{
  const total = R.phases.reduce((n, p) => n + p.ms, 0);
  const colors = ['#6cb6ff', '#5fd08a', '#f0b85a', '#c490ff', '#ff8f8f'];
  $('phases').replaceChildren(
    el('div', { class: 'phasebar' }, R.phases.map((p, k) => el('div', { style: 'flex:' + Math.max(p.ms, total / 200) + ';background:' + colors[k % colors.length], title: p.phase + ': ' + fmtMs(p.ms) }, p.ms / total > 0.08 ? p.phase : ''))),
    table(['phase', 'time#', 'share#'], R.phases.map((p) => [p.phase, fmtMs(p.ms), pct(p.ms, total)]), ''));
  const order = A.map((_, i) => i).filter((i) => A[i].status !== 'cached').sort((x, y) => A[y].ms - A[x].ms);
  const slowest = listTable(['asset', 'class', 'source#', 'time#'], order, 25, (i) => [assetLink(i), shortClass(A[i].className), fmtBytes(A[i].bytesIn), fmtMs(A[i].ms)], 'Everything came from the cook cache.');
  $('slowest').replaceChildren(el('p', { class: 'dim' }, 'Wall time of each asset\'s cook; assets cook concurrently, so these overlap.'),
    slowest);
}

// ---- references ----
{
  const softOnly = A.map((_, i) => i).filter((i) => A[i].via === 'soft');

  $('refs').replaceChildren(
    el('h3', {}, 'Shipped only through a soft reference (' + softOnly.length + ')'),
    listTable(['asset', 'chunk', 'cooked#'], softOnly, 10, (i) => [assetLink(i), A[i].chunk, fmtBytes(A[i].bytesOut)], 'None.'),
    el('h3', {}, 'Soft references left out (' + R.softExcluded.length + ')'),
    listTable(['referrer', 'left out'], R.softExcluded, 10, (r) => [r.referrer, r.target], 'None (cook.soft is "include", or nothing was left out).'),
    el('h3', {}, 'Missing references (' + R.missing.length + ')'),
    listTable(['referrer', 'missing GUID', 'type'], R.missing, 10, (r) => [r.referrer, el('code', {}, r.guid), r.type], 'None: every followed dependency exists.'));
}

// ---- problems ----
$('problems').replaceChildren(listTable(['file', 'severity', 'code', 'message'], R.problems, 50,
  (p) => [p.file || '', el('span', { class: 'pill ' + (p.severity === 'error' ? 'err' : 'warn') }, p.severity), el('code', {}, p.code), p.message], 'No problems.'));

// ---- asset inspector ----
{
  const input = $('find');
  const results = $('find-results');
  const lower = A.map((a) => a.path.toLowerCase());
  input.addEventListener('input', () => {
    const q = input.value.trim().toLowerCase();
    if (!q) { results.replaceChildren(); return; }
    const hits = [];
    for (let i = 0; i < A.length && hits.length < 12; i++) if (lower[i].includes(q) || A[i].guid === q) hits.push(i);
    results.replaceChildren(...hits.map((i) => el('li', {}, assetLink(i), el('span', { class: 'dim' }, '  ' + A[i].chunk + ', ' + fmtBytes(A[i].bytesOut)))));
  });
}
function chainOf(i) {
  const chain = [];
  const seen = new Set();
  for (let k = i; k !== undefined && !seen.has(k); k = A[k].from) { seen.add(k); chain.unshift(k); }
  return chain;
}
function showAsset(i) {
  const a = A[i];
  if (!a) return;
  const chain = chainOf(i);
  const root = A[chain[0]];
  const why = a.via === 'mount'
    ? el('p', {}, 'Text asset: UI and scripts load it by path, so everything under its mount ships (chunk ' + a.chunk + ').')
    : !root.root
      ? el('p', { class: 'warn' }, 'No chain from a cook root was found.')
      : el('ol', { class: 'chain' }, chain.map((k, n) => el('li', {}, n ? el('span', { class: 'via via-' + A[k].fromVia }, A[k].fromVia) : el('span', { class: 'pill' }, 'root: ' + root.root), ' ', k === i ? el('b', {}, A[k].path) : assetLink(k))));
  // A string is a package path (not cooked) or, in a bounded report, a cooked asset's virtual path (not listed).
  const refs = a.referrers.map((r) => typeof r === 'number' ? el('li', {}, assetLink(r)) : el('li', {}, r, el('span', { class: 'dim' }, /\.[A-Za-z0-9]+$/.test(r.slice(r.lastIndexOf('/'))) ? ' (not listed)' : ' (not cooked)')));
  const refCount = a.referrerCount || refs.length;
  if (refCount > refs.length) refs.push(el('li', { class: 'dim' }, 'and ' + (refCount - refs.length) + ' more'));
  $('inspector').replaceChildren(
    el('h3', {}, a.path),
    el('div', { class: 'grid small' }, [
      ['class', a.className], ['chunk', a.chunk], ['reached', a.via], ['result', a.status + (a.reason ? ' (' + a.reason + ')' : '')],
      ['source', fmtBytes(a.bytesIn)], ['cooked', fmtBytes(a.bytesOut)], ['cook time', a.status === 'cached' ? 'cached' : fmtMs(a.ms)], ['file', a.file],
    ].map(([k, v]) => el('div', { class: 'stat' }, el('div', { class: 'v' }, v), el('div', { class: 'k' }, k)))),
    el('h4', {}, 'Why it is cooked (the chain from a cook root, as registry why prints it)'), why,
    el('h4', {}, 'Referenced by (' + refCount + ')'), refs.length ? el('ul', { class: 'refs' }, refs) : el('p', { class: 'empty' }, 'Nothing references it.'));
  $('inspector-section').hidden = false;
}
function route() {
  const m = /^#asset=(\d+)$/.exec(location.hash);
  if (m) { showAsset(Number(m[1])); $('inspector-section').scrollIntoView({ block: 'start' }); }
}
window.addEventListener('hashchange', route);
renderTreemap();
route();
`;
