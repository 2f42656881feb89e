/**
 * A one-file change takes shortcuts (the plan carried, AssetRegistry.bin kept, the pak spliced from
 * the one it replaces); each must leave exactly the bytes a cook from scratch writes: every pak,
 * listing, cooked file and AssetRegistry.bin. After each edit of a sequence (edits that keep every
 * planning fact and edits that do not) the project's outputs are compared with a fresh cook of a
 * copy of its sources.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { REGISTRY_HASHES_FILE } from '../../cook/cookedRegistryOutput.js';
import { carriedRegistryInputs, registryInputsFingerprint, SWEPT_MARKER_FILE } from '../../cook/cookedOutputs.js';
import { COST_TABLE_FILE, patchCostTable } from '../../cook/remote/costTable.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { Random } from '../../samples/generate/random.js';
import { copySampleProject } from '../helpers/sampleProject.js';
import { g, outputBytes, tempDir, writeFixture, writeProject } from './helpers.js';

const MESHES = 16;
const CONFIG = {
  name: 'OneFile',
  cookRoots: ['/Game/Maps/Main'],
  textures: { encoder: 'rgba8' },
  plugins: [{ name: 'Extra', path: 'Plugins/Extra', chunk: 'DLC1', cookRoots: ['/Extra/Quest'] }],
};

/** Native-tail filler; every fourth mesh spans several 64 KiB blocks. */
function filler(i: number, salt = 0): Uint8Array {
  const rnd = new Random(500 + i + 97 * salt);
  const out = new Uint8Array(i % 4 === 0 ? 140_000 + i + salt : 1_500 + 41 * i + salt);
  for (let k = 0; k < out.length; k++) out[k] = rnd.nextU32() % 5 === 0 ? rnd.nextU32() & 0xff : 0x61 + (k % 11);
  return out;
}

const mesh = (i: number, label: string, opts: { className?: string; salt?: number } = {}) => ({
  exports: [{ guid: g(0x100 + i), name: `Mesh${i}`, className: opts.className ?? '/Script/Engine.CStaticMesh', properties: [prop.str('Label', label)], tail: filler(i, opts.salt) }],
});
const map = (count: number) => ({
  imports: Array.from({ length: count }, (_, i) => hard(g(0x100 + i))),
  exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
});

const quest = (label: string) => ({ imports: [hard(g(0x103))], exports: [{ guid: g(0x300), name: 'Quest', className: '/Script/Engine.CQuest', properties: [prop.str('Label', label)] }] });

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-onefile-');
  const files: Parameters<typeof writeProject>[2] = {
    'Content/Maps/Main.lasset': map(MESHES),
    'Content/UI/Menu.rml': { text: '<rml>menu</rml>', guid: g(2) },
    'Plugins/Extra/Content/Quest.lasset': quest('v1'),
  };
  for (let i = 0; i < MESHES; i++) files[`Content/Meshes/Mesh${i}.lasset`] = mesh(i, 'v1');
  await writeProject(dir, CONFIG, files);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** An incremental cook of the project: where its plan came from, and its summary. */
async function cook() {
  const c = await Cooker.open({ projectDir: dir });
  try {
    const s = await c.cook({ report: false });
    expect(s.problems.filter((p) => p.severity === 'error')).toEqual([]);
    // The registry inputs the marker records (a carry's come from the changed records alone) are
    // those of every shipped record, hashed whole.
    const marker = JSON.parse(await fsp.readFile(path.join(dir, 'Intermediates', SWEPT_MARKER_FILE), 'utf8')) as { registryInputs: string };
    expect(marker.registryInputs).toBe(registryInputsFingerprint([...c.lastPlan!.packages, ...c.lastPlan!.textAssets].map((a) => a.record)));
    return { from: c.lastPlanFrom, summary: s };
  } finally {
    c.close();
  }
}

/** The outputs of a cook from scratch of a copy of the project's sources. */
async function fromScratch(): Promise<Map<string, Buffer>> {
  const fresh = await tempDir('lc-onefile-fresh-');
  try {
    await copySampleProject(fresh, dir);
    const c = await Cooker.open({ projectDir: fresh });
    try {
      expect((await c.cook({ report: false })).ok).toBe(true);
    } finally {
      c.close();
    }
    return await outputBytes(fresh);
  } finally {
    await fsp.rm(fresh, { recursive: true, force: true });
  }
}

/**
 * The cost table a one-file change patched (the re-cooked packages' lines) is the one encoded from
 * every shipped package's cook time: the marker gone, a no-op encodes it whole.
 */
async function expectCostsEncodedWhole(): Promise<void> {
  const file = path.join(dir, 'Saved', COST_TABLE_FILE);
  const patched = await fsp.readFile(file);
  await fsp.rm(path.join(dir, 'Intermediates', SWEPT_MARKER_FILE));
  await fsp.rm(file);
  expect((await cook()).summary.cooked).toBe(0);
  expect((await fsp.readFile(file)).equals(patched)).toBe(true);
}

/** Outputs equal to a cook from scratch, file for file, byte for byte. */
async function expectScratchBytes(): Promise<void> {
  const mine = await outputBytes(dir);
  const want = await fromScratch();
  expect([...mine.keys()]).toEqual([...want.keys()]);
  const differ = [...want].filter(([k, b]) => !mine.get(k)!.equals(b)).map(([k]) => k);
  expect(differ).toEqual([]);
}

const sidecar = () => fsp.readFile(path.join(dir, 'Intermediates', REGISTRY_HASHES_FILE)).catch(() => undefined);

describe('a one-file change', () => {
  it('writes what a cook from scratch writes, through a sequence of edits, with the shortcuts taken where they apply', async () => {
    await cook();
    await cook();
    await expectScratchBytes();

    // A property edit (no planning fact): carried plan, AssetRegistry.bin kept as it was (its
    // entries' content sidecar untouched: nothing was encoded).
    const before = await sidecar();
    await writeFixture(dir, 'Content/Meshes/Mesh3.lasset', mesh(3, 'v2', { salt: 1 }));
    let c = await cook();
    expect(c).toMatchObject({ from: 'carried', summary: { cooked: 1 } });
    expect(before && (await sidecar())?.equals(before)).toBe(true);
    // The Main pak and its listing spliced from the old ones; DLC1's untouched.
    expect(c.summary.paks.map((p) => [p.chunk, p.written, p.spliced ?? false])).toEqual([['Main', true, true], ['DLC1', false, false]]);
    await expectScratchBytes();
    await expectCostsEncodedWhole();

    // Two more in a row (a carry from a carry), one of them a multi-block mesh, one in the plugin's chunk.
    await writeFixture(dir, 'Content/Meshes/Mesh4.lasset', mesh(4, 'v2', { salt: 2 }));
    expect((await cook()).from).toBe('carried');
    await writeFixture(dir, 'Content/Meshes/Mesh3.lasset', mesh(3, 'v2b', { salt: 5 }));
    await writeFixture(dir, 'Plugins/Extra/Content/Quest.lasset', quest('edited'));
    c = await cook();
    expect(c.summary.paks.map((p) => [p.chunk, p.spliced])).toEqual([['Main', true], ['DLC1', true]]);
    await expectCostsEncodedWhole();
    await writeFixture(dir, 'Content/Meshes/Mesh3.lasset', mesh(3, 'v3, a longer label than before', { salt: 3 }));
    expect((await cook()).from).toBe('carried');
    await expectScratchBytes();

    // A text asset edited: carried; the splice compresses it again.
    await writeFixture(dir, 'Content/UI/Menu.rml', { text: '<rml>menu, edited</rml>', guid: g(2) });
    c = await cook();
    expect(c.from).toBe('carried');
    expect(c.summary.paks[0]).toMatchObject({ chunk: 'Main', spliced: true });
    await expectScratchBytes();

    // Another class: a planning fact (in the registry entry): planned again, the registry encoded.
    await writeFixture(dir, 'Content/Meshes/Mesh5.lasset', mesh(5, 'v1', { className: '/Script/Engine.CSkeletalMesh' }));
    c = await cook();
    expect(c.from).toBe('planned');
    await expectScratchBytes();

    // A dependency dropped (an asset leaves the plan and the pak), then the next edit carries again.
    await writeFixture(dir, 'Content/Maps/Main.lasset', map(MESHES - 1));
    expect((await cook()).from).toBe('planned');
    await expectScratchBytes();
    await writeFixture(dir, 'Content/Meshes/Mesh6.lasset', mesh(6, 'v2', { salt: 4 }));
    expect((await cook()).from).toBe('carried');
    await expectScratchBytes();
    // ~20 cooks in one test (13 incremental, 7 from scratch): 5.7 s at load 4, past the default
    // 60 s at load 20-26, where a suite shares the two cores with other work.
  }, 300_000);

  it('a damaged listing, splice record or old pak is not spliced from: the pak is written the usual way, the bytes of a cook from scratch', async () => {
    const paks = path.join(dir, 'Saved/Paks');
    const record = path.join(dir, 'Intermediates/PakSeals/Main.splice');
    const flip = async (file: string, at: (size: number) => number) => {
      const b = await fsp.readFile(file);
      b[at(b.byteLength)] ^= 0x01;
      await fsp.writeFile(file, b);
    };
    let label = 0;
    const edit = () => writeFixture(dir, 'Content/Meshes/Mesh7.lasset', mesh(7, `damage ${label++}`, { salt: 10 + label }));
    const damages: Array<[string, () => Promise<void>]> = [
      ['listing', () => flip(path.join(paks, 'Main.contents.txt'), (n) => n - 20)],
      ['splice record', () => flip(record, (n) => n - 12)],
      ['splice record gone', () => fsp.rm(record)],
      ['old pak data', () => flip(path.join(paks, 'Main.pak'), () => 40)],
    ];
    for (const [what, damage] of damages) {
      await edit();
      expect({ what, spliced: (await cook()).summary.paks[0].spliced }).toEqual({ what, spliced: true });
      await damage();
      await edit();
      const c = await cook();
      expect({ what, spliced: c.summary.paks[0].spliced ?? false, written: c.summary.paks[0].written }).toEqual({ what, spliced: false, written: true });
      await expectScratchBytes();
    }
    // 12 cooks (4 damages x an edit, a fall-back cook and one from scratch).
  }, 180_000);

  it('registry inputs carried over changed records equal those hashed whole; a value of another form is not carried', () => {
    const rec = (i: number, hash: string) => ({ guid: g(0x500 + i), kind: 'package', hash, virtualPath: `/Game/R/A${i}.A${i}` }) as unknown as AssetRecord;
    const before = Array.from({ length: 50 }, (_, i) => rec(i, (1000 + i).toString(16).padStart(16, '0')));
    const after = before.map((r, i) => (i % 7 === 3 ? rec(i, (9000 + i).toString(16).padStart(16, '0')) : r));
    const changed = before.flatMap((r, i) => (after[i] !== r ? [{ before: r, after: after[i] }] : []));
    expect(changed.length).toBe(7);
    const whole = registryInputsFingerprint(after);
    expect(carriedRegistryInputs(registryInputsFingerprint(before), changed)).toBe(whole);
    expect(whole).not.toBe(registryInputsFingerprint(before));
    expect(carriedRegistryInputs(registryInputsFingerprint(before), [])).toBe(registryInputsFingerprint(before));
    // An older cook's fingerprint (one hash of every record's line): hashed whole by the caller.
    expect(carriedRegistryInputs('0123456789abcdef', changed)).toBeUndefined();
  });

  it('a cost table not in its written form, or without a line of a re-cooked package, is not patched', () => {
    const table = '{\n  "version": 1,\n  "unit": "ms",\n  "costs": {\n    "a": 5,\n    "b": 7\n  }\n}\n';
    expect(patchCostTable(table, new Map([['b', 9.4], ['a', 0]]))).toBe(table.replace('"a": 5', '"a": 0').replace('"b": 7', '"b": 9'));
    expect(patchCostTable(table, new Map([['c', 1]]))).toBeUndefined();
    expect(patchCostTable(table.replace('"unit"', '"units"'), new Map([['a', 1]]))).toBeUndefined();
    expect(patchCostTable(table.replace('"b": 7', '"b": x'), new Map([['b', 1]]))).toBeUndefined();
  });
});
