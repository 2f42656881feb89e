/**
 * The cook cache's store: packed binary snapshot + JSON-lines journal. Entries survive a reload
 * exactly (every field), a torn journal tail and a damaged snapshot are handled as the module says,
 * and a cache written by an older version (CookCache.json) is read once and replaced.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_FILE_NAME, CookCache, JOURNAL_FILE_NAME, LEGACY_CACHE_FILE_NAME, type CacheEntry } from '../../cook/cookCache.js';
import { initHash } from '../../src/util/hash.js';
import { tempDir } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function setup(): Promise<{ file: string; cooked: string; dir: string }> {
  const dir = await tempDir();
  dirs.push(dir);
  const cooked = path.join(dir, 'Saved/Cooked');
  await fsp.mkdir(path.join(cooked, 'Game'), { recursive: true });
  await fsp.mkdir(path.join(dir, 'Intermediates'), { recursive: true });
  return { file: path.join(dir, 'Intermediates', CACHE_FILE_NAME), cooked, dir };
}

const hex = (i: number, n = 16) => i.toString(16).padStart(n, '0');

/** Entry i with an output file written for it; a few odd shapes among them (non-hex parts, no classes, unicode path). */
function entryFor(cooked: string, i: number): { guid: string; key: { key: string; parts: CacheEntry['parts'] }; rest: Omit<CacheEntry, 'key' | 'parts' | 'cookedSize' | 'cookedMtimeMs'> } {
  const cookedFile = i % 7 === 0 ? `Game/Ünïcode ${i}.lasset` : `Game/A_${i}.lasset`;
  fs.writeFileSync(path.join(cooked, cookedFile), Buffer.alloc(10 + i));
  const parts: CacheEntry['parts'] = { content: hex(i * 977), format: '1', settings: i % 3 === 0 ? 'text' : hex(42) };
  if (i % 2) parts.encoder = hex(7);
  return {
    guid: i % 5 === 0 ? `odd-guid-${i}` : hex(i, 32),
    key: { key: hex(i + 1), parts },
    rest: {
      cookedFile,
      rawSize: 100 + i,
      xxh64: hex(i * 31),
      ...(i % 4 ? { cookedXxh64: hex(i * 17) } : {}),
      sourceSize: 50 + i,
      strippedExports: i % 3,
      nulledRefs: i % 2,
      texture: i % 2 === 1,
      ...(i % 3 ? { classes: ['/Script/Engine.CTexture', `/Script/Game.C${i % 4}`] } : {}),
      ...(i % 6 ? { cookMs: i * 1.5 } : {}),
    },
  };
}

describe('cook cache store', () => {
  it('a compacted snapshot and the journal after it give back every entry exactly', async () => {
    const { file, cooked } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const want = new Map<string, CacheEntry>();
    const made = Array.from({ length: 300 }, (_, i) => entryFor(cooked, i));
    for (const e of made) want.set(e.guid, cache.set(e.guid, e.key, e.rest));
    cache.delete(made[10].guid);
    want.delete(made[10].guid);
    cache.setPak('Main.pak', { fingerprint: 'abc', size: 123, entries: 4 });
    await cache.save(true);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.statSync(path.join(path.dirname(file), JOURNAL_FILE_NAME)).size).toBe(0);
    // After the snapshot: an overwrite and a delete that only the journal has.
    const e3 = made[3];
    want.set(e3.guid, cache.set(e3.guid, { key: hex(999), parts: { content: hex(999), format: '1' } }, { ...e3.rest, rawSize: 5 }));
    cache.delete(made[11].guid);
    want.delete(made[11].guid);
    cache.close();

    const { cache: again, warning } = await CookCache.load(file, cooked);
    expect(warning).toBeUndefined();
    expect(again.size).toBe(want.size);
    for (const [guid, e] of want) expect(again.peek(guid)).toEqual(e);
    // cookMs read alone (stepping over every other field) is the decoded entry's.
    for (const [guid, e] of want) expect(again.cookMs(guid)).toBe(e.cookMs);
    expect(again.getPak('Main.pak')).toEqual({ fingerprint: 'abc', size: 123, entries: 4 });
    const e5 = made[5];
    const hit = again.check(e5.guid, () => ({ ...e5.key.parts }), e5.rest.cookedFile);
    expect(hit).toMatchObject({ hit: true });
    // Compacting again (with garbage in the arena) keeps the same entries.
    await again.compact();
    again.close();
    const { cache: third } = await CookCache.load(file, cooked);
    for (const [guid, e] of want) expect(third.peek(guid)).toEqual(e);
    third.close();
  });

  it('a check compares every stored part: another value, a part more or a part less is a miss naming it', async () => {
    const { file, cooked } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const e = entryFor(cooked, 3); // parts content, format, settings
    cache.set(e.guid, e.key, e.rest);
    const check = (parts: CacheEntry['parts']) => cache.check(e.guid, () => parts, e.rest.cookedFile);
    expect(check({ ...e.key.parts })).toMatchObject({ hit: true });
    expect(check({ ...e.key.parts, settings: hex(43) })).toEqual({ hit: false, reason: 'settings' });
    expect(check({ ...e.key.parts, schema: hex(1) })).toEqual({ hit: false, reason: 'schema' });
    const { settings: _, ...less } = e.key.parts;
    expect(check(less)).toEqual({ hit: false, reason: 'settings' });
    // A moved asset, then an output gone: both 'output'.
    expect(cache.check(e.guid, () => ({ ...e.key.parts }), 'Game/Elsewhere.lasset')).toEqual({ hit: false, reason: 'output' });
    fs.rmSync(path.join(cooked, e.rest.cookedFile));
    expect(check({ ...e.key.parts })).toEqual({ hit: false, reason: 'output' });
    cache.close();
  });

  it('a torn last journal line is cut off; the lines before it are kept', async () => {
    const { file, cooked } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const a = entryFor(cooked, 1);
    const b = entryFor(cooked, 2);
    cache.set(a.guid, a.key, a.rest);
    cache.set(b.guid, b.key, b.rest);
    cache.close();
    const journal = path.join(path.dirname(file), JOURNAL_FILE_NAME);
    const full = fs.readFileSync(journal);
    fs.writeFileSync(journal, full.subarray(0, full.length - 5));
    const { cache: again, warning } = await CookCache.load(file, cooked);
    expect(warning).toBeUndefined();
    expect(again.peek(a.guid)).toBeDefined();
    expect(again.peek(b.guid)).toBeUndefined();
    expect(fs.readFileSync(journal).toString('utf8').endsWith('\n')).toBe(true);
    again.close();
  });

  it('a damaged snapshot is a CACHE_INVALID warning naming it, an empty cache, and its journal is dropped', async () => {
    const { file, cooked } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    for (let i = 0; i < 20; i++) {
      const e = entryFor(cooked, i);
      cache.set(e.guid, e.key, e.rest);
    }
    await cache.save(true);
    const e = entryFor(cooked, 30);
    cache.set(e.guid, e.key, e.rest);
    cache.close();
    const bytes = fs.readFileSync(file);
    bytes[Math.floor(bytes.length / 2)] ^= 0x55;
    fs.writeFileSync(file, bytes);
    const { cache: again, warning } = await CookCache.load(file, cooked);
    expect(warning).toMatchObject({ code: 'CACHE_INVALID', file });
    expect(warning!.message).toMatch(/checksum/);
    expect(again.size).toBe(0);
    expect(fs.existsSync(path.join(path.dirname(file), JOURNAL_FILE_NAME))).toBe(false);
    // A truncated one too.
    fs.writeFileSync(file, bytes.subarray(0, 10));
    expect((await CookCache.load(file, cooked)).warning).toMatchObject({ code: 'CACHE_INVALID', file });
  });

  it('reads a CookCache.json of the version before, then replaces it with the binary snapshot', async () => {
    const { file, cooked } = await setup();
    const a = entryFor(cooked, 4);
    const st = fs.statSync(path.join(cooked, a.rest.cookedFile));
    const entry: CacheEntry = { key: a.key.key, parts: a.key.parts, ...a.rest, cookedSize: st.size, cookedMtimeMs: st.mtimeMs };
    const legacy = path.join(path.dirname(file), LEGACY_CACHE_FILE_NAME);
    fs.writeFileSync(legacy, JSON.stringify({ version: 3, formatVersion: 1, entries: { [a.guid]: entry }, paks: { 'Main.pak': { fingerprint: 'f', size: 1, entries: 1 } } }));
    const { cache, warning } = await CookCache.load(file, cooked);
    expect(warning).toBeUndefined();
    expect(cache.peek(a.guid)).toEqual(entry);
    expect(cache.getPak('Main.pak')).toEqual({ fingerprint: 'f', size: 1, entries: 1 });
    await cache.save();
    cache.close();
    expect(fs.existsSync(legacy)).toBe(false);
    expect(fs.existsSync(file)).toBe(true);
    const { cache: again } = await CookCache.load(file, cooked);
    expect(again.peek(a.guid)).toEqual(entry);
    again.close();
  });

  it('a compaction with no dead record writes the arena as it is: the same snapshot as packing a copy, fresh and after a loaded snapshot', async () => {
    // The same size and mtime everywhere, so caches in different folders hold the same bytes.
    const stat = { size: 10, mtimeMs: 1_700_000_000_000.25 };
    const fill = (cache: CookCache, cooked: string, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const e = entryFor(cooked, i);
        cache.set(e.guid, e.key, e.rest, stat);
      }
    };
    /** Set entry i again with the same fields: its first record is dead, the index order unchanged. */
    const again = (cache: CookCache, cooked: string, i: number) => {
      const e = entryFor(cooked, i);
      cache.set(e.guid, e.key, e.rest, stat);
    };
    const built = async (from: number, to: number, withDead: boolean, base?: Buffer) => {
      const { file, cooked } = await setup();
      if (base) await fsp.writeFile(file, base);
      const { cache } = await CookCache.load(file, cooked);
      if (base) expect(cache.pending).toBe(0);
      fill(cache, cooked, from, to);
      if (withDead) again(cache, cooked, from);
      await cache.compact();
      cache.close();
      return { bytes: await fsp.readFile(file), file, cooked };
    };
    // A fresh arena (a cold cook's).
    const packed = await built(0, 200, true);
    const asIs = await built(0, 200, false);
    expect(asIs.bytes.equals(packed.bytes)).toBe(true);
    // An arena that is a loaded snapshot (its records start after the head), with records added.
    const packed2 = await built(200, 300, true, asIs.bytes);
    const asIs2 = await built(200, 300, false, asIs.bytes);
    expect(asIs2.bytes.byteLength).toBeGreaterThan(asIs.bytes.byteLength);
    expect(asIs2.bytes.equals(packed2.bytes)).toBe(true);
    // And it loads back whole.
    const { cache } = await CookCache.load(asIs2.file, asIs2.cooked);
    for (let i = 0; i < 300; i++) {
      const e = entryFor(asIs2.cooked, i);
      expect(cache.peek(e.guid)).toMatchObject({ key: e.key.key, ...e.rest, cookedSize: 10 });
    }
    cache.close();
  });
});
