import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../src/log/events.js';
import { decodeCookedRegistry } from '../../src/format/cookedRegistry.js';
import { Daemon } from '../../watch/Daemon.js';
import { DEV_PAK_NAME } from '../../watch/DevPak.js';
import { runDaemonClient } from '../../cli/commands/watch.js';
import { PassThrough } from 'node:stream';
import { daemonAndRoot, tempDir, waitFor } from './helpers.js';
import { G, makeProject, readShipped, savePackage, shippedHas, type TestProject } from './project.js';

describe('Daemon end to end', () => {
  const t = daemonAndRoot();

  async function start(opts: { consolidateAfterMs?: number } = {}): Promise<{ p: TestProject; events: ProgressEvent[] }> {
    t.root = await tempDir();
    const p = await makeProject(t.root);
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: opts.consolidateAfterMs ?? 0 });
    const events: ProgressEvent[] = [];
    t.daemon.bus.on((e) => events.push(e));
    return { p, events };
  }

  const batchEnds = (events: ProgressEvent[]) => events.filter((e) => e.type === 'BATCH_END');

  it('cooks at start, then re-cooks only an edited package into the dev pak', async () => {
    const { p, events } = await start();
    expect(fs.existsSync(path.join(p.paks, 'Main.pak'))).toBe(true);
    expect(fs.existsSync(path.join(p.paks, DEV_PAK_NAME))).toBe(false);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v1')).toBe(true);
    expect(await shippedHas(p.paks, '/Game/UI/Menu.rml', 'menu-v1')).toBe(true);

    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v2');
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v2'), 'rock-v2 in the paks');
    await t.daemon!.whenIdle();
    expect(fs.existsSync(path.join(p.paks, DEV_PAK_NAME))).toBe(true);
    // Main imports Rock by GUID: its cooked bytes did not change, so it is not re-cooked.
    expect(events.filter((e) => e.type === 'COOK_START').map((e) => (e as { asset: string }).asset)).toEqual(['/Game/Meshes/Rock.lasset']);
    expect(batchEnds(events)).toEqual([{ type: 'BATCH_END', batch: 1, ms: expect.any(Number), ok: true, changed: 1, removed: 0, cooked: 1 }]);
    expect(t.daemon!.status()).toMatchObject({ state: 'idle', queue: 0, batches: 1, lastCook: { id: 'batch-1', kind: 'batch', ok: true } });

    // A text asset edited in place.
    await fsp.writeFile(path.join(p.content, 'UI', 'Menu.rml'), '<rml>menu-v2</rml>');
    await waitFor(() => shippedHas(p.paks, '/Game/UI/Menu.rml', 'menu-v2'), 'menu-v2 in the paks');
  });

  it('ships a newly referenced package, and a deletion removes it from registry and paks', async () => {
    const { p } = await start();
    await savePackage(path.join(p.content, 'Meshes', 'Tree.lasset'), 'Tree', G.tree, 'tree-v1');
    await savePackage(path.join(p.content, 'Maps', 'Main.lasset'), 'Main', G.main, 'main-v2', [G.rock, G.tree]);
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Tree.lasset', 'tree-v1'), 'tree in the paks');
    expect(await shippedHas(p.paks, '/Game/Maps/Main.lasset', 'main-v2')).toBe(true);
    const shippedGuids = async () => decodeCookedRegistry((await readShipped(p.paks, '/AssetRegistry.bin'))!, 'AssetRegistry.bin').assets.map((a) => a.guid);
    expect(await shippedGuids()).toEqual([G.main, G.rock, G.tree]);

    await fsp.rm(path.join(p.content, 'Meshes', 'Tree.lasset'));
    await savePackage(path.join(p.content, 'Maps', 'Main.lasset'), 'Main', G.main, 'main-v3', [G.rock]);
    await waitFor(async () => (await readShipped(p.paks, '/Game/Meshes/Tree.lasset')) === undefined, 'tree gone from the paks');
    // The delete and the save may arrive in one batch or two (the watcher coalesces by time
    // window), in either order relative to the paks changing: wait for each outcome.
    await waitFor(() => t.daemon!.registry.get(G.tree) === undefined, 'tree gone from the registry');
    await waitFor(() => shippedHas(p.paks, '/Game/Maps/Main.lasset', 'main-v3'), 'main-v3 in the paks');
    await t.daemon!.whenIdle();
    expect(await shippedGuids()).toEqual([G.main, G.rock]);
  });

  it('a rename moves the entry: the old path is gone, the new one ships the same GUID', async () => {
    const { p } = await start();
    const ui = path.join(p.content, 'UI');
    await fsp.rename(path.join(ui, 'Menu.rml.lmeta'), path.join(ui, 'Title.rml.lmeta'));
    await fsp.rename(path.join(ui, 'Menu.rml'), path.join(ui, 'Title.rml'));
    await waitFor(() => shippedHas(p.paks, '/Game/UI/Title.rml', 'menu-v1'), 'renamed text asset in the paks');
    await waitFor(async () => (await readShipped(p.paks, '/Game/UI/Menu.rml')) === undefined, 'old path gone');
    await t.daemon!.whenIdle();
    expect(t.daemon!.registry.get(G.menu)?.virtualPath).toBe('/Game/UI/Title.rml');

    // A package is renamed by its editor: new file (export renamed, same GUID), old file removed.
    await savePackage(path.join(p.content, 'Meshes', 'Boulder.lasset'), 'Boulder', G.rock, 'rock-v1');
    await fsp.rm(path.join(p.content, 'Meshes', 'Rock.lasset'));
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Boulder.lasset', 'rock-v1'), 'renamed package in the paks');
    await waitFor(async () => (await readShipped(p.paks, '/Game/Meshes/Rock.lasset')) === undefined, 'old package path gone');
    await t.daemon!.whenIdle();
    expect(t.daemon!.registry.get(G.rock)?.virtualPath).toBe('/Game/Meshes/Boulder.lasset');
  });

  it('folds the dev pak back into the chunk paks when idle', async () => {
    const { p, events } = await start({ consolidateAfterMs: 150 });
    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v2');
    // Not "wait until Dev.pak exists": on a loaded machine it can be written and folded away
    // between two polls (150 ms of quiet), and the wait then never ends. Events are not missed.
    await waitFor(() => batchEnds(events).some((e) => e.type === 'BATCH_END' && e.cooked === 1), 'the batch cooking rock-v2');
    await waitFor(() => events.some((e) => e.type === 'PAK_WRITTEN' && e.chunk === 'Main'), 'the fold rewriting Main.pak');
    await t.daemon!.whenIdle();
    expect(fs.existsSync(path.join(p.paks, DEV_PAK_NAME))).toBe(false);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v2')).toBe(true);
    expect(t.daemon!.status().lastCook).toMatchObject({ kind: 'full', ok: true });
  });

  it('a file that turns corrupt keeps its last good version shipping, with the error shown until it is fixed', async () => {
    const { p, events } = await start();
    const rock = path.join(p.content, 'Meshes', 'Rock.lasset');
    const good = await fsp.readFile(rock);
    await fsp.writeFile(rock, good.subarray(0, 30));
    await waitFor(() => t.daemon!.status().errors.some((x) => x.file === rock), 'the error in /status');
    await t.daemon!.whenIdle();
    expect(t.daemon!.status().errors).toEqual([expect.objectContaining({ code: 'PACKAGE_TRUNCATED', file: rock, hint: expect.stringContaining('last good') })]);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v1')).toBe(true);
    expect(t.daemon!.registry.get(G.rock)).toBeDefined();
    // Nothing was re-cooked or tombstoned for it.
    expect(events.filter((e) => e.type === 'COOK_START')).toEqual([]);

    // Another save, still corrupt: the error stays.
    await fsp.writeFile(rock, good.subarray(0, 31));
    await waitFor(() => batchEnds(events).length >= 2, 'the second batch');
    await t.daemon!.whenIdle();
    expect(t.daemon!.status().errors).toHaveLength(1);

    await savePackage(rock, 'Rock', G.rock, 'rock-v3');
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v3'), 'rock-v3 in the paks');
    await t.daemon!.whenIdle();
    expect(t.daemon!.status().errors).toEqual([]);
  });

  it('POST /cook joins a queued full cook; stop removes daemon.json', async () => {
    const { p } = await start();
    const { url, token } = t.daemon!.control;
    const post = () => fetch(`${url}/cook`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    const [a, b] = await Promise.all([post(), post()]);
    expect(a).toEqual({ id: 'cook-2', joined: false });
    expect(b).toEqual({ id: 'cook-2', joined: true });
    await t.daemon!.whenIdle();
    expect(t.daemon!.status().lastCook).toMatchObject({ id: 'cook-2', kind: 'full', ok: true });
    const info = path.join(p.dir, 'Intermediates', 'daemon.json');
    expect(fs.existsSync(info)).toBe(true);
    expect(await t.daemon!.stop()).toEqual({ finished: true });
    expect(fs.existsSync(info)).toBe(false);
  });

  it('lumina-cook daemon status|cook|url|stop talks to the running daemon', async () => {
    const { p } = await start();
    const out = new PassThrough();
    let text = '';
    out.on('data', (d) => (text += d));
    expect(await runDaemonClient({ action: 'status', project: p.dir, json: true }, out)).toMatchObject({ state: 'idle', pid: process.pid, queue: 0 });
    expect(JSON.parse(text)).toMatchObject({ state: 'idle', project: p.dir });
    text = '';
    await runDaemonClient({ action: 'cook', project: p.dir }, out);
    expect(text).toBe('started cook-2\n');
    text = '';
    // `daemon url`: a fresh one-time login link for the status page, usable once.
    await runDaemonClient({ action: 'url', project: p.dir }, out);
    const login = text.trim();
    expect(login).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${t.daemon!.control.port}/login\\?token=[0-9a-f]{48}$`));
    const first = await fetch(login, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await fetch(login, { redirect: 'manual' })).status).toBe(403);
    text = '';
    await runDaemonClient({ action: 'stop', project: p.dir }, out);
    expect(text).toBe('stopping\n');
    expect(await t.daemon!.stopped).toEqual({ finished: true });
    await expect(runDaemonClient({ action: 'status', project: p.dir }, out)).rejects.toMatchObject({
      code: 'DAEMON_UNAVAILABLE',
      message: 'no daemon is running for this project (no daemon.json)',
    });
  });

  it('refuses to start a second daemon on the same project', async () => {
    const { p } = await start();
    await expect(Daemon.start({ projectDir: p.dir })).rejects.toMatchObject({
      code: 'DAEMON_RUNNING',
      message: `a watch daemon (pid ${process.pid}) is already running for this project`,
    });
  });

  it('switching projects and back watches each mount once', async () => {
    const { p, events } = await start();
    const other = await makeProject(path.join(t.root!, 'Other'));
    await t.daemon!.switchProject(other.dir);
    expect(fs.existsSync(path.join(p.dir, 'Intermediates', 'daemon.json'))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(other.dir, 'Intermediates', 'daemon.json'), 'utf8')).project).toBe(other.dir);
    // The old project is no longer watched.
    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-old-project');
    await t.daemon!.switchProject(p.dir);
    const before = batchEnds(events).length;
    expect(t.daemon!.registry.size).toBe(3);
    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v9');
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v9'), 'rock-v9');
    await t.daemon!.whenIdle();
    const after = batchEnds(events).slice(before);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ changed: 1, cooked: 1 });
    expect(t.daemon!.registry.size).toBe(3);
  });
});
