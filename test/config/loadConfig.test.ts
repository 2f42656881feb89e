import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/index.js';
import { LuminaError } from '../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-config-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function writeConfig(value: unknown): Promise<void> {
  await fs.writeFile(path.join(dir, 'lumina-cook.json'), typeof value === 'string' ? value : JSON.stringify(value));
}

function loadError(): LuminaError {
  try {
    loadConfig(dir);
  } catch (e) {
    expect(e).toBeInstanceOf(LuminaError);
    return e as LuminaError;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig', () => {
  it('fills defaults, resolves folders and mounts enabled plugins only', async () => {
    await writeConfig({
      cookRoots: ['/Game/Maps/Main'],
      plugins: [
        { name: 'Foliage', path: 'Plugins/Foliage', enabled: true, chunk: 'Foliage', cookRoots: ['/Foliage/Maps/Forest'] },
        { name: 'Old', path: 'Plugins/Old', enabled: false },
      ],
    });
    const { config, warnings } = loadConfig(dir);
    expect(warnings).toEqual([]);
    expect(config.name).toBe(path.basename(dir));
    expect(config.mounts.map((m) => [m.alias, path.relative(dir, m.dir), m.chunk])).toEqual([
      ['/Game', 'Content', 'Main'],
      ['/Foliage', path.join('Plugins', 'Foliage', 'Content'), 'Foliage'],
    ]);
    expect(config.plugins.map((p) => [p.name, p.enabled, p.chunk])).toEqual([
      ['Foliage', true, 'Foliage'],
      ['Old', false, 'Old'],
    ]);
    expect(config.cook.soft).toBe('include');
    expect(config.cookedDir).toBe(path.join(dir, 'Saved', 'Cooked'));
    expect(Object.isFrozen(config.cook)).toBe(true);
  });

  it('mounts /Engine when engineContentDir is set', async () => {
    await writeConfig({ engineContentDir: '../Engine/Content' });
    expect(loadConfig(dir).config.mounts.map((m) => m.alias)).toEqual(['/Game', '/Engine']);
  });

  it('warns about unknown keys and ignores them', async () => {
    await writeConfig({ cookRoots: [], cook: { soft: 'exclude', turbo: true }, colour: 'blue' });
    const { config, warnings } = loadConfig(dir);
    expect(config.cook.soft).toBe('exclude');
    expect(warnings).toEqual(['lumina-cook.json: unknown key "cook.turbo" is ignored', 'lumina-cook.json: unknown key "colour" is ignored']);
  });

  it('names the key of a bad value', async () => {
    await writeConfig({ cook: { soft: 'sometimes' } });
    const e = loadError();
    expect({ code: e.code, message: e.message, field: e.field }).toEqual({
      code: 'CONFIG_INVALID',
      message: '"cook.soft" must be one of "include", "exclude", not "sometimes"',
      field: 'cook.soft',
    });
  });

  it('takes basisu levels under textures.*, and refuses one out of basisu\'s range naming the key', async () => {
    await writeConfig({ textures: { etc1sQuality: 200, etc1sEffort: 3, uastcLevel: 4 } });
    expect(loadConfig(dir).config.textures).toMatchObject({ etc1sQuality: 200, etc1sEffort: 3, uastcLevel: 4 });
    for (const [key, bad] of [['etc1sQuality', 0], ['etc1sEffort', 7], ['uastcLevel', 1.5]] as const) {
      await writeConfig({ textures: { [key]: bad } });
      const e = loadError();
      expect({ code: e.code, field: e.field }).toEqual({ code: 'CONFIG_INVALID', field: `textures.${key}` });
    }
  });

  it('takes remoteCache with reads on and writes off by default, and refuses credentials in its URL', async () => {
    await writeConfig({ remoteCache: { url: 'http://cache.internal:8080/studio' } });
    expect(loadConfig(dir).config.remoteCache).toEqual({ url: 'http://cache.internal:8080/studio', read: true, write: false, salt: '', timeoutMs: 10_000 });
    await writeConfig({ remoteCache: { url: 'https://ci:hunter2@cache.internal/' } });
    expect(loadError()).toMatchObject({
      code: 'CONFIG_INVALID',
      field: 'remoteCache.url',
      message: '"remoteCache.url" must not carry credentials: set LUMINA_REMOTE_CACHE_TOKEN or LUMINA_REMOTE_CACHE_BASIC in the environment',
    });
    await writeConfig({ remoteCache: { url: 'ftp://cache.internal/' } });
    expect(loadError()).toMatchObject({ field: 'remoteCache.url', message: '"remoteCache.url" must be an http:// or https:// URL, or null' });
  });

  it('names the key inside a plugin entry', async () => {
    await writeConfig({ plugins: [{ name: 'Foliage', path: 'P', cookRoots: ['/Game/Maps/Wrong'] }] });
    const e = loadError();
    expect({ code: e.code, message: e.message }).toEqual({ code: 'CONFIG_INVALID', message: '"plugins[0].cookRoots[0]" must be under /Foliage/, not "/Game/Maps/Wrong"' });
    await writeConfig({ cookRoots: ['Maps/Main'] });
    expect(loadError().message).toBe('"cookRoots[0]" must be a virtual path like "/Game/Maps/Main", not "Maps/Main"');
    await writeConfig({ watch: { debounceMs: -1 } });
    expect(loadError().message).toBe('"watch.debounceMs" must be a whole number from 0 to 10000, not -1');
  });

  it('refuses two plugins with one name', async () => {
    await writeConfig({ plugins: [{ name: 'A', path: 'a' }, { name: 'A', path: 'b' }] });
    expect(loadError().message).toBe('"plugins[1].name" is "A", which is already mounted');
  });

  it('reports a missing file and broken JSON with the file', async () => {
    const missing = loadError();
    expect(missing.code).toBe('CONFIG_NOT_FOUND');
    expect(missing.file).toBe(path.join(dir, 'lumina-cook.json'));
    await writeConfig('{ "cookRoots": [ }');
    const broken = loadError();
    expect(broken.code).toBe('CONFIG_PARSE');
    expect(broken.message).toBe('not valid JSON at line 1, column 18: a value is expected, found "}"');
    expect(broken.offset).toBe(17);
  });

  it('gives the line and column of a syntax error, also where JSON.parse gives no position', async () => {
    // JSON.parse reports "Unexpected token ..., is not valid JSON" here, with no position.
    await writeConfig('{\n  "name": "X",\n  "cook": { "soft": tru }\n}\n');
    expect(loadError().message).toBe('not valid JSON at line 3, column 21: unexpected characters, found "tru"');
    await writeConfig('{\n  "cookRoots": ["/Game/Maps/Main",]\n}');
    expect(loadError().message).toBe('not valid JSON at line 2, column 35: a value is expected, found "]"');
    await writeConfig('{ "name": "X" ');
    expect(loadError().message).toBe('not valid JSON at line 1, column 15: a "}" is expected, found the end of the file');
  });

  it('echoes the bad value, cut short when long', async () => {
    await writeConfig({ cook: { compressionLevel: '9' } });
    expect(loadError().message).toBe('"cook.compressionLevel" must be a whole number from 0 to 9, not "9"');
    await writeConfig({ textures: { encoder: 'x'.repeat(100) } });
    expect(loadError().message).toBe(`"textures.encoder" must be one of "basis", "rgba8", not "${'x'.repeat(56)}...`);
    await writeConfig({ paks: [] });
    expect(loadError().message).toBe('"paks" must be an object, not []');
    // Never a secret: a remote cache URL with a password is refused without repeating it.
    await writeConfig({ remoteCache: { url: 'https://ci:hunter2@cache.internal/' } });
    expect(loadError().message).not.toContain('hunter2');
  });
});
