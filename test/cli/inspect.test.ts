import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildPackage, hard, prop, ref, soft } from '../../src/format/packageBuilder.js';
import { ObjectFlags } from '../../src/format/packageTypes.js';
import { runCli } from '../helpers/runCli.js';

const G = (n: number) => n.toString(16).padStart(32, '0');
let dir: string;
let file: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-inspect-'));
  file = path.join(dir, 'Rock.lasset');
  await fs.writeFile(
    file,
    buildPackage({
      imports: [hard(G(0xaa)), soft(G(0xbb))],
      exports: [
        {
          guid: G(1),
          name: 'Rock',
          className: '/Script/Engine.CStaticMesh',
          objectFlags: ObjectFlags.Public,
          assetFlags: 1,
          properties: [
            prop.int('Count', 42),
            prop.name('Tag', 'Rocky'),
            prop.str('Label', 'a "quoted" string'),
            prop.object('Body', ref.export(1)),
            prop.object('Mat', ref.import(0)),
            prop.enum('Mode', 'EBlendMode', 'EBlendMode::Masked'),
            prop.vector('Location', 1, 2.5, -3),
            prop.bytes('Blob', new Uint8Array([1, 2, 3])),
            prop.struct('Setup', 'BodySetup', [prop.float('Mass', 2)]),
          ],
        },
        { guid: G(2), name: 'Rock_Body', className: '/Script/Engine.CBodySetup', objectFlags: ObjectFlags.EditorOnly },
      ],
    }),
  );
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('lumina-cook inspect', () => {
  it('prints header, imports, exports and properties in the readable form', async () => {
    const r = await runCli(['inspect', file]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').map((l) => l.trim());
    expect(lines).toContain('[0] 000000000000000000000000000000aa Hard');
    expect(lines).toContain('[1] 000000000000000000000000000000bb Soft');
    expect(lines).toContain('[0] Rock : /Script/Engine.CStaticMesh');
    for (const l of [
      'Count = 42',
      "Tag = 'Rocky'",
      'Label = "a \\"quoted\\" string"',
      'Body = &Rock_Body',
      'Mat = &import:000000000000000000000000000000aa',
      'Mode = EBlendMode::Masked',
      'Location = { X = 1.0, Y = 2.5, Z = -3.0 }',
      'Blob = @bytes(3: 010203)',
      'Mass = 2.0',
    ]) {
      expect(lines).toContain(l);
    }
    expect(r.stdout).toMatch(/flags EditorOnly/);
  });

  it('prints JSON with --json', async () => {
    const r = await runCli(['inspect', file, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.header.exportCount).toBe(2);
    expect(j.imports[1]).toEqual({ guid: G(0xbb), type: 'Soft' });
    expect(j.exports[0].properties[0]).toEqual({ name: 'Count', arrayIndex: 0, type: 'IntProperty', value: 42 });
  });

  it('reports a corrupt package with the file and offset, without a stack trace', async () => {
    const bad = path.join(dir, 'Bad.lasset');
    const bytes = Buffer.from(await fs.readFile(file));
    bytes.writeInt32LE(9, 4);
    await fs.writeFile(bad, bytes);
    const r = await runCli(['inspect', bad], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('error [PACKAGE_VERSION] Bad.lasset @4 (version): version 9 was written by a newer engine (this reads 1 and 2)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 on a usage error', async () => {
    const r = await runCli(['no-such-command']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error \[USAGE\]/);
  });
});
