/**
 * The schema part of a package's cook key is remembered per export-class list (a no-op asks it of
 * every package): each list still gets exactly what ClassSchemas.packageHash says of it, lists
 * that would join to the same text included, and a new schema set is asked anew.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPartsForRecord } from '../../cook/cookAsset.js';
import { settingsHashes } from '../../cook/cookKey.js';
import { loadConfig } from '../../config/index.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { initHash } from '../../src/util/hash.js';

const THING = '/Script/Engine.CMyThing';
const schemaFile = (radius: string) => ({ version: 1, classes: { [THING]: { super: '/Script/Engine.CObject', native: [{ name: radius, type: 'FloatProperty' }] } } });
let dir: string;
beforeAll(async () => {
  await initHash();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-schemapart-'));
  fs.writeFileSync(path.join(dir, 'lumina-cook.json'), JSON.stringify({ name: 'S', cookRoots: [] }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function schemasWith(field: string) {
  const d = fs.mkdtempSync(path.join(dir, 's-'));
  fs.writeFileSync(path.join(d, 'a.json'), JSON.stringify(schemaFile(field)));
  return loadSchemas(d);
}

describe('the schema part of a cook key', () => {
  it('is packageHash of each class list, whatever was asked before', () => {
    const settings = settingsHashes(loadConfig(dir).config);
    const record = { kind: 'package', className: THING, hash: '0123456789abcdef' } as AssetRecord;
    const a = schemasWith('Radius');
    // A one-class list spelled like a longer list's JSON must not take that list's answer either.
    // A list that begins another (and the empty one) has its own answer.
    const lists = [[THING, ''], [`${THING}\n`], [THING], [], [THING, '', THING], ['/Script/Engine.COther'], [THING, ''], [`${THING}\n`], ['', THING], [JSON.stringify([THING])], [JSON.stringify([THING, ''])]];
    for (const classes of lists) {
      expect(keyPartsForRecord(record, { settings, schemas: a }, false, record.hash, classes).schema ?? '').toBe(a.packageHash(classes));
    }
    // [THING, ''] and [`${THING}\n`] join to the same text with a newline: they must not share an answer.
    expect(a.packageHash([THING, ''])).not.toBe(a.packageHash([`${THING}\n`]));
    // Another schema set (an edited schema): its own answers, not the first set's.
    const b = schemasWith('Size');
    expect(b.packageHash([THING])).not.toBe(a.packageHash([THING]));
    expect(keyPartsForRecord(record, { settings, schemas: b }, false, record.hash, [THING]).schema).toBe(b.packageHash([THING]));
  });
});
