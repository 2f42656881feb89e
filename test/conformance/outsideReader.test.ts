/**
 * FORMAT.md is a contract with outside tools: a reader written from it alone, in another language
 * (read_lumina.py beside this file, with its own xxh64 and DEFLATE), must accept what the cook
 * writes: the chunk paks, every entry, the LCKD files, the registry and the shader caches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cookProject } from '../../cook/cookProject.js';
import { initHash } from '../../src/util/hash.js';
import { decodeShaderCache } from '../../src/format/shaderCache.js';
import { PakReader } from '../../pak/PakReader.js';
import { REPO } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const run = promisify(execFile);
const READER = path.join(REPO, 'test/conformance/read_lumina.py');
let project: string;

async function readEntry(pak: string, entry: string): Promise<Uint8Array> {
  const r = await PakReader.open(pak);
  try {
    return await r.readEntry(entry);
  } finally {
    await r.close();
  }
}

beforeAll(async () => {
  await initHash();
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-outside-'));
  await copySampleProject(project);
});

afterAll(async () => {
  await fs.rm(project, { recursive: true, force: true });
});

describe('an outside reader written from FORMAT.md', () => {
  it('reads the cooked sample: paks, entries, LCKD files and the registry', async () => {
    const summary = await cookProject({ projectDir: project });
    expect(summary.ok).toBe(true);
    const paks = summary.paks.map((p) => p.file);
    const { stdout } = await run('python3', [READER, ...paks, '--cooked', path.join(project, 'Saved/Cooked')]);
    const out = JSON.parse(stdout);
    const shippedPackages = summary.paks.reduce((n, p) => n + p.entries, 0) - 2 * paks.length /* registries, shader caches */ - 3; /* text assets */
    expect(out.packages).toBe(shippedPackages);
    expect(out.registry.assets).toHaveLength(shippedPackages);
    expect(out.registry.texts.map((t: { path: string }) => t.path).sort()).toEqual(['/Game/Scripts/Game.luau', '/Game/UI/MainMenu.rcss', '/Game/UI/MainMenu.rml']);
    expect(out.registry.assets.find((a: { path: string }) => a.path === '/Game/Maps/Main')).toMatchObject({ name: 'Main', class: '/Script/Engine.CWorld', flags: 1 });
    expect(Object.values(out.paks).map((p) => (p as { patch: boolean }).patch)).toEqual([false, false]);
    // Every pak's ShaderCache.bin, as the outside reader decoded it, is what the cook wrote.
    for (const pak of paks) {
      const mine = decodeShaderCache(await readEntry(pak, '/ShaderCache.bin'), pak);
      expect(out.shaders[pak]).toEqual({
        compiler: mine.compiler,
        permutations: mine.permutations.map((p) => ({ key: p.key.toString(16).padStart(16, '0'), source: p.source, entry: p.entry, stage: p.stage, defines: p.defines, codeSize: p.code.byteLength })),
      });
    }
    // The sample's materials ask for 8 Lit.hlsl permutations over both chunks, plus the global compute shader in Main.
    const keys = new Set(paks.flatMap((p) => out.shaders[p].permutations.map((x: { key: string }) => x.key)));
    expect(keys.size).toBe(summary.shaders.permutations);
    expect(summary.shaders.permutations).toBe(9);
    expect(out.shaders[paks[0]].permutations.map((p: { stage: string }) => p.stage)).toContain('compute');
  });

  it('rejects a pak with one flipped byte', async () => {
    const pak = path.join(project, 'Saved/Paks/Main.pak');
    const bytes = await fs.readFile(pak);
    bytes[100] ^= 0x40;
    const bad = path.join(project, 'Bad.pak');
    await fs.writeFile(bad, bytes);
    await expect(run('python3', [READER, bad])).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/^bad: /) });
  });
});
