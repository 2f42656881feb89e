/**
 * The JSON Schema that ships for editors (config/lumina-cook.schema.json) must describe the same
 * config the loader accepts: the same keys at every level, the same enum values, the same integer
 * ranges. The sample project points its `$schema` at it and loads with no warning.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, normalizeConfig } from '../../config/index.js';
import { CONFIG_SHAPE, PLUGIN_SHAPE, type Shape } from '../../config/schema.js';
import { REPO } from '../helpers/runCli.js';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}

const SCHEMA_FILE = path.join(REPO, 'config/lumina-cook.schema.json');
const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8')) as JsonSchema;

/** Every dotted key a shape names, nested objects included. */
function shapeKeys(shape: Shape, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([k, v]) => (typeof v === 'function' ? [prefix + k] : shapeKeys(v, `${prefix}${k}.`)));
}
function schemaKeys(s: JsonSchema, prefix = ''): string[] {
  return Object.entries(s.properties ?? {}).flatMap(([k, v]) => (v.properties ? schemaKeys(v, `${prefix}${k}.`) : [prefix + k]));
}
/** `[dotted key, its schema]` for every leaf. */
function leaves(s: JsonSchema, prefix = ''): Array<[string, JsonSchema]> {
  return Object.entries(s.properties ?? {}).flatMap(([k, v]) => (v.properties ? leaves(v, `${prefix}${k}.`) : [[prefix + k, v] as [string, JsonSchema]]));
}
function withKey(key: string, value: unknown): Record<string, unknown> {
  const parts = key.split('.');
  const root: Record<string, unknown> = {};
  let o = root;
  for (const p of parts.slice(0, -1)) o = o[p] = {} as Record<string, unknown>;
  o[parts[parts.length - 1]] = value;
  return root;
}
const accepts = (raw: unknown) => {
  try {
    normalizeConfig(raw, '/p', '/p/lumina-cook.json');
    return true;
  } catch {
    return false;
  }
};

let dir: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lc-schema-'));
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('config/lumina-cook.schema.json', () => {
  it('names exactly the keys the loader knows, for the project and for each plugin', () => {
    expect(schemaKeys(schema).sort()).toEqual(shapeKeys(CONFIG_SHAPE).sort());
    expect(schemaKeys(schema.definitions!.plugin).sort()).toEqual(shapeKeys(PLUGIN_SHAPE).sort());
  });

  it('lists the enum values and integer ranges the loader accepts, and nothing beyond them', () => {
    let checked = 0;
    for (const [key, s] of leaves(schema)) {
      if (s.enum) {
        for (const v of s.enum) expect(accepts(withKey(key, v)), `${key} = ${v}`).toBe(true);
        expect(accepts(withKey(key, 'not-an-option')), key).toBe(false);
        checked++;
      }
      if (s.type === 'integer') {
        expect(accepts(withKey(key, s.minimum)), `${key} = ${s.minimum}`).toBe(true);
        expect(accepts(withKey(key, s.maximum)), `${key} = ${s.maximum}`).toBe(true);
        expect(accepts(withKey(key, s.minimum! - 1)), `${key} = ${s.minimum! - 1}`).toBe(false);
        expect(accepts(withKey(key, s.maximum! + 1)), `${key} = ${s.maximum! + 1}`).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(9);
  });

  it('is what the sample project points $schema at, and the sample loads with no warning', () => {
    const sample = path.join(REPO, 'samples/project');
    const raw = JSON.parse(fs.readFileSync(path.join(sample, 'lumina-cook.json'), 'utf8')) as { $schema: string };
    expect(path.resolve(sample, raw.$schema)).toBe(SCHEMA_FILE);
    expect(loadConfig(sample).warnings).toEqual([]);
  });

  it('ships in the package (package.json files and exports)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, unknown> };
    expect(pkg.files).toContain('config/lumina-cook.schema.json');
    expect(pkg.exports['./config/lumina-cook.schema.json']).toBe('./config/lumina-cook.schema.json');
  });

  it('a $schema key in any project config loads without a warning', async () => {
    await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify({ $schema: './node_modules/lumina-cook/config/lumina-cook.schema.json', cookRoots: ['/Game/Maps/Main'] }));
    expect(loadConfig(dir).warnings).toEqual([]);
  });
});
