/**
 * The cook cache's store: packed binary snapshot + binary journal (cookJournal.ts). Entries survive a reload
 * exactly (every field), a torn or damaged journal tail and a damaged snapshot are handled as the
 * module says, and a cache written by an older version (CookCache.json, a JSON-lines journal) is
 * read once and replaced.
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

async function setup(): Promise<{ file: string; cooked: string; dir: string; journal: string }> {
  const dir = await tempDir();
  dirs.push(dir);
  const cooked = path.join(dir, 'Saved/Cooked');
  await fsp.mkdir(path.join(cooked, 'Game'), { recursive: true });
  await fsp.mkdir(path.join(dir, 'Intermediates'), { recursive: true });
  return { file: path.join(dir, 'Intermediates', CACHE_FILE_NAME), cooked, dir, journal: path.join(dir, 'Intermediates', JOURNAL_FILE_NAME) };
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
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const want = new Map<string, CacheEntry>();
    const made = Array.from({ length: 300 }, (_, i) => entryFor(cooked, i));
    for (const e of made) want.set(e.guid, cache.set(e.guid, e.key, e.rest));
    cache.delete(made[10].guid);
    want.delete(made[10].guid);
    cache.setPak('Main.pak', { fingerprint: 'abc', size: 123, entries: 4 });
    await cache.save(true);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.statSync(journal).size).toBe(0);
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

  it('a torn last journal frame is cut off; the frames before it are kept, and appends follow them', async () => {
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const [a, b, c] = [entryFor(cooked, 1), entryFor(cooked, 2), entryFor(cooked, 3)];
    const wantA = cache.set(a.guid, a.key, a.rest);
    const afterA = fs.statSync(journal).size;
    cache.set(b.guid, b.key, b.rest);
    cache.close();
    const full = fs.readFileSync(journal);
    for (const cut of [5, full.length - afterA - 4]) {
      fs.writeFileSync(journal, full.subarray(0, full.length - cut));
      const { cache: again, warning } = await CookCache.load(file, cooked);
      expect(warning).toBeUndefined();
      expect(again.peek(a.guid)).toEqual(wantA);
      expect(again.peek(b.guid)).toBeUndefined();
      expect(fs.statSync(journal).size).toBe(afterA);
      again.close();
    }
    // The next append starts where the good frames end.
    const { cache: more } = await CookCache.load(file, cooked);
    const wantC = more.set(c.guid, c.key, c.rest);
    more.close();
    const { cache: last } = await CookCache.load(file, cooked);
    expect([last.peek(a.guid), last.peek(b.guid), last.peek(c.guid)]).toEqual([wantA, undefined, wantC]);
    expect(last.pending).toBe(2);
    last.close();
  });

  it('a journal frame whose checksum does not match ends the journal there', async () => {
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const [a, b, c] = [entryFor(cooked, 1), entryFor(cooked, 2), entryFor(cooked, 3)];
    cache.set(a.guid, a.key, a.rest);
    const afterA = fs.statSync(journal).size;
    cache.set(b.guid, b.key, b.rest);
    const afterB = fs.statSync(journal).size;
    cache.set(c.guid, c.key, c.rest);
    cache.close();
    const bytes = fs.readFileSync(journal);
    // A flipped byte inside b's record: its frame, and the whole frame after it, are dropped.
    bytes[afterA + Math.floor((afterB - afterA) / 2)] ^= 0x20;
    fs.writeFileSync(journal, bytes);
    const { cache: again } = await CookCache.load(file, cooked);
    expect(again.peek(a.guid)).toBeDefined();
    expect(again.peek(b.guid)).toBeUndefined();
    expect(again.peek(c.guid)).toBeUndefined();
    expect(fs.statSync(journal).size).toBe(afterA);
    again.close();
  });

  it('a held batch is one journal frame: a cut inside it drops the whole batch, never part of it', async () => {
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const first = entryFor(cooked, 1);
    cache.set(first.guid, first.key, first.rest);
    const before = fs.statSync(journal).size;
    const batch = Array.from({ length: 8 }, (_, i) => entryFor(cooked, 10 + i));
    cache.holdJournal();
    for (const e of batch) cache.set(e.guid, e.key, e.rest);
    cache.delete(first.guid);
    expect(fs.statSync(journal).size).toBe(before);
    cache.flushJournal();
    cache.close();
    const full = fs.readFileSync(journal);
    const { cache: whole } = await CookCache.load(file, cooked, { readOnly: true });
    expect(batch.every((e) => whole.peek(e.guid) !== undefined)).toBe(true);
    expect(whole.peek(first.guid)).toBeUndefined();
    expect(whole.pending).toBe(1 + 8 + 1);
    fs.writeFileSync(journal, full.subarray(0, before + Math.floor((full.length - before) * 0.75)));
    const { cache: cut } = await CookCache.load(file, cooked);
    expect(batch.filter((e) => cut.peek(e.guid) !== undefined)).toEqual([]);
    expect(cut.peek(first.guid)).toBeDefined();
    expect(cut.pending).toBe(1);
    cut.close();
  });

  it('a journal replayed over the snapshot that folded it gives the same entries (table strings included)', async () => {
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const want = new Map<string, CacheEntry>();
    // Entries with non-hex part values and class names: strings the journal gives the table.
    for (let i = 0; i < 40; i++) {
      const e = entryFor(cooked, i);
      want.set(e.guid, cache.set(e.guid, e.key, e.rest));
    }
    cache.setPak('Main.pak', { fingerprint: 'f1', size: 9, entries: 2 });
    cache.setPak('Old.pak', { fingerprint: 'f0', size: 1, entries: 1 });
    cache.setPak('Old.pak', undefined);
    const kept = fs.readFileSync(journal);
    await cache.save(true);
    cache.close();
    // A kill between writing the snapshot and emptying the journal.
    fs.writeFileSync(journal, kept);
    const { cache: again, warning } = await CookCache.load(file, cooked);
    expect(warning).toBeUndefined();
    for (const [guid, e] of want) expect(again.peek(guid)).toEqual(e);
    expect(again.getPak('Main.pak')).toEqual({ fingerprint: 'f1', size: 9, entries: 2 });
    expect(again.getPak('Old.pak')).toBeUndefined();
    expect(fs.statSync(journal).size).toBe(kept.length);
    again.close();
    // A journal whose table strings disagree with the snapshot's ends where they do (here: at once).
    const other = await setup();
    const { cache: elsewhere } = await CookCache.load(other.file, other.cooked);
    const odd = entryFor(other.cooked, 45); // a GUID the first cache does not hold; part strings its table has elsewhere
    elsewhere.set(odd.guid, { key: odd.key.key, parts: { format: 'zz', settings: 'yy' } }, odd.rest);
    elsewhere.close();
    fs.copyFileSync(other.journal, journal);
    const { cache: mixed } = await CookCache.load(file, cooked);
    expect(mixed.peek(odd.guid)).toBeUndefined();
    expect(mixed.size).toBe(want.size);
    mixed.close();
  });

  it('a JSON-lines journal of the version before is replayed (a torn last line dropped) and folded into the snapshot at load', async () => {
    const { file, cooked, journal } = await setup();
    const { cache } = await CookCache.load(file, cooked);
    const [a, b, c] = [entryFor(cooked, 1), entryFor(cooked, 2), entryFor(cooked, 3)];
    const wantA = cache.set(a.guid, a.key, a.rest);
    await cache.save(true);
    cache.close();
    // What the JSON journal's writer appended: one line per change.
    const st = fs.statSync(path.join(cooked, b.rest.cookedFile));
    const wantB: CacheEntry = { key: b.key.key, parts: b.key.parts, ...b.rest, cookedSize: st.size, cookedMtimeMs: st.mtimeMs };
    const lines = [{ s: b.guid, e: wantB }, { d: a.guid }, { p: 'Main.pak', r: { fingerprint: 'f', size: 3, entries: 1 } }].map((op) => JSON.stringify(op) + '\n');
    fs.writeFileSync(journal, lines.join('') + '{"s":"torn');
    // A reader that may not write replays it and changes nothing on disk.
    const snapshot = fs.readFileSync(file);
    const { cache: reader } = await CookCache.load(file, cooked, { readOnly: true });
    expect([reader.peek(a.guid), reader.peek(b.guid)]).toEqual([undefined, wantB]);
    expect(fs.readFileSync(file).equals(snapshot)).toBe(true);
    const { cache: again, warning } = await CookCache.load(file, cooked);
    expect(warning).toBeUndefined();
    expect([again.peek(a.guid), again.peek(b.guid)]).toEqual([undefined, wantB]);
    expect(again.getPak('Main.pak')).toEqual({ fingerprint: 'f', size: 3, entries: 1 });
    // Folded: no JSON left for binary frames to follow.
    expect(fs.existsSync(journal) ? fs.statSync(journal).size : 0).toBe(0);
    expect(again.pending).toBe(0);
    const wantC = again.set(c.guid, c.key, c.rest);
    again.close();
    const { cache: last } = await CookCache.load(file, cooked);
    expect([last.peek(a.guid), last.peek(b.guid), last.peek(c.guid)]).toEqual([undefined, wantB, wantC]);
    last.close();
    void wantA;
  });

  it('a damaged snapshot is a CACHE_INVALID warning naming it, an empty cache, and its journal is dropped', async () => {
    const { file, cooked, journal } = await setup();
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
    expect(fs.existsSync(journal)).toBe(false);
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
