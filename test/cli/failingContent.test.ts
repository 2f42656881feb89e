/**
 * Failures fail, in every mode: a root map or a mesh the roots reach that cannot be read makes
 * `cook` exit 1 with each problem named with its file, leaves the last good paks as they were,
 * and still cooks (and caches) everything else. Exactly the two reports of the robustness issue,
 * on the committed sample project copied to a temp folder, through the real CLI.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { runCli } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

/** The sample project without what a cook wrote, cooked once: the last good paks. */
async function cookedSample(): Promise<{ dir: string; paks: Map<string, Buffer>; assets: number }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-failing-'));
  dirs.push(dir);
  await copySampleProject(dir);
  const s = await cookProject({ projectDir: dir });
  expect(s.ok).toBe(true);
  expect(s.paks.find((p) => p.chunk === 'Main')!.entries).toBe(21);
  return { dir, paks: await readPaks(dir), assets: s.assets };
}

async function readPaks(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const paks = path.join(dir, 'Saved/Paks');
  for (const n of (await fsp.readdir(paks)).sort()) out.set(n, await fsp.readFile(path.join(paks, n)));
  return out;
}

describe('content the roots reach that cannot be read fails the cook', () => {
  it('a corrupt root map: exit 1, the error names the file, Main.pak keeps its 21 entries', async () => {
    const { dir, paks } = await cookedSample();
    const map = path.join(dir, 'Content/Maps/Main.lasset');
    const bytes = await fsp.readFile(map);
    bytes.fill(0x5a, 0, 64); // the header is garbage now
    await fsp.writeFile(map, bytes);

    const r = await runCli(['cook', '--project', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('cook FAILED');
    expect(r.stdout).toContain(`error PACKAGE_INVALID ${map}`);
    expect(r.stdout).toMatch(/error ASSET_NOT_FOUND .*lumina-cook\.json \(cookRoots\): no asset matches "\/Game\/Maps\/Main"/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(await readPaks(dir)).toEqual(paks);
  }, 60_000);

  it('a truncated mesh: exit 1, named with its referrer, the paks untouched, the rest cooked and cached', async () => {
    const { dir, paks, assets } = await cookedSample();
    const crate = path.join(dir, 'Content/Meshes/Crate.lasset');
    const good = await fsp.readFile(crate);
    await fsp.writeFile(crate, good.subarray(0, 40));
    // Touch another asset: its re-cook must be kept although the cook fails.
    const rock = path.join(dir, 'Content/Meshes/Rock.lasset');
    const later = new Date(Date.now() + 5_000);
    await fsp.utimes(rock, later, later);

    const r = await runCli(['cook', '--project', dir, '--json']);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout) as { ok: boolean; problems: Array<{ code: string; file?: string; severity: string; hint?: string }> };
    expect(s.ok).toBe(false);
    const errs = s.problems.filter((p) => p.severity === 'error').map((p) => ({ code: p.code, file: p.file && path.relative(dir, p.file), hint: p.hint }));
    // The truncated file is an error itself (the registry knew its GUID from the last cook, and
    // the roots reach it), and both maps that hard-import it say which file broke the reference.
    const had = `the package that had it cannot be read: ${crate} (PACKAGE_TRUNCATED)`;
    expect(errs).toEqual([
      { code: 'PACKAGE_TRUNCATED', file: path.join('Content', 'Meshes', 'Crate.lasset'), hint: undefined },
      { code: 'DEPENDENCY_MISSING', file: path.join('Content', 'Maps', 'Main.lasset'), hint: had },
      { code: 'DEPENDENCY_MISSING', file: path.join('Content', 'Maps', 'Main_Streaming.lasset'), hint: had },
    ]);
    expect(await readPaks(dir)).toEqual(paks);

    // Fixed: nothing is new work; the failed cook swept no output of what it could not reach.
    await fsp.writeFile(crate, good);
    const fixed = await cookProject({ projectDir: dir });
    expect(fixed).toMatchObject({ ok: true, cooked: 0, cached: assets });
    expect(fixed.paks.find((p) => p.chunk === 'Main')!.entries).toBe(21);
  }, 60_000);

  it('a mesh broken before any cook: its GUID is unknown, so the missing reference names it as the likely cause', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-failing-'));
    dirs.push(dir);
    await copySampleProject(dir);
    const crate = path.join(dir, 'Content/Meshes/Crate.lasset');
    await fsp.truncate(crate, 40);
    const s = await cookProject({ projectDir: dir });
    expect(s.ok).toBe(false);
    const missing = s.problems.filter((p) => p.code === 'DEPENDENCY_MISSING');
    expect(missing.length).toBeGreaterThan(0);
    for (const m of missing) expect(m.hint).toBe(`it may be in a package that cannot be read: ${crate}`);
  }, 60_000);
});
