/**
 * `inspect` on packages with native tails, undecodable properties and cooked files, run as the
 * real CLI in a child process.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryWriter } from '../../src/format/BinaryWriter.js';
import { buildPackage, hard, prop, ref } from '../../src/format/packageBuilder.js';
import { encodeProperties } from '../../src/format/properties.js';
import { cookProject } from '../../cook/cookProject.js';
import { initHash } from '../../src/util/hash.js';
import { runCli } from '../helpers/runCli.js';
import { g, tempDir, writeProject } from '../cook/helpers.js';

let dir: string;
const SCHEMA = {
  version: 1,
  classes: { '/Script/Game.CThing': { native: [{ name: 'Radius', type: 'FloatProperty' }, { name: 'Target', type: 'ObjectProperty' }, { name: 'Home', type: 'ObjectProperty' }] } },
};

beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-inspect-tails-');
  // A property whose tag is fine but whose value lies (an IntProperty of 2 bytes), then a good one.
  const w = new BinaryWriter();
  w.fstring('Broken').fstring('IntProperty').i32(2).i32(0).bytes(new Uint8Array([7, 0]));
  w.bytes(encodeProperties([prop.int('After', 9)]));
  await writeProject(
    dir,
    { cookRoots: ['/Game/Main'] },
    {
      'Content/Main.lasset': {
        imports: [hard(g(2))],
        exports: [
          { guid: g(1), name: 'Main', className: '/Script/Game.CThing', properties: [prop.int('N', 1)], native: [prop.float('Radius', 2.5), prop.object('Target', ref.export(1)), prop.object('Home', ref.import(0))] },
          { guid: g(0x11), name: 'Raw', className: '/Script/Game.CNoSchema', tail: new Uint8Array([0xde, 0xad, 0xbe, 0xef]) },
        ],
      },
      'Content/Props/Rock.lasset': { exports: [{ guid: g(2), name: 'Rock', className: '/Script/Engine.CStaticMesh' }] },
      'Content/Bad.lasset': { exports: [{ guid: g(3), name: 'Bad', className: '/Script/Engine.CObject', data: w.finish().slice() }] },
      'Schemas/game.json': JSON.stringify(SCHEMA),
    },
  );
  const s = await cookProject({ projectDir: dir });
  expect(s.ok).toBe(true);
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const lines = (out: string) => out.split('\n').map((l) => l.trim());

describe('inspect with native tails', () => {
  it("decodes a tail under // native with the project's schemas, shows one without a schema as bytes, names imports by path", async () => {
    const r = await runCli(['inspect', path.join(dir, 'Content/Main.lasset')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const l = lines(r.stdout);
    const at = l.indexOf('// native');
    expect(at).toBeGreaterThan(0);
    expect(l.slice(at - 1, at + 4)).toEqual(['N = 1', '// native', 'Radius = 2.5', 'Target = &Raw', 'Home = &/Game/Props/Rock.Rock']);
    expect(l).toContain('// native: @bytes(4: deadbeef) (no class schema for /Script/Game.CNoSchema)');
    expect(l).toContain('[0] 00000000000000000000000000000002 Hard /Game/Props/Rock.Rock');
  });

  it('reads the cooked LCKD file too', async () => {
    const r = await runCli(['inspect', path.join(dir, 'Saved/Cooked/Game/Main.lasset')]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/Main\.lasset: cooked \(LCKD\), \d+ raw bytes$/);
    expect(lines(r.stdout)).toContain('Radius = 2.5');
  });

  it('--schemas DIR overrides the project folder; an empty one leaves the tail as bytes', async () => {
    const empty = path.join(dir, 'NoSchemas');
    await fs.mkdir(empty, { recursive: true });
    const r = await runCli(['inspect', path.join(dir, 'Content/Main.lasset'), '--schemas', empty, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.exports[0].native).toEqual({ bytes: { bytes: 20, hex: expect.stringMatching(/^00002040/) }, schema: false });
    expect(j.imports[0].path).toBe('/Game/Props/Rock.Rock');
  });

  it('shows a property that does not decode as bytes with its error, keeps the rest, and exits 1', async () => {
    const r = await runCli(['inspect', path.join(dir, 'Content/Bad.lasset')]);
    expect(r.code).toBe(1);
    const l = lines(r.stdout);
    expect(l.some((x) => x.startsWith('Broken = @bytes(2: 0700)  !! [PACKAGE_INVALID] @') && x.endsWith('property Broken value: value over-runs its declared size 2'))).toBe(true);
    expect(l).toContain('After = 9');
    expect(r.stderr).toContain('error [PACKAGE_INVALID] property Broken value: value over-runs its declared size 2');
  });

  it('a tail the schema does not fit is bytes with the error, exit 1', async () => {
    const bad = path.join(dir, 'Content/Short.lasset');
    await fs.writeFile(bad, buildPackage({ exports: [{ guid: g(9), name: 'Short', className: '/Script/Game.CThing', tail: new Uint8Array([1, 2, 3]) }] }));
    const r = await runCli(['inspect', bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\/\/ native: @bytes\(3: 010203\) {2}!! \[NATIVE_TAIL_MISMATCH\] @\d+: the schema of \/Script\/Game\.CThing does not fit export "Short": Radius: runs past the export's end/);
  });
});
