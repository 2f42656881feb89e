/**
 * The shipping workflow through the real CLI: cook a release, change content, build a patch from
 * the release manifest alone, and check that mounting base + patch reads exactly what a fresh
 * full cook of the new content holds, path by path and byte by byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MountedPaks } from '../../pak/MountedPaks.js';
import { initHash } from '../../src/util/hash.js';
import { buildPackage, prop } from '../../src/format/packageBuilder.js';
import { REPO, runCli } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let root: string;
let project: string;

beforeAll(async () => {
  await initHash();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-release-'));
  project = path.join(root, 'project');
  await copySampleProject(project);
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function readAll(paks: string[]): Promise<Map<string, Buffer>> {
  const m = await MountedPaks.mount(paks);
  try {
    const out = new Map<string, Buffer>();
    for (const p of await m.list()) out.set(p, Buffer.from(await m.read(p)));
    return out;
  } finally {
    await m.close();
  }
}

describe('cook --release, then patch', () => {
  it('base + patch mounts to exactly the new content', async () => {
    const cook = await runCli(['cook', '--project', project, '--release', '1.0', '--ci', '--json']);
    expect(cook.code, cook.stderr).toBe(0);
    // --json: every stderr line is a JSON log record.
    for (const line of cook.stderr.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    const release = path.join(project, 'Saved/Releases/1.0');
    const manifest = JSON.parse(await fs.readFile(path.join(release, 'release.json'), 'utf8'));
    expect(manifest.name).toBe('1.0');
    const basePaks = [path.join(release, 'Main.pak'), path.join(release, 'Foliage.pak')];

    // Change a text asset, delete the streamed sub-level and the mesh only it places (and with them
    // what only they reached; Main's soft reference to the sub-level is a warning, a missing Hard
    // dependency would fail the cook), add a new package.
    const menu = path.join(project, 'Content/UI/MainMenu.rml');
    await fs.writeFile(menu, `${await fs.readFile(menu, 'utf8')}\n<!-- patched -->\n`);
    await fs.rm(path.join(project, 'Content/Maps/Main_Streaming.lasset'));
    await fs.rm(path.join(project, 'Content/Meshes/Boulder.lasset'));
    await fs.writeFile(
      path.join(project, 'Content/Data/Balance.lasset'),
      buildPackage({
        exports: [{ guid: 'b'.repeat(32), name: 'Balance', className: '/Script/Engine.CDataAsset', assetFlags: 1, properties: [prop.int('Lives', 3)] }],
      }),
    );
    // The patch must not need the old cooked tree.
    await fs.rm(path.join(project, 'Saved/Cooked'), { recursive: true });

    const patchFile = path.join(root, 'Patch.pak');
    const patch = await runCli(['patch', '--project', project, '--base', release, '--out', patchFile, '--json']);
    expect(patch.code, patch.stderr).toBe(0);
    const summary = JSON.parse(patch.stdout);
    expect(summary.added).toContain('/Game/Data/Balance.lasset');
    expect(summary.changed).toContain('/Game/UI/MainMenu.rml');
    expect(summary.removed).toContain('/Game/Meshes/Boulder.lasset');
    expect(summary.removed).toContain('/Game/Maps/Main_Streaming.lasset');

    // The outside reader (written from FORMAT.md alone) sees a patch pak over the base's TOC.
    const outside = JSON.parse(execFileSync('python3', [path.join(REPO, 'test/conformance/read_lumina.py'), patchFile]).toString());
    expect(outside.paks[patchFile]).toMatchObject({ patch: true, base: summary.baseTocHash, priority: 101 });

    const verify = await runCli(['pak', 'verify', ...basePaks, patchFile]);
    expect(verify.code, verify.stderr).toBe(0);

    const patched = await readAll([...basePaks, patchFile]);
    const fresh = await readAll([path.join(project, 'Saved/Paks/Main.pak'), path.join(project, 'Saved/Paks/Foliage.pak')]);
    expect([...patched.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [p, bytes] of fresh) expect(patched.get(p)!.equals(bytes), p).toBe(true);
    expect(patched.has('/Game/Meshes/Boulder.lasset')).toBe(false);
    // Three CLI processes in a row (cook, patch, pak verify), each allowed runCli's 60 s: the
    // suite's 60 s default for the whole test cut it short on a loaded machine (load ~30) while
    // every process was still within its own limit.
  }, 180_000);
});
