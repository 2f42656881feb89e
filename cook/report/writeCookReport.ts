/**
 * Writes `Saved/Reports/cook.html` and `Saved/Reports/cook-report.json`, each atomically (a
 * browser or CI job reading the old report never sees half of the new one).
 *
 * A report is written as its head (time, totals, paks: see ReportHead) followed by its body (the
 * assets, chains, referrers, references, problems). The body of a cook where every asset came
 * from the cache is a function of what `reportBodyKey` hashes, so `Intermediates/CookReport.json`
 * records that key with the length and xxh64 of the body's bytes at the end of each file; the
 * next such cook with the same key writes a new head in front of those bytes instead of
 * building, serializing and escaping the body again (most of a no-op report's cost). The bytes
 * are checked against their hash first, so a report edited or damaged since is built again.
 *
 * A cook that cooked a few assets (a one-file change), or the no-op after one, patches the last
 * body instead: the record also keeps the body's frame (reportFrame: the key of everything but
 * the assets' own numbers, the sum of those numbers' terms, the assets not cached then). With the
 * same frame key, few assets cooked now or then, and the sum showing those are the only assets
 * whose numbers changed, their objects are written anew over the old ones (found by GUID, each
 * checked to read back as the object made from its old numbers) and every other byte is kept.
 * At 20k assets that is a read, a hash check and a copy of both files instead of ~0.15 s of
 * building, serializing and escaping the body. A bounded body (more than assetLimit assets) is
 * listed again from the last one with every number taken from this cook, so with the same frame
 * key it is patched however many assets cooked then: the first no-op after a cold 100k cook parses
 * ~2 MB instead of reading every record of the registry to build the body again.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { writeFileAtomic } from '../../src/util/atomicWrite.js';
import { hashHex, hashString, hex8, xxh64 } from '../../src/util/hash.js';
import type { AssetReport } from '../Cooker.js';
import { buildReportBody, buildReportHead, relistBounded, REPORT_ASSET_LIMIT, reportFolders, reportAssetFields, reportAssetNumbers, reportAssetTerm, reportBodyKey, reportFrame, type ReportAsset, type ReportAssetNumbers, type ReportBody, type ReportFrame, type ReportInput } from './buildCookReport.js';
import { escapeScriptJson } from './pageStyle.js';
import { REPORT_HTML_AFTER, reportHtmlBefore } from './renderReportHtml.js';

export interface ReportFiles {
  html: string;
  json: string;
  /** The body was the last report's (a cook that changed nothing); only the head was new. */
  reused?: boolean;
  /** The body was the last report's with a few assets' objects written anew (see the module comment). */
  patched?: boolean;
}

/** Where the last report's body key is kept (see the module comment). */
export const REPORT_KEY_FILE = 'CookReport.json';
const KEY_VERSION = 1;

interface Tail {
  length: number;
  xxh64: string;
}
interface ReportKeyRecord {
  v: number;
  /** The body's key (reportBodyKey) when every asset came from the cache. */
  key?: string;
  json: Tail;
  html: Tail;
  /** The body's frame (reportFrame): its key, sum (hex) and the assets not cached then (null: too many to patch). */
  frame?: { key: string; sum: string; notCached: string[] | null };
}

/** A body is patched when at most this many assets' objects change (cooked now or then). */
const MAX_PATCHED = 64;

/** Where a project's report goes. */
export function reportFiles(config: Pick<ProjectConfig, 'savedDir'>): ReportFiles {
  const dir = path.join(config.savedDir, 'Reports');
  return { html: path.join(dir, 'cook.html'), json: path.join(dir, 'cook-report.json') };
}

let pageKey: string | undefined;

/** Build the report from a finished cook and write both files; returns their paths. */
export async function writeCookReport(input: ReportInput): Promise<ReportFiles> {
  const files = reportFiles(input.config);
  const keyFile = path.join(input.config.intermediatesDir, REPORT_KEY_FILE);
  const bodyKey = reportBodyKey(input);
  // The page around the body is part of what the body's bytes are.
  const key = bodyKey && hashString(`${bodyKey}\n${(pageKey ??= hashString(REPORT_HTML_AFTER + escapeScriptJson.toString()))}`);
  // The head as the start of the one JSON object: `{"version":...,"recooked":{...},` then the body's members.
  const headJson = JSON.stringify(buildReportHead(input)).slice(0, -1) + ',';
  const heads = { json: Buffer.from(headJson, 'utf8'), html: Buffer.from(reportHtmlBefore(input.config.name) + escapeScriptJson(headJson), 'utf8') };
  const record = readRecord(keyFile);
  const kept = key === undefined || record?.key !== key ? undefined : keptTails(record, files);
  if (kept) {
    await writeFileAtomic(files.json, [heads.json, kept.json]);
    await writeFileAtomic(files.html, [heads.html, kept.html]);
    return { ...files, reused: true };
  }
  const frame = reportFrame(input);
  const patched = frame && record ? patchedTails(record, frame, files, input) : undefined;
  const tails = patched ?? builtTails(input);
  // The old record describes the old files: it goes before they are replaced.
  fs.rmSync(keyFile, { force: true });
  await writeFileAtomic(files.json, [heads.json, tails.json]);
  await writeFileAtomic(files.html, [heads.html, tails.html]);
  if (key !== undefined || frame !== undefined) {
    const next: ReportKeyRecord = {
      v: KEY_VERSION,
      ...(key !== undefined ? { key } : {}),
      json: tailOf(tails.json),
      html: tailOf(tails.html),
      ...(frame ? { frame: { key: frame.key, sum: sumHex(frame.sum), notCached: frame.notCached.length <= MAX_PATCHED ? frame.notCached : null } } : {}),
    };
    // Only a time saver: a record that cannot be written means the next report is built whole.
    await writeFileAtomic(keyFile, Buffer.from(JSON.stringify(next), 'utf8')).catch(() => {});
  }
  return patched ? { ...files, patched: true } : files;
}

/** A frame's sum as the record keeps it: both lanes, 8 hex digits each. */
function sumHex(sum: readonly number[]): string {
  return hex8(sum[0]) + hex8(sum[1]);
}

/** The body built whole, as both files end with it. */
function builtTails(input: ReportInput): { json: Buffer; html: Buffer } {
  const bodyJson = JSON.stringify(buildReportBody(input)).slice(1);
  return { json: Buffer.from(bodyJson + '\n', 'utf8'), html: Buffer.from(escapeScriptJson(bodyJson) + REPORT_HTML_AFTER, 'utf8') };
}

/**
 * The last body with the objects of the assets whose numbers changed written anew, when that is
 * the body this cook would build: the same frame key (everything but the assets' numbers), few
 * assets cooked now or then, and the frame's sum with their old numbers (read from the old
 * objects) put back equal to the last one's, so every other asset's numbers are the same. Each
 * old object must read back as the object this writes for its own numbers. Else undefined.
 */
function patchedTails(record: ReportKeyRecord, frame: ReportFrame, files: ReportFiles, input: ReportInput): { json: Buffer; html: Buffer } | undefined {
  const last = record.frame;
  if (last?.key !== frame.key) return undefined;
  // A bounded body takes every number from this cook, so it needs no list of what changed: the
  // first no-op after a cold cook (every asset cooked then) is patched too.
  if (input.summary.assetReports.length > (input.assetLimit ?? REPORT_ASSET_LIMIT)) {
    const old = keptTails(record, files);
    return old && patchedBounded(old.json, input);
  }
  if (!last.notCached || frame.notCached.length > MAX_PATCHED) return undefined;
  const changed = new Set([...last.notCached, ...frame.notCached]);
  if (changed.size > MAX_PATCHED) return undefined;
  const now = new Map<string, AssetReport>();
  for (const a of input.summary.assetReports) if (changed.has(a.guid)) now.set(a.guid, a);
  if (now.size !== changed.size) return undefined;
  const old = keptTails(record, files);
  if (!old) return undefined;
  const sum = [...frame.sum];
  const term: [number, number] = [0, 0];
  const edits: Array<{ json: [number, number]; html: [number, number]; text: string }> = [];
  for (const [guid, a] of now) {
    const json = objectAt(old.json, guid);
    const html = objectAt(old.html, guid);
    if (!json || !html) return undefined;
    let before: Record<string, unknown>;
    try {
      before = JSON.parse(old.json.toString('utf8', json[0], json[1])) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const was = { status: before.status, ...(before.reason !== undefined ? { reason: before.reason } : {}), bytesIn: before.bytesIn, bytesOut: before.bytesOut, ms: before.ms } as ReportAssetNumbers;
    const text = JSON.stringify(reportAssetFields(before, was));
    if (before.guid !== guid || before.path !== a.path || before.chunk !== a.chunk || before.via !== a.via || text !== old.json.toString('utf8', json[0], json[1]) || escapeScriptJson(text) !== old.html.toString('utf8', html[0], html[1])) return undefined;
    const numbers = reportAssetNumbers(a);
    // Their numbers then in, their numbers now out.
    for (const [n, sign] of [[was, 1], [numbers, -1]] as const) {
      reportAssetTerm(guid, n.status, n.reason, n.bytesIn, n.bytesOut, n.ms, term);
      sum[0] = (sum[0] + sign * term[0]) >>> 0;
      sum[1] = (sum[1] + sign * term[1]) >>> 0;
    }
    edits.push({ json, html, text: JSON.stringify(reportAssetFields(before, numbers)) });
  }
  if (sumHex(sum) !== last.sum) return undefined;
  const splice = (bytes: Buffer, at: (e: (typeof edits)[number]) => [number, number], text: (t: string) => string): Buffer => {
    const parts: Buffer[] = [];
    let from = 0;
    for (const e of [...edits].sort((x, y) => at(x)[0] - at(y)[0])) {
      parts.push(bytes.subarray(from, at(e)[0]), Buffer.from(text(e.text), 'utf8'));
      from = at(e)[1];
    }
    parts.push(bytes.subarray(from));
    return Buffer.concat(parts);
  };
  return { json: splice(old.json, (e) => e.json, (t) => t), html: splice(old.html, (e) => e.html, escapeScriptJson) };
}

/**
 * patchedTails for a bounded body (more than assetLimit assets): which assets it lists depends on
 * the numbers, so the last body is parsed (a few MB at a million assets) and listed again from
 * this cook's numbers (relistBounded: undefined when an asset not listed then would be listed now,
 * such as one cooked for the first time since, whose chain and referrers that body lacks). Every
 * listed asset's numbers and every folder's bytes are this cook's (the frame key says the rest of
 * the body is the same), assets no longer listed are dropped with the indexes renumbered; then
 * written as a body built whole is.
 */
function patchedBounded(oldJson: Buffer, input: ReportInput): { json: Buffer; html: Buffer } | undefined {
  let body: ReportBody;
  try {
    body = JSON.parse(`{${oldJson.toString('utf8')}`) as ReportBody;
  } catch {
    return undefined;
  }
  const assets = body.assets as unknown as Array<Record<string, unknown> & ReportAsset>;
  if (!Array.isArray(assets) || !body.listed || !Array.isArray(body.folders)) return undefined;
  const listed = relistBounded(input, assets);
  if (!listed) return undefined;
  const all = input.summary.assetReports;
  // Old list position -> new one (-1: dropped). Both lists are in GUID order.
  const kept = new Set(listed.map((i) => all[i].guid));
  const renumber = new Int32Array(assets.length).fill(-1);
  let next = 0;
  assets.forEach((a, i) => kept.has(a.guid) && (renumber[i] = next++));
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < assets.length; i++) {
    if (renumber[i] < 0) continue;
    const before = assets[i];
    const now = all[listed[out.length]];
    if (now.guid !== before.guid || now.path !== before.path || now.chunk !== before.chunk || now.via !== before.via) return undefined;
    const a = reportAssetFields(before, reportAssetNumbers(now));
    if (!a) return undefined;
    a.referrers = (a.referrers as Array<number | string>).map((r) => (typeof r === 'number' ? (renumber[r] >= 0 ? renumber[r] : assets[r].path) : r));
    if (typeof a.from === 'number') a.from = renumber[a.from];
    out.push(a);
  }
  const folders = reportFolders(all);
  if (folders.length !== body.folders.length || folders.some((f, i) => f.chunk !== body.folders![i].chunk || f.folder !== body.folders![i].folder)) return undefined;
  (body as { assets: unknown }).assets = out;
  body.listed!.assets = out.length;
  body.folders = folders;
  const bodyJson = JSON.stringify(body).slice(1);
  return { json: Buffer.from(bodyJson + '\n', 'utf8'), html: Buffer.from(escapeScriptJson(bodyJson) + REPORT_HTML_AFTER, 'utf8') };
}

/**
 * Where asset `guid`'s object lies in a body's bytes (JSON, or as cook.html escapes it): the first
 * `"guid":"<guid>"` outside a string is its own (the assets come first in a body; inside a string
 * a quote is escaped), its object starts at the `{"path":"` before it and ends where its braces
 * close. Undefined when that is not found.
 */
function objectAt(bytes: Buffer, guid: string): [number, number] | undefined {
  const at = bytes.indexOf(`"guid":"${guid}"`);
  if (at < 0) return undefined;
  const start = bytes.lastIndexOf('{"path":"', at);
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x22) {
      // A string: to its closing quote, over escapes.
      for (i++; i < bytes.length && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return [start, i + 1];
  }
  return undefined;
}

function tailOf(bytes: Uint8Array): Tail {
  return { length: bytes.byteLength, xxh64: hashHex(xxh64(bytes)) };
}

/** The last report's record (Intermediates/CookReport.json), or undefined (none, damaged, another version). */
function readRecord(keyFile: string): ReportKeyRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as ReportKeyRecord;
    return r?.v === KEY_VERSION ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The body bytes at the end of both report files, when they still hash as the record says. */
function keptTails(r: ReportKeyRecord, files: ReportFiles): { json: Buffer; html: Buffer } | undefined {
  try {
    const tail = (file: string, t: Tail): Buffer | undefined => {
      const bytes = fs.readFileSync(file);
      if (typeof t?.length !== 'number' || t.length > bytes.byteLength) return undefined;
      const b = bytes.subarray(bytes.byteLength - t.length);
      return hashHex(xxh64(b)) === t.xxh64 ? b : undefined;
    };
    const json = tail(files.json, r.json);
    const html = json && tail(files.html, r.html);
    return json && html ? { json, html } : undefined;
  } catch {
    return undefined;
  }
}
