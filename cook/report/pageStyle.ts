/**
 * The look shared by the cook report and the daemon's status page: one small inline stylesheet
 * (both pages are single self-contained files, no fonts or assets fetched), and HTML escaping
 * for the few strings the server puts into markup.
 */

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * JSON that is safe inside a `<script type="application/json">` element: `<` is escaped so no
 * string in the data can close the element or open a comment.
 */
export function jsonForScript(data: unknown): string {
  return escapeScriptJson(JSON.stringify(data));
}

/** jsonForScript of JSON text already serialized (a character at a time, so pieces escape alike). */
export function escapeScriptJson(json: string): string {
  return json.replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export const PAGE_CSS = `
:root { --bg:#15171c; --panel:#1d2027; --line:#2c313b; --text:#e4e7ec; --dim:#9aa3b2; --accent:#6cb6ff;
  --ok:#5fd08a; --warn:#f0b85a; --err:#ff6b6b; color-scheme: dark; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--text); font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; }
header.top { display:flex; align-items:center; gap:16px; padding:14px 24px; border-bottom:1px solid var(--line); background:var(--panel); position:sticky; top:0; z-index:5; }
header.top h1 { font-size:18px; margin:0; font-weight:600; }
header.top .sub { color:var(--dim); }
header.top nav { margin-left:auto; display:flex; gap:14px; flex-wrap:wrap; }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
main { padding:20px 24px 48px; max-width:1400px; margin:0 auto; }
section { background:var(--panel); border:1px solid var(--line); border-radius:8px; padding:16px 18px; margin:0 0 18px; }
section h2 { font-size:15px; margin:0 0 12px; font-weight:600; letter-spacing:.2px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(150px,1fr)); gap:12px; }
.stat { background:#23272f; border-radius:6px; padding:10px 12px; }
.stat .v { font-size:20px; font-weight:600; font-variant-numeric:tabular-nums; }
.stat .k { color:var(--dim); font-size:12px; text-transform:uppercase; letter-spacing:.5px; }
.cols { display:grid; grid-template-columns:1fr 1fr; gap:18px; } @media (max-width:1000px) { .cols { grid-template-columns:1fr; } }
.cols > section { margin:0; }
table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--dim); font-weight:500; font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
td.num, th.num { text-align:right; white-space:nowrap; }
td.path { word-break:break-all; }
.pill { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; background:#2d333d; }
.pill.ok { background:#1e3b2a; color:var(--ok); } .pill.err { background:#45222a; color:var(--err); }
.pill.warn { background:#41331c; color:var(--warn); } .pill.busy { background:#1d3147; color:var(--accent); }
.dim { color:var(--dim); } .err { color:var(--err); } .warn { color:var(--warn); } .ok { color:var(--ok); }
.empty { color:var(--dim); font-style:italic; }
.bar { height:8px; background:#2a2f38; border-radius:4px; overflow:hidden; }
.bar > div { height:100%; background:var(--accent); transition:width .2s; }
code { background:#262a33; padding:1px 5px; border-radius:4px; }
input[type=search] { background:#111318; color:var(--text); border:1px solid var(--line); border-radius:6px; padding:6px 10px; width:100%; font:inherit; }
button { background:#2a2f38; color:var(--text); border:1px solid var(--line); border-radius:6px; padding:4px 10px; font:inherit; cursor:pointer; }
button:hover { border-color:var(--accent); }
`;
