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
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { writeFileAtomic } from '../../src/util/atomicWrite.js';
import { hashHex, hashString, xxh64 } from '../../src/util/hash.js';
import { buildReportBody, buildReportHead, reportBodyKey, type ReportInput } from './buildCookReport.js';
import { escapeScriptJson } from './pageStyle.js';
import { REPORT_HTML_AFTER, reportHtmlBefore } from './renderReportHtml.js';

export interface ReportFiles {
  html: string;
  json: string;
  /** The body was the last report's (a cook that changed nothing); only the head was new. */
  reused?: boolean;
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
  key: string;
  json: Tail;
  html: Tail;
}

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
  const kept = key === undefined ? undefined : keptTails(keyFile, key, files);
  if (kept) {
    await writeFileAtomic(files.json, [heads.json, kept.json]);
    await writeFileAtomic(files.html, [heads.html, kept.html]);
    return { ...files, reused: true };
  }
  const bodyJson = JSON.stringify(buildReportBody(input)).slice(1);
  const tails = { json: Buffer.from(bodyJson + '\n', 'utf8'), html: Buffer.from(escapeScriptJson(bodyJson) + REPORT_HTML_AFTER, 'utf8') };
  // The old record describes the old files: it goes before they are replaced.
  fs.rmSync(keyFile, { force: true });
  await writeFileAtomic(files.json, [heads.json, tails.json]);
  await writeFileAtomic(files.html, [heads.html, tails.html]);
  if (key !== undefined) {
    const record: ReportKeyRecord = { v: KEY_VERSION, key, json: tailOf(tails.json), html: tailOf(tails.html) };
    // Only a time saver: a record that cannot be written means the next report is built whole.
    await writeFileAtomic(keyFile, Buffer.from(JSON.stringify(record), 'utf8')).catch(() => {});
  }
  return files;
}

function tailOf(bytes: Uint8Array): Tail {
  return { length: bytes.byteLength, xxh64: hashHex(xxh64(bytes)) };
}

/** The body bytes at the end of both report files, when the record says they are `key`'s and they still hash the same. */
function keptTails(keyFile: string, key: string, files: ReportFiles): { json: Buffer; html: Buffer } | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as ReportKeyRecord;
    if (r?.v !== KEY_VERSION || r.key !== key) return undefined;
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
