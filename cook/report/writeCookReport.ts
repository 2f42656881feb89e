/**
 * Writes `Saved/Reports/cook.html` and `Saved/Reports/cook-report.json`, each atomically (a
 * browser or CI job reading the old report never sees half of the new one).
 */
import path from 'node:path';
import type { ProjectConfig } from '../../config/index.js';
import { writeFileAtomic } from '../../src/util/atomicWrite.js';
import { buildCookReport, type ReportInput } from './buildCookReport.js';
import { renderReportHtml } from './renderReportHtml.js';

export interface ReportFiles {
  html: string;
  json: string;
}

/** Where a project's report goes. */
export function reportFiles(config: Pick<ProjectConfig, 'savedDir'>): ReportFiles {
  const dir = path.join(config.savedDir, 'Reports');
  return { html: path.join(dir, 'cook.html'), json: path.join(dir, 'cook-report.json') };
}

/** Build the report from a finished cook and write both files; returns their paths. */
export async function writeCookReport(input: ReportInput): Promise<ReportFiles> {
  const report = buildCookReport(input);
  const files = reportFiles(input.config);
  await writeFileAtomic(files.json, Buffer.from(JSON.stringify(report) + '\n', 'utf8'));
  await writeFileAtomic(files.html, Buffer.from(renderReportHtml(report), 'utf8'));
  return files;
}
