import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeIdentity } from '../../src/util/codeIdentity.js';
import { hashString, initHash } from '../../src/util/hash.js';
import { tempDir } from '../watch/helpers.js';

describe('codeIdentity', () => {
  it("hashes the named modules' bytes with the caller's extension, and is null when one is missing", async () => {
    await initHash();
    const dir = await tempDir('lumina-code-');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'self.ts'), 'self');
    fs.writeFileSync(path.join(dir, 'a.ts'), 'export const a = 1;');
    fs.writeFileSync(path.join(dir, 'a.js'), 'built a');
    fs.writeFileSync(path.join(dir, 'sub', 'b.ts'), 'export const b = 2;');
    const self = pathToFileURL(path.join(dir, 'self.ts')).href;
    expect(codeIdentity(self, ['./a', './sub/b'])).toBe(hashString('export const a = 1;\0export const b = 2;'));
    expect(codeIdentity(pathToFileURL(path.join(dir, 'self.js')).href, ['./a'])).toBe(hashString('built a'));
    expect(codeIdentity(self, ['./a', './missing'])).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
