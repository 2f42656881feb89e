/**
 * The texture encoder as a cook sees it, with the real basisu: its identity and levels are in the
 * cook key (a new build or another level re-cooks the textures, and says "encoder"); a texture
 * that fell back to RGBA8 because basisu could not run is never cached, so it is re-tried and
 * re-warned on every cook and becomes KTX2 as soon as basisu works again; an encoder that hangs
 * fails its textures by name while the rest of the cook goes on.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../config/defaults.js';
import { cookProject, type CookSummary } from '../../cook/cookProject.js';
import { findBasisu } from '../../cook/texture/index.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { decodeExport, parsePackage } from '../../src/format/packageReader.js';
import { initHash } from '../../src/util/hash.js';
import { encodePng } from '../../samples/generate/png.js';
import { processGone, readPids, waitFor } from '../helpers/processes.js';
import { asset, g, tempDir, writeFixture, writeProject } from './helpers.js';

const REAL = findBasisu().path;
beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

function texture(guid: string, name: string, compression: string, shade: number) {
  const data = new Uint8Array(32 * 32 * 3);
  for (let i = 0; i < data.length; i++) data[i] = (shade + i * 7) & 255;
  const png = encodePng({ width: 32, height: 32, color: 'rgb', data });
  return {
    exports: [
      {
        guid,
        name,
        className: '/Script/Engine.CTexture',
        properties: [prop.bool('SRGB', true), prop.bytes('SourceData', png), prop.bool('GenerateMips', true), prop.enum('Compression', 'ETextureCompression', `ETextureCompression::${compression}`)],
      },
    ],
  };
}

/** A map using a mesh and three textures: two for basisu (ETC1S, UASTC) and one UI (RGBA8). */
async function project(textures: Record<string, unknown> = {}): Promise<string> {
  const dir = await tempDir('lumina-texenc-');
  dirs.push(dir);
  await writeProject(dir, { cookRoots: ['/Game/Maps/Main'], textures }, {
    'Content/Maps/Main.lasset': asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), hard(g(3)), hard(g(4)), hard(g(5))] }),
    'Content/Props/Rock.lasset': asset(g(2), 'Rock'),
    'Content/Textures/T_Rock_D.lasset': texture(g(3), 'T_Rock_D', 'Default', 10),
    'Content/Textures/T_Rock_N.lasset': texture(g(4), 'T_Rock_N', 'Normalmap', 99),
    'Content/UI/T_Logo.lasset': texture(g(5), 'T_Logo', 'UserInterface', 200),
  });
  return dir;
}

async function setTextures(dir: string, textures: Record<string, unknown>): Promise<void> {
  const file = path.join(dir, 'lumina-cook.json');
  const cfg = JSON.parse(await fsp.readFile(file, 'utf8'));
  await fsp.writeFile(file, JSON.stringify({ ...cfg, textures }));
}

async function cookedFormat(dir: string, rel: string): Promise<unknown> {
  const pkg = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game', rel)), rel), rel);
  return decodeExport(pkg, 0).find((p) => p.name === 'Format')?.value;
}

async function cookedProp(dir: string, rel: string, name: string): Promise<unknown> {
  const pkg = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game', rel)), rel), rel);
  return decodeExport(pkg, 0).find((p) => p.name === name)?.value;
}

const problemsOf = (s: CookSummary) => s.problems.map(({ severity, code, message, file }) => ({ severity, code, message, file: path.basename(file ?? '') }));

describe.skipIf(REAL === null)('the texture encoder in the cook key', () => {
  it('another basisu level or build re-cooks the textures (reason "encoder") and nothing else', async () => {
    const dir = await project();
    expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 5 });
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 0, cached: 5 });

    await setTextures(dir, { etc1sQuality: 200 });
    // All three textures: the UI one too, since the key is per texture package, not per format.
    expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 3, cached: 2, recooked: { encoder: 3 } });
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 0 });

    // The same basisu behind another executable: a different build as far as the key can tell.
    const wrapper = path.join(dir, 'basisu-wrapper.sh');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec '${REAL}' "$@"\n`, { mode: 0o755 });
    await setTextures(dir, { etc1sQuality: 200, encoderPath: 'basisu-wrapper.sh' });
    expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 3, recooked: { encoder: 3 } });
    expect(await cookedFormat(dir, 'Textures/T_Rock_D.lasset')).toBe('KTX2_ETC1S');
  });

  it('a texture export in a package of another class (the worker sends it back) is cooked with basisu on the main thread', async () => {
    const dir = await project();
    // A material whose package also holds a texture: its class says nothing of it, so it goes to a
    // cook worker, which finds the texture and hands the package back to the main thread's encoder.
    const tex = texture(g(7), 'T_Inner', 'Default', 40).exports[0];
    await writeFixture(dir, 'Content/Materials/M_Rock.lasset', { imports: [], exports: [{ guid: g(6), name: 'M_Rock', className: '/Script/Engine.CMaterial' }, tex] });
    await writeFixture(dir, 'Content/Maps/Main.lasset', asset(g(1), 'Main', { className: '/Script/Engine.CWorld', imports: [hard(g(2)), hard(g(3)), hard(g(4)), hard(g(5)), hard(g(6))] }));
    const first = await cookProject({ projectDir: dir, report: false });
    expect(first).toMatchObject({ ok: true, cooked: 6, failed: 0, problems: [] });
    const rel = 'Materials/M_Rock.lasset';
    const pkg = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game', rel)), rel), rel);
    expect(decodeExport(pkg, 1).find((p) => p.name === 'Format')?.value).toBe('KTX2_ETC1S');
    expect(await cookProject({ projectDir: dir, report: false })).toMatchObject({ cooked: 0, cached: 6 });
  });

  it('a texture that fell back to RGBA8 is never cached: warned on every cook, KTX2 once basisu runs again', async () => {
    const dir = await project();
    fs.writeFileSync(path.join(dir, 'broken-basisu'), 'not a program', { mode: 0o644 });
    await setTextures(dir, { encoderPath: 'broken-basisu' });
    const reason = `stored as RGBA8: basisu could not start: spawn ${path.join(dir, 'broken-basisu')} EACCES`;
    const warned = [
      { severity: 'warning', code: 'TEXTURE_INVALID', message: reason, file: 'T_Rock_D.lasset' },
      { severity: 'warning', code: 'TEXTURE_INVALID', message: reason, file: 'T_Rock_N.lasset' },
    ];
    const first = await cookProject({ projectDir: dir });
    expect(first).toMatchObject({ ok: true, cooked: 5 });
    expect(problemsOf(first).sort((a, b) => a.file.localeCompare(b.file))).toEqual(warned);
    expect(await cookedFormat(dir, 'Textures/T_Rock_D.lasset')).toBe('RGBA8');

    // Still broken: the two fallbacks cook again and warn again; everything else is cached.
    const second = await cookProject({ projectDir: dir });
    expect(second).toMatchObject({ ok: true, cooked: 2, cached: 3 });
    expect(problemsOf(second).sort((a, b) => a.file.localeCompare(b.file))).toEqual(warned);

    // Fixed: the real encoding, no warning, and from then on cached.
    await setTextures(dir, {});
    const fixed = await cookProject({ projectDir: dir });
    expect(fixed).toMatchObject({ ok: true, cooked: 3, problems: [] });
    expect(await cookedFormat(dir, 'Textures/T_Rock_D.lasset')).toBe('KTX2_ETC1S');
    expect(await cookedFormat(dir, 'Textures/T_Rock_N.lasset')).toBe('KTX2_UASTC');
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 0, cached: 5 });
  });
});

describe.skipIf(REAL === null)('textures.* levels reach basisu', () => {
  it('etc1sQuality, etc1sEffort and uastcLevel are the flags basisu runs with, and change what it writes', async () => {
    const dir = await project();
    // The real basisu behind a wrapper that logs each run's flags.
    const log = path.join(dir, 'runs.log');
    fs.writeFileSync(path.join(dir, 'basisu-logged.sh'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${REAL}' "$@"\n`, { mode: 0o755 });
    const runs = () => fs.readFileSync(log, 'utf8').trim().split('\n');
    const flag = (run: string, name: string) => run.split(' ')[run.split(' ').indexOf(name) + 1];

    const cooked = async (textures: Record<string, unknown>) => {
      fs.rmSync(log, { force: true });
      await setTextures(dir, { encoderPath: 'basisu-logged.sh', ...textures });
      expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, problems: [] });
      const etc1s = runs().find((r) => r.includes(' -q '))!;
      const uastc = runs().find((r) => r.includes(' -uastc '))!;
      return {
        flags: { q: flag(etc1s, '-q'), effort: flag(etc1s, '-comp_level'), uastc: flag(uastc, '-uastc_level') },
        d: (await cookedProp(dir, 'Textures/T_Rock_D.lasset', 'PlatformData')) as Uint8Array,
        n: (await cookedProp(dir, 'Textures/T_Rock_N.lasset', 'PlatformData')) as Uint8Array,
      };
    };
    const low = await cooked({ etc1sQuality: 1, etc1sEffort: 0, uastcLevel: 0 });
    expect(low.flags).toEqual({ q: '1', effort: '0', uastc: '0' });
    const high = await cooked({ etc1sQuality: 255, etc1sEffort: 4, uastcLevel: 3 });
    expect(high.flags).toEqual({ q: '255', effort: '4', uastc: '3' });
    // A larger ETC1S codebook takes more bytes; another UASTC level writes other blocks.
    expect(high.d.byteLength).toBeGreaterThan(low.d.byteLength);
    expect(Buffer.from(high.n).equals(Buffer.from(low.n))).toBe(false);
    // Nothing set: the defaults (config/defaults.ts).
    const defaults = await cooked({});
    expect(defaults.flags).toEqual({ q: String(DEFAULTS.textures.etc1sQuality), effort: String(DEFAULTS.textures.etc1sEffort), uastc: String(DEFAULTS.textures.uastcLevel) });
  });
});

describe('a hung encoder in a cook', () => {
  it('is killed, retried once, and fails each texture by name; the rest of the cook goes on', async () => {
    const dir = await project({ encoderPath: 'hanging-basisu', encoderTimeoutMs: 1000 });
    const pids = path.join(dir, 'hung.pids');
    fs.writeFileSync(path.join(dir, 'hanging-basisu'), `#!/bin/sh\necho $$ >> '${pids}'\nsleep 3000 &\necho $! >> '${pids}'\nwait\n`, { mode: 0o755 });
    const s = await cookProject({ projectDir: dir });
    expect(s).toMatchObject({ ok: false, failed: 2, cooked: 3 });
    expect(problemsOf(s).sort((a, b) => a.file.localeCompare(b.file))).toEqual(
      ['T_Rock_D.lasset', 'T_Rock_N.lasset'].map((file) => ({ severity: 'error', code: 'COOK_FAILED', message: 'basisu timed out after 1 s and was killed (retried once)', file })),
    );
    expect(s.paks).toEqual([]);
    const hung = readPids(pids);
    // ETC1S and UASTC run apart (different flags): a run each, then a run alone each.
    expect(hung).toHaveLength(8);
    await waitFor(() => hung.every(processGone), 'every hung encoder and its helper to be gone', 10_000);
  });
});
