/**
 * cook.html: one self-contained file (inline CSS, script and data; nothing is fetched, so it opens
 * from disk, from a CI artifact or from the daemon's /report alike). The markup is only the page's
 * frame; reportScript.ts fills every section from the embedded JSON.
 */
import type { CookReport } from './buildCookReport.js';
import { escapeHtml, jsonForScript, PAGE_CSS } from './pageStyle.js';
import { REPORT_JS } from './reportScript.js';

const REPORT_CSS = `
#treemap { position:relative; height:560px; background:#101217; border-radius:6px; overflow:hidden; user-select:none; }
.tm-node { position:absolute; overflow:hidden; border:1px solid rgba(0,0,0,.45); cursor:pointer; border-radius:2px; }
.tm-node:hover { outline:2px solid #fff; outline-offset:-2px; z-index:2; }
.tm-chunk { border-width:2px; }
.tm-label { position:absolute; left:4px; top:1px; right:4px; font-size:11.5px; line-height:16px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; color:#f2f4f8; text-shadow:0 1px 2px rgba(0,0,0,.7); pointer-events:none; }
.tm-asset .tm-label { font-size:11px; }
.tm-bar { display:flex; align-items:center; gap:10px; margin-bottom:10px; flex-wrap:wrap; }
.legend { display:inline-flex; align-items:center; gap:5px; margin-right:12px; color:var(--dim); font-size:12px; }
.legend i { width:11px; height:11px; border-radius:2px; display:inline-block; }
.chips { display:flex; gap:8px; flex-wrap:wrap; margin:8px 0; }
.chip.on { border-color:var(--accent); background:#1d3147; }
ul.reasons { margin:6px 0 12px; padding-left:18px; font-size:13px; }
.phasebar { display:flex; height:26px; border-radius:5px; overflow:hidden; margin-bottom:10px; }
.phasebar > div { display:flex; align-items:center; justify-content:center; color:#111; font-size:12px; font-weight:600; min-width:2px; }
h3 { font-size:14px; margin:16px 0 8px; } h4 { font-size:13px; margin:16px 0 6px; color:var(--dim); font-weight:500; }
ol.chain { margin:0; padding-left:22px; } ol.chain li { margin:3px 0; }
.via { font-size:11px; padding:0 6px; border-radius:8px; } .via-Hard { background:#23344a; color:#9cc8ff; } .via-Soft { background:#41331c; color:var(--warn); }
.grid.small .stat .v { font-size:14px; word-break:break-all; }
#find-results { list-style:none; padding:0; margin:8px 0 0; } #find-results li { padding:2px 0; }
ul.refs { margin:0; padding-left:18px; }
td.path { word-break:normal; overflow-wrap:anywhere; }
`;

/** The report as one HTML page. */
export function renderReportHtml(report: CookReport): string {
  return reportHtmlBefore(report.project) + jsonForScript(report) + REPORT_HTML_AFTER;
}

/**
 * The page up to the report's JSON (which follows, escaped by jsonForScript, then
 * REPORT_HTML_AFTER): split so a report can be written from its serialized parts.
 */
export function reportHtmlBefore(project: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Cook report: ${escapeHtml(project)}</title>
<style>${PAGE_CSS}${REPORT_CSS}</style></head>
<body>
<header class="top"><h1>Cook report</h1><span class="sub"><span id="title-project"></span> &middot; <span id="title-when"></span></span><span id="title-ok" class="pill"></span>
<nav><a href="#sizes">Sizes</a><a href="#recooked-section">Re-cooked</a><a href="#time-section">Time</a><a href="#refs-section">References</a><a href="#problems-section">Problems</a><a href="#find-section">Find an asset</a></nav></header>
<main>
<section><div class="grid" id="totals"></div><div id="paks" style="margin-top:12px"></div></section>
<section id="sizes"><h2>Cooked bytes by chunk, folder and asset</h2>
<div class="tm-bar"><button id="tm-up" title="zoom out (Esc)">&uarr; up</button><span id="tm-crumbs"></span><span style="margin-left:auto" id="tm-legend"></span></div>
<div id="treemap"></div><p class="dim">Click a chunk or folder to zoom in, an asset to inspect it; Esc zooms out.</p></section>
<section id="inspector-section" hidden><h2>Asset</h2><div id="inspector"></div></section>
<div class="cols">
<section><h2>Largest assets</h2><div id="largest"></div></section>
<section id="recooked-section"><h2>What re-cooked and why</h2><div id="recooked"></div></section>
</div>
<div class="cols" style="margin-top:18px">
<section id="time-section"><h2>Time per phase</h2><div id="phases"></div><h3>Slowest assets</h3><div id="slowest"></div></section>
<section id="refs-section"><h2>References</h2><div id="refs"></div></section>
</div>
<section id="problems-section" style="margin-top:18px"><h2>Problems</h2><div id="problems"></div></section>
<section id="find-section"><h2>Find an asset</h2><input type="search" id="find" placeholder="path or GUID, e.g. Maps/Main" autocomplete="off"><ul id="find-results"></ul></section>
</main>
<script type="application/json" id="report-data">`;
}

/** The page after the report's JSON. */
export const REPORT_HTML_AFTER = `</script>
<script>${REPORT_JS}</script>
</body></html>
`;
