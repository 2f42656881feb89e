/**
 * `cook --json` prints the summary on one line: above JSON_ASSET_REPORTS_MAX assets without the
 * per-asset reports (at a million assets they were a ~300 MB line), saying how many it left out.
 */
import { describe, expect, it } from 'vitest';
import { jsonSummary, JSON_ASSET_REPORTS_MAX } from '../../cli/commands/cook.js';
import type { AssetReport, CookSummary } from '../../cook/Cooker.js';

function summaryWith(n: number): CookSummary {
  const assetReports: AssetReport[] = Array.from({ length: n }, (_, i) => ({ guid: String(i), path: `/Game/A${i}`, file: `/p/A${i}`, chunk: 'Main', via: 'root', status: 'cached', ms: 0, bytesIn: 1, bytesOut: 1 }) as AssetReport);
  return { ok: true, assets: n, assetReports } as unknown as CookSummary;
}

describe('cook --json summary', () => {
  it('keeps every asset report up to the limit', () => {
    const s = summaryWith(JSON_ASSET_REPORTS_MAX);
    expect(jsonSummary(s)).toBe(s);
  });
  it('leaves them out above it and says how many', () => {
    const s = summaryWith(JSON_ASSET_REPORTS_MAX + 1);
    const j = jsonSummary(s);
    expect(j).toMatchObject({ ok: true, assets: JSON_ASSET_REPORTS_MAX + 1, assetReports: [], assetReportsOmitted: JSON_ASSET_REPORTS_MAX + 1 });
    // The summary itself (the report's input) still has them.
    expect(s.assetReports).toHaveLength(JSON_ASSET_REPORTS_MAX + 1);
  });
});
