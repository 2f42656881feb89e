/**
 * The daemon's status page: one self-contained HTML file (inline CSS and script, nothing fetched
 * from elsewhere). It reads GET /status once, then follows GET /events (SSE): progress and what
 * was just cooked update live, and state, queue, last cook and errors are re-read from /status
 * after each batch or cook, so the errors shown are always the daemon's current ones (an error
 * disappears once its file is fixed). The page runs under the CSP set by controlServer.ts.
 */
import { escapeHtml, PAGE_CSS } from '../cook/report/pageStyle.js';

/** A small page with one message (not logged in, spent login link, no report yet). */
export function messagePage(title: string, bodyHtml: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${PAGE_CSS}</style></head>
<body><main><section><h2>${escapeHtml(title)}</h2><p>${bodyHtml}</p></section></main></body></html>`;
}

const STATUS_CSS = `
#activity { max-height:420px; overflow:auto; }
#activity td { padding:3px 8px; }
.inflight { color:var(--dim); font-size:12px; margin-top:6px; min-height:18px; word-break:break-all; }
#conn.pill { font-weight:500; }
`;

/* The page's script. Plain ES2020, no framework: every value is put in with textContent. */
const STATUS_JS = String.raw`
'use strict';
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
const fmtMs = (ms) => ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(2) + ' s';
const clock = (d) => new Date(d).toLocaleTimeString();
let project = '';
const rel = (f) => (f && project && f.startsWith(project + '/')) ? f.slice(project.length + 1) : (f || '');

let progress = { phase: '', total: 0, done: 0, inFlight: new Map() };
function renderProgress() {
  const p = progress;
  $('phase').textContent = p.phase ? p.phase + (p.total ? ' ' + p.done + ' / ' + p.total : '') : 'idle';
  $('bar').style.width = p.total ? Math.min(100, (100 * p.done) / p.total).toFixed(1) + '%' : (p.phase ? '100%' : '0%');
  $('inflight').textContent = p.inFlight.size ? 'in flight: ' + [...p.inFlight.keys()].slice(0, 6).join(', ') + (p.inFlight.size > 6 ? ' ...' : '') : '';
}

const activity = [];
function addActivity(kind, text, file, cls) {
  activity.unshift({ t: Date.now(), kind, text, file, cls });
  if (activity.length > 200) activity.length = 200;
  const body = $('activity-body');
  body.prepend(el('tr', { 'data-file': file || '' }, el('td', { class: 'dim num' }, clock(Date.now())), el('td', { class: cls || '' }, kind), el('td', { class: 'path' }, text), el('td', { class: 'path dim' }, rel(file))));
  while (body.children.length > 200) body.lastChild.remove();
  $('activity-empty').hidden = true;
}

function renderStatus(s) {
  project = s.project;
  $('project').textContent = s.project;
  const state = $('state');
  state.textContent = s.state;
  state.className = 'pill ' + (s.state === 'idle' ? 'ok' : s.state === 'cooking' ? 'busy' : 'warn');
  $('queue').textContent = s.queue;
  $('batches').textContent = s.batches;
  $('errcount').textContent = s.errors.length;
  $('errcount').className = 'v ' + (s.errors.length ? 'err' : 'ok');
  const lc = s.lastCook;
  $('lastcook').replaceChildren(lc
    ? el('span', {}, el('span', { class: 'pill ' + (lc.ok ? 'ok' : 'err') }, lc.ok ? 'ok' : 'failed'), ' ', lc.kind + ' ' + lc.id + ', ' + fmtMs(lc.ms) + ', at ' + clock(lc.startedAt))
    : el('span', { class: 'empty' }, 'none yet'));
  $('report-link').hidden = !s.report;
  const rows = s.errors.map((e) => el('tr', { 'data-file': e.file || '' },
    el('td', { class: 'dim num' }, e.time ? clock(e.time) : ''), el('td', { class: 'path' }, rel(e.file) || '(project)'),
    el('td', {}, el('code', {}, e.code)), el('td', {}, e.message)));
  $('errors-body').replaceChildren(...rows);
  $('errors-empty').hidden = rows.length > 0;
  $('errors-table').hidden = rows.length === 0;
}

let refreshing = false, again = false;
async function refresh() {
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    const r = await fetch('/status', { cache: 'no-store' });
    if (r.ok) renderStatus(await r.json());
    // A restarted daemon has a new session: say how to get back in instead of retrying forever.
    else if (r.status === 401) { $('loggedout').hidden = false; $('conn').textContent = 'logged out'; $('conn').className = 'pill err'; }
  } catch (e) { /* the stream's error handler shows the connection state */ }
  refreshing = false;
  if (again) { again = false; refresh(); }
}

function onEvent(e) {
  switch (e.type) {
    case 'START': progress = { phase: e.phase, total: e.total || 0, done: 0, inFlight: new Map() }; break;
    case 'END': progress.phase = ''; progress.inFlight.clear(); refresh(); break;
    case 'COOK_START': progress.inFlight.set(e.asset, Date.now()); break;
    case 'COOK_END':
      progress.inFlight.delete(e.asset); progress.done++;
      if (!e.cached) addActivity(e.status === 'failed' ? 'failed' : 'cooked', e.asset, e.file, e.status === 'failed' ? 'err' : 'ok');
      break;
    case 'BATCH_START': progress = { phase: 'batch ' + e.batch, total: 0, done: 0, inFlight: new Map() }; addActivity('saved', e.files + ' file' + (e.files === 1 ? '' : 's') + ' changed', '', 'dim'); break;
    case 'BATCH_END': progress.phase = ''; addActivity('batch', 'batch ' + e.batch + ': ' + e.cooked + ' cooked, ' + e.removed + ' removed in ' + fmtMs(e.ms), '', e.ok ? 'ok' : 'err'); refresh(); break;
    case 'PAK_WRITTEN': addActivity('pak', e.chunk + '.pak: ' + e.entries + ' entries', e.file, 'dim'); break;
    case 'ERROR': addActivity('error', e.log.message, e.log.file, 'err'); refresh(); break;
    case 'WARNING': addActivity('warning', e.log.message, e.log.file, 'warn'); break;
  }
  renderProgress();
}

function connect() {
  const es = new EventSource('/events');
  const conn = $('conn');
  es.onopen = () => { conn.textContent = 'live'; conn.className = 'pill ok'; refresh(); };
  es.onerror = () => { conn.textContent = 'reconnecting'; conn.className = 'pill warn'; refresh(); };
  for (const t of ['START', 'END', 'SCAN_END', 'COOK_START', 'COOK_END', 'PAK_WRITTEN', 'WARNING', 'ERROR', 'BATCH_START', 'BATCH_END']) {
    es.addEventListener(t, (m) => { try { onEvent(JSON.parse(m.data)); } catch (err) { console.error(err); } });
  }
}
refresh();
connect();
renderProgress();
`;

/** The status page served at GET /. */
export function statusPageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Lumina daemon</title><style>${PAGE_CSS}${STATUS_CSS}</style></head>
<body>
<header class="top"><h1>Lumina daemon</h1><span class="sub" id="project"></span><span id="state" class="pill">...</span><span id="conn" class="pill warn">connecting</span>
<nav><a id="report-link" href="/report" target="_blank" rel="noopener" hidden>Latest cook report &rarr;</a></nav></header>
<main>
<section id="loggedout" hidden><h2 class="err">Logged out</h2><p>The daemon restarted or this session ended. Get a new login link with <code>lumina-cook daemon url</code>.</p></section>
<section><h2>Progress</h2><div class="grid" style="margin-bottom:12px">
<div class="stat"><div class="v" id="phase">idle</div><div class="k">now</div></div>
<div class="stat"><div class="v" id="queue">0</div><div class="k">queued</div></div>
<div class="stat"><div class="v" id="batches">0</div><div class="k">batches</div></div>
<div class="stat"><div class="v" id="errcount">0</div><div class="k">errors</div></div></div>
<div class="bar"><div id="bar" style="width:0%"></div></div><div class="inflight" id="inflight"></div>
<p>Last cook: <span id="lastcook"><span class="empty">none yet</span></span></p></section>
<section><h2>Errors</h2><p id="errors-empty" class="empty">No errors.</p>
<table id="errors-table" hidden><thead><tr><th class="num">time</th><th>file</th><th>code</th><th>message</th></tr></thead><tbody id="errors-body"></tbody></table></section>
<section><h2>Activity</h2><p id="activity-empty" class="empty">Nothing yet: save a file under the project's content.</p>
<div id="activity"><table><tbody id="activity-body"></tbody></table></div></section>
</main>
<script>${STATUS_JS}</script>
</body></html>`;
}
