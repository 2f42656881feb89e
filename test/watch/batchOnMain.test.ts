/**
 * A daemon batch of a few edits cooks on the main thread when no cook worker runs (a session that
 * opened on a cook cache starts none): the first edit after a daemon's start or project switch
 * waited for two workers to start, each loading the cook's modules, to cook one file.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { Cooker } from '../../cook/Cooker.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { initHash } from '../../src/util/hash.js';
import { IncrementalCook } from '../../watch/IncrementalCook.js';
import { tempDir } from './helpers.js';
import { G, makeProject, savePackage, shippedHas } from './project.js';

beforeAll(initHash);

describe('IncrementalCook batch with the cook workers not running', () => {
  let root: string | undefined;
  let cooker: Cooker | undefined;
  let registry: AssetRegistry | undefined;
  afterEach(async () => {
    cooker?.close();
    registry?.close();
    cooker = registry = undefined;
    if (root) await fsp.rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it('cooks a few edited files on this thread and ships them in the dev pak, starting no worker', async () => {
    root = await tempDir();
    const p = await makeProject(root);
    const first = await Cooker.open({ projectDir: p.dir });
    expect((await first.cook()).ok).toBe(true);
    first.close();

    // As the daemon opens a session: its registry, a Cooker on it, the no-op start-up cook.
    const config = loadConfig(p.dir).config;
    registry = await AssetRegistry.open({ config, keepLastGood: true });
    await registry.scan();
    cooker = await Cooker.open({ config, registry, lock: false });
    expect((await cooker.cook()).cooked).toBe(0);
    const cook = new IncrementalCook(cooker);
    cook.reset();

    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v2');
    await fsp.writeFile(path.join(p.content, 'UI', 'Menu.rml'), '<rml>menu-v2</rml>');
    const { change } = await registry.updateFiles([path.join(p.content, 'Meshes', 'Rock.lasset'), path.join(p.content, 'UI', 'Menu.rml')]);
    const r = await cook.runBatch(change);
    expect(r).toMatchObject({ cooked: 2, failed: [], devPakWritten: true });
    expect(cooker.workersStarted).toBe(0);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v2')).toBe(true);
    expect(await shippedHas(p.paks, '/Game/UI/Menu.rml', 'menu-v2')).toBe(true);
  });
});
