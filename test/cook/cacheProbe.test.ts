/**
 * The no-op pass's fast cache check (CookCache.probe + HeldResults.setCachedHit) against the one
 * it stands in for (CookCache.check + cachedResult + HeldResults.set), on real output files: it
 * may only say "hit" where check says hit, it must see every change check sees (key parts, the
 * shipped path, an output deleted, resized, touched or replaced by a symlink), and what it holds
 * must read back as the same result.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedResult } from '../../cook/cookAsset.js';
import { CookCache, emptyHitView, prestatWanted, type CacheEntry } from '../../cook/cookCache.js';
import { LEAN_HEAP_ASSETS } from '../../src/util/leanHeap.js';
import { cookKeyFor, type CookKeyParts } from '../../cook/cookKey.js';
import { HeldResults } from '../../cook/heldResults.js';
import { tempDir } from './helpers.js';

const g = (n: number) => n.toString(16).padStart(32, '0');
const settings = { package: 'aaaaaaaaaaaaaaaa', texture: 'bbbbbbbbbbbbbbbb', text: 'text', encoder: 'cccccccccccccccc' };
const content = (n: number) => n.toString(16).padStart(16, '0');

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => fsp.rm(d, { recursive: true, force: true })));
  dirs = [];
});

interface Asset {
  guid: string;
  rel: string;
  kind: 'package' | 'text';
  hash: string;
  texture: boolean;
  classes?: string[];
  schema?: string;
}

/** The key parts the cook would want now for `a` (cookKey.ts), given what the entry remembers. */
function want(a: Asset) {
  return (texture: boolean, classes: readonly string[] | undefined): CookKeyParts =>
    cookKeyFor({ kind: a.kind, contentHash: a.hash, texture: texture || a.texture, schema: classes && a.schema }, settings).parts;
}

async function project(assets: Asset[]) {
  const root = await tempDir('lumina-probe-');
  dirs.push(root);
  const cookedDir = path.join(root, 'Saved', 'Cooked');
  const { cache } = await CookCache.load(path.join(root, 'Intermediates', 'CookCache.bin'), cookedDir);
  for (const [i, a] of assets.entries()) {
    const file = path.join(cookedDir, ...a.rel.split('/'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.alloc(100 + i, i));
    const st = fs.statSync(file);
    const entry: Omit<CacheEntry, 'key' | 'parts' | 'cookedSize' | 'cookedMtimeMs'> = {
      cookedFile: a.rel,
      rawSize: 1000 + i,
      xxh64: `00${i}0f00000000abc`.slice(0, 16).padEnd(16, '7'),
      sourceSize: 50 + i,
      strippedExports: i,
      nulledRefs: 2 * i,
      texture: a.texture,
      cookMs: i,
    };
    if (a.kind === 'package') entry.cookedXxh64 = `f${i}`.padStart(16, '0');
    if (a.classes) entry.classes = a.classes;
    cache.set(a.guid, cookKeyFor({ kind: a.kind, contentHash: a.hash, texture: a.texture, schema: a.classes && a.schema }, settings), entry, st);
  }
  return { root, cookedDir, cache };
}

/** Probe and check every asset as given now; the probe's hits must be check's hits with the same held result. */
function compare(cache: CookCache, cookedDir: string, assets: Asset[]): { probed: boolean[]; checked: boolean[] } {
  const records = assets.map((a) => ({ record: { guid: a.guid, virtualPath: `/${a.rel}` } }));
  const slow = new HeldResults(records, cookedDir);
  const fast = new HeldResults(records, cookedDir);
  const v = emptyHitView();
  const probed: boolean[] = [];
  const checked: boolean[] = [];
  for (const a of assets) {
    const output = path.join(cookedDir, ...a.rel.split('/'));
    const c = cache.check(a.guid, want(a), a.rel, output);
    const p = cache.probe(a.guid, want(a), a.rel, output, v) && fast.setCachedHit(a.guid, v);
    checked.push(c.hit);
    probed.push(p);
    if (p) {
      expect(c.hit, `probe said hit where check did not: ${a.rel}`).toBe(true);
      slow.set(a.guid, cachedResult((c as { entry: CacheEntry }).entry, output, 0, true));
      expect(fast.get(a.guid)).toEqual(slow.get(a.guid));
    }
  }
  return { probed, checked };
}

const base: Asset[] = [
  { guid: g(1), rel: 'Game/Meshes/Rock.lasset', kind: 'package', hash: content(1), texture: false },
  { guid: g(2), rel: 'Game/Textures/T_Rock.lasset', kind: 'package', hash: content(2), texture: true },
  { guid: g(3), rel: 'Game/Props/Crate.lasset', kind: 'package', hash: content(3), texture: false, classes: ['/Script/Game.CCrate', '/Script/Engine.CStaticMesh'], schema: 'dddddddddddddddd' },
  { guid: g(4), rel: 'Game/UI/Main.rml', kind: 'text', hash: content(4), texture: false },
  { guid: g(5), rel: 'Game/Props/Barrel.lasset', kind: 'package', hash: content(5), texture: false, classes: ['/Script/Game.CBarrel'], schema: 'unknown' },
];

describe('cache probe (the no-op pass)', () => {
  it('proves every hit check proves, with the same held result, fresh and after a snapshot reload', async () => {
    const { root, cookedDir, cache } = await project(base);
    expect(compare(cache, cookedDir, base).probed).toEqual([true, true, true, true, true]);
    await cache.compact();
    cache.close();
    const { cache: again } = await CookCache.load(path.join(root, 'Intermediates', 'CookCache.bin'), cookedDir);
    expect(compare(again, cookedDir, base).probed).toEqual([true, true, true, true, true]);
    again.close();
  });

  it('sees every change check sees: key parts, the shipped path, outputs deleted, resized, touched or replaced by a symlink', async () => {
    const { cookedDir, cache } = await project(base);
    const now: Asset[] = base.map((a) => ({ ...a }));
    now[0].hash = content(99); // source edited
    now[1].texture = false; // (the entry remembers the texture: the encoder part stays)
    now[2].schema = 'eeeeeeeeeeeeeeee'; // schema edited
    now[3].rel = 'Game/UI/Renamed.rml'; // moved: ships under a new path
    now[4].schema = undefined; // no schema covers it any more
    const r = compare(cache, cookedDir, now);
    expect(r.checked).toEqual([false, true, false, false, false]);
    expect(r.probed).toEqual([false, true, false, false, false]);

    const out = (i: number) => path.join(cookedDir, ...base[i].rel.split('/'));
    fs.rmSync(out(0));
    fs.writeFileSync(out(1), Buffer.alloc(7)); // another size
    const st = fs.statSync(out(2));
    fs.utimesSync(out(2), st.atime, new Date(st.mtimeMs + 5000)); // same size, touched
    fs.renameSync(out(3), `${out(3)}.real`);
    fs.symlinkSync(`${out(3)}.real`, out(3)); // the same bytes behind a symlink
    const after = compare(cache, cookedDir, base);
    expect(after.checked).toEqual([false, false, false, false, true]);
    expect(after.probed).toEqual([false, false, false, false, true]);
    cache.close();
  });

  it('leaves to check what it cannot compare in place (a non-ASCII path) and misses unknown assets', async () => {
    const odd: Asset[] = [{ guid: g(7), rel: 'Game/Props/Tür.lasset', kind: 'package', hash: content(7), texture: false }];
    const { cookedDir, cache } = await project(odd);
    const r = compare(cache, cookedDir, odd);
    expect(r).toEqual({ checked: [true], probed: [false] });
    expect(cache.probe(g(8), want(odd[0]), odd[0].rel, path.join(cookedDir, 'Game', 'Props', 'Tür.lasset'), emptyHitView())).toBe(false);
    cache.close();
  });
});

describe('cache probe with the outputs statted ahead (CookCache.prestatOutputs)', () => {
  const env = process.env.LUMINA_PRESTAT_OUTPUTS;
  afterEach(() => {
    if (env === undefined) delete process.env.LUMINA_PRESTAT_OUTPUTS;
    else process.env.LUMINA_PRESTAT_OUTPUTS = env;
  });
  /** Many assets, so a bit set for the wrong record would show. */
  const many: Asset[] = Array.from({ length: 40 }, (_, i) => ({ guid: g(100 + i), rel: `Game/Many/A${i}.lasset`, kind: 'package', hash: content(100 + i), texture: false }));

  it('vouches only for outputs that had their recorded size and mtime: deleted, resized, touched and symlinked ones are misses', async () => {
    process.env.LUMINA_PRESTAT_OUTPUTS = '1';
    const { cookedDir, cache } = await project(many);
    const out = (i: number) => path.join(cookedDir, ...many[i].rel.split('/'));
    fs.rmSync(out(3));
    // Another size with the mtime kept to the nanosecond (touch -r; fs.utimes rounds).
    execFileSync('touch', ['-r', out(10), `${out(10)}.stamp`]);
    fs.writeFileSync(out(10), Buffer.alloc(7));
    execFileSync('touch', ['-r', `${out(10)}.stamp`, out(10)]);
    const st = fs.statSync(out(17));
    fs.utimesSync(out(17), st.atime, new Date(st.mtimeMs + 5000));
    fs.renameSync(out(25), `${out(25)}.real`);
    fs.symlinkSync(`${out(25)}.real`, out(25));
    cache.prestatOutputs();
    await cache.prestatDone();
    const changed = new Set([3, 10, 17, 25]);
    const r = compare(cache, cookedDir, many);
    expect(r.probed).toEqual(many.map((_, i) => !changed.has(i)));
    // The thread statted the outputs as they were; the pass takes its bits without a stat of its
    // own: shown by an output that goes after the thread is done, which the probe does not see.
    fs.rmSync(out(30));
    const probe = () => cache.probe(many[30].guid, want(many[30]), many[30].rel, out(30), emptyHitView());
    expect(probe()).toBe(true);
    // Once the pass is over, every probe stats its output again.
    cache.endPrestat();
    expect(probe()).toBe(false);
    cache.close();
  });

  it('is dropped when the cache compacts (records move) and skipped below the threshold or when turned off', async () => {
    process.env.LUMINA_PRESTAT_OUTPUTS = '1';
    const { cookedDir, cache } = await project(many);
    cache.prestatOutputs();
    await cache.prestatDone();
    fs.rmSync(path.join(cookedDir, ...many[5].rel.split('/')));
    await cache.compact();
    expect(compare(cache, cookedDir, many).probed[5]).toBe(false);
    // 40 entries: below the threshold without the override, never with it off.
    for (const mode of [undefined, '0']) {
      if (mode === undefined) delete process.env.LUMINA_PRESTAT_OUTPUTS;
      else process.env.LUMINA_PRESTAT_OUTPUTS = mode;
      cache.prestatOutputs();
      await cache.prestatDone();
      fs.rmSync(path.join(cookedDir, ...many[6 + (mode === undefined ? 0 : 1)].rel.split('/')));
      expect(compare(cache, cookedDir, many).probed[6 + (mode === undefined ? 0 : 1)]).toBe(false);
    }
    cache.close();
  });

  it('is for projects from 32k entries up to a lean-heap one, where its thread costs memory the 1M cook has not to spare', () => {
    expect([20_000, 40_000, 100_000, LEAN_HEAP_ASSETS - 1, LEAN_HEAP_ASSETS, 552_000].map((n) => prestatWanted(n, undefined))).toEqual([false, true, true, true, false, false]);
    expect([40, 552_000].map((n) => prestatWanted(n, '1'))).toEqual([true, true]);
    expect([0, 100_000].map((n) => prestatWanted(n, '0'))).toEqual([false, false]);
  });
});
