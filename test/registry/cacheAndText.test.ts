import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { decodeRegistryCache, encodeRegistryCache, thawRecord } from '../../src/registry/registryCache.js';
import { initHash } from '../../src/util/hash.js';
import { g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const open = (opts: { mintSidecars?: boolean } = {}) => AssetRegistry.open({ config: p.config(), ...opts });
const listing = (reg: AssetRegistry) => reg.all().map(({ mtimeMs, ...rest }) => rest);

describe('cache file', () => {
  async function populated() {
    p.pkg('Content/A.lasset', g(1), { imports: [hard(g(2)), soft(g(3))], flags: 1 });
    p.pkg('Content/Deep/Folder/B.lasset', g(2));
    p.pkg('Plugins/Foliage/Content/Oak.lasset', g(3), { imports: [hard(g(1))] });
    p.write('Content/UI/Hud.rcss', 'body {}');
    p.write('Content/UI/Hud.rcss.lmeta', JSON.stringify({ guid: g(4) }));
    const reg = await open();
    await reg.scan();
    return { cacheFile: reg.cacheFile, expected: listing(reg) };
  }

  it('round-trips every record field through the binary format', async () => {
    const { cacheFile, expected } = await populated();
    await initHash();
    const entries = decodeRegistryCache(fs.readFileSync(cacheFile), cacheFile);
    const records = entries.map(thawRecord);
    expect(records.sort((a, b) => a.guid.localeCompare(b.guid)).map(({ mtimeMs, ...r }) => r)).toEqual(expected);
    expect(encodeRegistryCache(entries.map((e) => ({ record: thawRecord(e), sidecar: e.sidecar })))).toEqual(fs.readFileSync(cacheFile));
  });

  const damage: Array<[string, (b: Buffer) => Buffer, RegExp]> = [
    ['a flipped byte in the body', (b) => { b[b.length - 20] ^= 0x40; return b; }, /checksum mismatch/],
    ['a truncated file', (b) => b.subarray(0, b.length - 7), /truncated/],
    ['foreign bytes', () => Buffer.from('{"this": "is someone else\'s file"}\n'), /bad magic/],
    ['an empty file', () => Buffer.alloc(0), /shorter than the header/],
    ['another format version', (b) => { b.writeUInt32LE(99, 4); return b; }, /format version 99/],
  ];
  for (const [what, mutate, why] of damage) {
    it(`rebuilds from scratch with a warning on ${what}`, async () => {
      const { cacheFile, expected } = await populated();
      fs.writeFileSync(cacheFile, mutate(fs.readFileSync(cacheFile)));
      const reg = await open();
      expect(reg.cacheStatus).toBe('rebuilt');
      const r = await reg.scan();
      expect(r).toMatchObject({ assets: 4, read: 4, cached: 0 });
      expect(r.problems).toEqual([{ code: 'CACHE_INVALID', message: expect.stringMatching(why), file: cacheFile, severity: 'warning' }]);
      expect(listing(reg)).toEqual(expected);
      // The rebuilt cache is trusted next time.
      const again = await open();
      expect(again.cacheStatus).toBe('loaded');
      expect(await again.scan()).toMatchObject({ read: 0, cached: 4, problems: [] });
    });
  }
});

describe('text assets and .lmeta sidecars', () => {
  it('mints a sidecar on first sight and keeps its GUID across scans', async () => {
    p.write('Content/Scripts/Door.luau', 'return {}');
    const reg = await open();
    const r = await reg.scan();
    expect(r.problems).toEqual([]);
    const meta = JSON.parse(fs.readFileSync(p.abs('Content/Scripts/Door.luau.lmeta'), 'utf8'));
    expect(meta.guid).toMatch(/^[0-9a-f]{32}$/);
    expect(reg.get(meta.guid)).toMatchObject({ className: 'Text.luau', virtualPath: '/Game/Scripts/Door.luau' });
    const again = await open();
    expect(await again.scan()).toMatchObject({ read: 0, cached: 1 });
    expect(again.get(meta.guid)?.name).toBe('Door.luau');
  });

  it('with mintSidecars false (--ci) reports LMETA_MISSING and writes nothing into the source tree', async () => {
    const file = p.write('Content/Scripts/Door.luau', 'return {}');
    const before = fs.readdirSync(p.abs('Content/Scripts'));
    const reg = await open({ mintSidecars: false });
    const r = await reg.scan();
    expect(r.problems).toEqual([
      {
        code: 'LMETA_MISSING',
        message: 'text asset has no .lmeta sidecar',
        file,
        severity: 'error',
        hint: 'run the editor or `lumina-cook registry scan` once outside --ci to mint it, then commit it',
      },
    ]);
    expect(r.assets).toBe(0);
    expect(fs.readdirSync(p.abs('Content/Scripts'))).toEqual(before);
  });

  const invalid: Array<[string, string, string]> = [
    ['broken JSON', '{"guid": ', 'not valid JSON'],
    ['a missing key', '{}', '"guid" is required'],
    ['a short GUID', '{"guid": "abc"}', '"guid" must be 32 hex digits'],
    ['a null GUID', `{"guid": "${'0'.repeat(32)}"}`, '"guid" may not be all zero'],
  ];
  for (const [what, text, message] of invalid) {
    it(`reports LMETA_INVALID for ${what}`, async () => {
      p.write('Content/UI/Menu.rml', '<rml/>');
      const meta = p.write('Content/UI/Menu.rml.lmeta', text);
      const r = await (await open()).scan();
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toMatchObject({ code: 'LMETA_INVALID', file: meta, severity: 'error' });
      expect(r.problems[0].message.startsWith(message)).toBe(true);
      expect(fs.readFileSync(meta, 'utf8')).toBe(text);
    });
  }
});
