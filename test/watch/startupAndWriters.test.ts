/**
 * The daemon's start-up and its place among writers: saves made while it starts all ship; its dev
 * pak is a patch pak over the chunk paks; a `cook` after it removes the dev pak it left; and one
 * writer per project (a cook beside a daemon, or beside another cook, is refused; a stale lock is not).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { Cooker } from '../../cook/Cooker.js';
import { SWEPT_MARKER_FILE } from '../../cook/cookedOutputs.js';
import { LOCK_FILE_NAME } from '../../cook/projectLock.js';
import { PakReader } from '../../pak/PakReader.js';
import { PAK_FLAG_PATCH } from '../../pak/pakFormat.js';
import { buildPackage, prop } from '../../src/format/packageBuilder.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { Daemon } from '../../watch/Daemon.js';
import { DEV_PAK_NAME } from '../../watch/DevPak.js';
import { daemonAndRoot, sleep, tempDir, waitFor } from './helpers.js';
import { G, makeProject, savePackage, shippedHas } from './project.js';
import { mulberry32 as rng } from '../helpers/rng.js';

describe('daemon start-up and writers', () => {
  const t = daemonAndRoot();

  for (const seed of [1, 2, 3]) {
    it(`every save made while the daemon starts ends up in the paks (seed ${seed})`, async () => {
      await initHash();
      t.root = await tempDir();
      const p = await makeProject(t.root);
      // Unreferenced filler makes the scan take a while, so saves land in it and in the start-up cook.
      for (let i = 0; i < 300; i++) {
        const guid = (0xf000 + i).toString(16).padStart(32, '0');
        await fsp.mkdir(path.join(p.content, 'Filler'), { recursive: true });
        await fsp.writeFile(path.join(p.content, 'Filler', `F${i}.lasset`), buildPackage({ exports: [{ guid, name: `F${i}`, className: '/Script/Engine.CStaticMesh', properties: [prop.int('N', i)] }] }));
      }
      const rand = rng(seed);
      const rock = path.join(p.content, 'Meshes', 'Rock.lasset');
      const menu = path.join(p.content, 'UI', 'Menu.rml');
      let lastRock = 'rock-v1';
      let lastMenu = 'menu-v1';
      const starting = Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
      let started = false;
      void starting.then(() => (started = true), () => (started = true));
      // Saves at seeded moments from the first tick of start-up until it has returned.
      for (let n = 0; !started || n < 3; n++) {
        if (rand() < 0.6) {
          lastRock = `rock-s${n}`;
          await savePackage(rock, 'Rock', G.rock, lastRock);
        } else {
          lastMenu = `menu-s${n}`;
          await fsp.writeFile(menu, `<rml>${lastMenu}</rml>`);
        }
        await sleep(Math.floor(rand() * 40));
        if (n > 400) break;
      }
      t.daemon = await starting;
      await t.daemon.whenIdle();
      await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', lastRock), `${lastRock} in the paks`);
      await waitFor(() => shippedHas(p.paks, '/Game/UI/Menu.rml', lastMenu), `${lastMenu} in the paks`);
    }, 60_000);
  }

  it("removes what a killed run left half-written under Saved and Intermediates, and keeps a live writer's temps", async () => {
    await initHash();
    t.root = await tempDir();
    const p = await makeProject(t.root);
    expect((await cookProject({ projectDir: p.dir, report: false })).ok).toBe(true);
    // A run killed mid-write: it removed the swept marker before its first write into Saved/Cooked
    // (cookAsset.ts beforeCookedWrite), then left temps there and beside the paks and caches.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const cooked = path.join(p.dir, 'Saved', 'Cooked', 'Game', 'Meshes');
    const inter = path.join(p.dir, 'Intermediates');
    await fsp.rm(path.join(inter, SWEPT_MARKER_FILE), { force: true });
    const dead = [
      path.join(cooked, `Rock.lasset.lctmp-${deadPid}-aa`),
      path.join(cooked, `Gone.lasset.lctmp-${deadPid}-ab`),
      path.join(p.paks, `Main.pak.lctmp-${deadPid}-ac`),
      path.join(inter, `CookCache.bin.lctmp-${deadPid}-ad`),
    ];
    const live = path.join(p.paks, `Other.pak.lctmp-${process.pid}-ae`);
    for (const f of [...dead, live]) await fsp.writeFile(f, 'half-written');
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    await t.daemon.whenIdle();
    expect(dead.filter((f) => fs.existsSync(f))).toEqual([]);
    expect(fs.existsSync(live)).toBe(true);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v1')).toBe(true);
  }, 60_000);

  it('writes Dev.pak as a patch over the chunk paks, and a cook after the daemon removes it', async () => {
    await initHash();
    t.root = await tempDir();
    const p = await makeProject(t.root);
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v2');
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v2'), 'rock-v2');
    await t.daemon.whenIdle();
    const dev = await PakReader.open(path.join(p.paks, DEV_PAK_NAME));
    const main = await PakReader.open(path.join(p.paks, 'Main.pak'));
    try {
      expect(dev.header.flags & PAK_FLAG_PATCH).toBe(PAK_FLAG_PATCH);
      // One chunk pak below it: its base is that pak's TOC hash.
      expect(hashHex(dev.toc.baseTocHash)).toBe(hashHex(main.tocHash));
    } finally {
      await dev.close();
      await main.close();
    }

    // The daemon stops with its dev pak in place; then the content changes again and a cook runs.
    await t.daemon.stop();
    t.daemon = undefined;
    await savePackage(path.join(p.content, 'Meshes', 'Rock.lasset'), 'Rock', G.rock, 'rock-v3');
    const s = await cookProject({ projectDir: p.dir });
    expect(s.ok).toBe(true);
    expect(fs.existsSync(path.join(p.paks, DEV_PAK_NAME))).toBe(false);
    expect(await shippedHas(p.paks, '/Game/Meshes/Rock.lasset', 'rock-v3')).toBe(true);
  }, 60_000);

  it('one writer per project: a cook beside a daemon or a cook is refused, a stale lock is taken over', async () => {
    await initHash();
    t.root = await tempDir();
    const p = await makeProject(t.root);
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    const lockFile = path.join(p.dir, 'Intermediates', LOCK_FILE_NAME);
    await expect(cookProject({ projectDir: p.dir })).rejects.toMatchObject({
      code: 'PROJECT_LOCKED',
      message: `a watch daemon (pid ${process.pid}) is writing this project`,
      file: lockFile,
      hint: 'stop it (lumina-cook daemon stop), or ask it to cook (lumina-cook daemon cook)',
    });
    await t.daemon.stop();
    t.daemon = undefined;
    expect(fs.existsSync(lockFile)).toBe(false);

    const first = await Cooker.open({ projectDir: p.dir });
    await expect(Cooker.open({ projectDir: p.dir })).rejects.toMatchObject({ code: 'PROJECT_LOCKED', message: `another cook (pid ${process.pid}) is writing this project` });
    first.close();

    // A lock left by a process that is gone (kill -9) is stale.
    await fsp.writeFile(lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, holder: 'cook', startedAt: '' }));
    expect((await cookProject({ projectDir: p.dir })).ok).toBe(true);
    expect(fs.existsSync(lockFile)).toBe(false);
  }, 60_000);
});
