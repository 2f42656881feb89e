/**
 * docs/FORMAT.md is the project's own description of its formats (a clone has no ../shared): it
 * must name what the code actually uses (every magic, every property type, every built-in
 * struct), have a section for every format, and the README must link it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COOKED_MAGIC } from '../../src/format/cookedPackage.js';
import { REGISTRY_MAGIC } from '../../src/format/cookedRegistry.js';
import { BUILTIN_STRUCTS, PACKAGE_TAG, PROPERTY_TYPES } from '../../src/format/packageTypes.js';
import { PAK_MAGIC } from '../../pak/pakFormat.js';
import { REPO } from '../helpers/runCli.js';

const doc = fs.readFileSync(path.join(REPO, 'docs/FORMAT.md'), 'utf8');
const hex = (n: number) => `0x${n.toString(16).toUpperCase().padStart(8, '0')}`;
const ascii = (n: number) => String.fromCharCode(n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24);

describe('docs/FORMAT.md', () => {
  it('gives every magic the code checks, as a number and as the bytes on disk', () => {
    expect(doc).toContain(hex(PACKAGE_TAG));
    for (const m of [COOKED_MAGIC, PAK_MAGIC, REGISTRY_MAGIC, 0x4348534c]) {
      expect(doc, ascii(m)).toContain(hex(m));
      expect(doc, ascii(m)).toContain(`\`${ascii(m)}\``);
    }
  });

  it('names all fourteen property types and every built-in struct', () => {
    expect(PROPERTY_TYPES.size).toBe(14);
    for (const t of PROPERTY_TYPES) expect(doc, t).toContain(t);
    for (const s of Object.keys(BUILTIN_STRUCTS)) expect(doc, s).toMatch(new RegExp(`\\b${s}\\b`));
  });

  it('has a section for every format, native tails and shader caches included', () => {
    const headings = doc.split('\n').filter((l) => l.startsWith('#')).join('\n');
    for (const h of ['Building blocks', 'Source packages', 'Header', 'Imports', 'Exports', 'Thumbnail', 'tagged properties', 'native tail', 'Textures', 'Text assets', 'Cooked packages', 'Paks', 'Cooked asset registry', 'ShaderCache.bin']) {
      expect(headings, h).toContain(h);
    }
    for (const s of ['NATIVE_TAIL_UNMAPPED', '"classes"', '"structs"', 'arrayDim', 'shader.json', 'SPIR-V', 'tombstone', 'Base hash']) expect(doc, s).toContain(s);
  });

  it('is what the README links, not a file outside the repository', () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    expect(readme).toContain('](docs/FORMAT.md)');
    expect(readme).not.toContain('../shared/');
  });
});
