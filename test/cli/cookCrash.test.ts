/**
 * kill -9 a one-shot `cook` at seeded random moments, then cook again: the next cook succeeds,
 * no temp file survives it, every pak verifies, and the paks are byte-identical to those of a
 * cook that was never interrupted. Before that next cook, whatever a kill left under a final
 * name must already be whole (paks verify or are absent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateProject } from '../../samples/index.js';
import { pakVerify } from '../../cli/commands/pak.js';
import { initHash } from '../../src/util/hash.js';
import { Random } from '../../samples/generate/random.js';
import { prop } from '../../src/format/packageBuilder.js';
import { decodeExport, findAssetExport, parsePackage } from '../../src/format/packageReader.js';
import { encodeProperties } from '../../src/format/properties.js';
import { toWritable, writePackage } from '../../src/format/packageWriter.js';
import { REPO, TSX_LOADER, runCli } from '../helpers/runCli.js';

let root: string;

beforeAll(async () => {
  await initHash();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-cookcrash-'));
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out.sort();
}

/** Start a cook and SIGKILL it after `ms`; resolves when it is gone. */
function cookAndKill(project: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, path.join(REPO, 'cli/main.ts'), 'cook', '--project', project, '--json'], {
      stdio: 'ignore',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function pakFiles(project: string): Promise<string[]> {
  return (await files(path.join(project, 'Saved/Paks'))).filter((f) => f.endsWith('.pak'));
}

describe('kill -9 during a cook', () => {
  it('never leaves a half file under a final name, and the next cook repairs everything', async () => {
    const project = path.join(root, 'project');
    const clean = path.join(root, 'clean');
    await generateProject({ out: project, assets: 600, seed: 5, textureEncoder: 'rgba8' });
    await generateProject({ out: clean, assets: 600, seed: 5, textureEncoder: 'rgba8' });

    const rnd = new Random(Number(process.env.LUMINA_CRASH_SEED ?? 20261202));
    for (let i = 0; i < 6; i++) {
      // Content changes between runs so later cooks have real work (and real overwrites) to do.
      if (i % 2 === 1) await fs.rm(path.join(project, 'Intermediates'), { recursive: true, force: true });
      await cookAndKill(project, rnd.int(300, 2500));
      await expectPaksVerify(project, i);
    }

    await expectRepairedLikeClean(project, clean);
    // Eight CLI processes (tsx start-up alone is seconds on a loaded 2-core machine) and three
    // generated projects: a budget per process, as the daemon crash test has, not the default 60 s.
  }, 60_000 + 8 * 15_000);

  it('during a one-file change (the chunk pak and its listing spliced and committed together): never a half file, and the next cook gives the bytes of a cook never interrupted', async () => {
    const project = path.join(root, 'onefile');
    const clean = path.join(root, 'onefile-clean');
    await generateProject({ out: project, assets: 600, seed: 9, textureEncoder: 'rgba8' });
    await generateProject({ out: clean, assets: 600, seed: 9, textureEncoder: 'rgba8' });
    const first = await runCli(['cook', '--project', project]);
    expect(first.code, first.stderr).toBe(0);
    // Every package of the project, the mesh edited the way an editor saves (a new string property).
    const meshes = (await files(path.join(project, 'Content'))).filter((f) => f.includes(`${path.sep}Meshes${path.sep}`) && f.endsWith('.lasset'));
    expect(meshes.length).toBeGreaterThan(2);
    const edit = async (dir: string, file: string, label: string) => {
      const at = path.join(dir, path.relative(project, file));
      const pkg = parsePackage(await fs.readFile(at), at);
      const i = findAssetExport(pkg);
      const out = toWritable(pkg);
      out.exports[i] = { ...out.exports[i], data: encodeProperties([...decodeExport(pkg, i).filter((p) => p.name !== 'CrashEdit'), prop.str('CrashEdit', label)]) };
      await fs.writeFile(at, writePackage(out));
    };
    const rnd = new Random(Number(process.env.LUMINA_CRASH_SEED ?? 20261204));
    for (let i = 0; i < 5; i++) {
      const file = meshes[rnd.int(0, meshes.length - 1)];
      await edit(project, file, `kill ${i}`);
      await edit(clean, file, `kill ${i}`);
      await cookAndKill(project, rnd.int(800, 3500));
      await expectPaksVerify(project, i);
    }

    await expectRepairedLikeClean(project, clean);
    // Nine CLI processes and two generated projects: a budget per process, as above.
  }, 60_000 + 9 * 15_000);
});

/** Every pak the killed cook left verifies (old or new, never torn). */
async function expectPaksVerify(project: string, kill: number): Promise<void> {
  for (const pak of await pakFiles(project)) {
    const r = await pakVerify([pak]);
    expect(r.firstError?.message ?? 'ok', `${pak} after kill ${kill}`).toBe('ok');
  }
}

/**
 * The next cook leaves no temp file, and Saved/Paks (paks and listings) then holds the bytes a
 * cook of `clean` (the same content, never interrupted) writes.
 */
async function expectRepairedLikeClean(project: string, clean: string): Promise<void> {
  const again = await runCli(['cook', '--project', project]);
  expect(again.code, again.stderr).toBe(0);
  const leftovers = [...(await files(path.join(project, 'Saved'))), ...(await files(path.join(project, 'Intermediates')))].filter((f) => f.includes('.lctmp-'));
  expect(leftovers).toEqual([]);
  const fresh = await runCli(['cook', '--project', clean]);
  expect(fresh.code, fresh.stderr).toBe(0);
  const a = await files(path.join(project, 'Saved', 'Paks'));
  const b = await files(path.join(clean, 'Saved', 'Paks'));
  expect(a.map((f) => path.relative(project, f))).toEqual(b.map((f) => path.relative(clean, f)));
  for (let k = 0; k < a.length; k++) expect((await fs.readFile(a[k])).equals(await fs.readFile(b[k])), path.relative(project, a[k])).toBe(true);
}
