/**
 * Primary assets: the runtime finds them by name, so two with one name are an error under --ci and
 * a warning otherwise; and a Primary asset inside a plugin ships in the plugin's chunk (README,
 * "Chunks"), the same chunk `registry why` names.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { PakReader } from '../../pak/PakReader.js';
import { registryWhy } from '../../cli/commands/registry.js';
import { asset, g, tempDir, writeProject } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function project(files: Parameters<typeof writeProject>[2], config: Record<string, unknown> = {}): Promise<string> {
  const dir = await tempDir('lc-primary-');
  dirs.push(dir);
  return writeProject(dir, { name: 'P', cookRoots: ['/Game/Maps/Main'], ...config }, { 'Content/Maps/Main.lasset': asset(g(1), 'Main'), ...files });
}

async function pakPaths(file: string): Promise<string[]> {
  const r = await PakReader.open(file);
  try {
    return r.entries.map((e) => e.path);
  } finally {
    await r.close();
  }
}

describe('Primary assets', () => {
  it('two with the same name: a warning, and an error under --ci that fails the cook', async () => {
    const dir = await project({
      'Content/Data/A/Rules.lasset': asset(g(2), 'Rules', { assetFlags: 1 }),
      'Content/Data/B/Rules.lasset': asset(g(3), 'Rules', { assetFlags: 1 }),
      'Content/Data/Other.lasset': asset(g(4), 'Other', { assetFlags: 1 }),
    });
    const want = {
      code: 'PRIMARY_NAME_DUPLICATE',
      file: path.join(dir, 'Content/Data/B/Rules.lasset'),
      message: 'Primary asset name "Rules" is also used by /Game/Data/A/Rules; the runtime finds Primary assets by name',
    };
    const local = await cookProject({ projectDir: dir });
    expect(local.ok).toBe(true);
    expect(local.problems.filter((p) => p.code === 'PRIMARY_NAME_DUPLICATE')).toEqual([expect.objectContaining({ ...want, severity: 'warning' })]);
    const ci = await cookProject({ projectDir: dir, ci: true });
    expect(ci.ok).toBe(false);
    expect(ci.problems.filter((p) => p.code === 'PRIMARY_NAME_DUPLICATE')).toEqual([expect.objectContaining({ ...want, severity: 'error' })]);
  });

  it('one inside a plugin ships in the plugin chunk, and registry why says so', async () => {
    const dir = await project(
      { 'Plugins/Extra/Content/Quest.lasset': asset(g(5), 'Quest', { assetFlags: 1 }) },
      { plugins: [{ name: 'Extra', path: 'Plugins/Extra', chunk: 'DLC1' }] },
    );
    const s = await cookProject({ projectDir: dir });
    expect(s.ok).toBe(true);
    expect(await pakPaths(path.join(dir, 'Saved/Paks/DLC1.pak'))).toContain('/Extra/Quest.lasset');
    expect(await pakPaths(path.join(dir, 'Saved/Paks/Main.pak'))).not.toContain('/Extra/Quest.lasset');
    const why = await registryWhy('/Extra/Quest', { project: dir });
    expect(why.data).toMatchObject({ chunk: 'DLC1', root: { reason: 'primary', chunk: 'DLC1' } });
  });
});
