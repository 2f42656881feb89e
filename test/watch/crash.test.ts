/**
 * Crash safety: run the daemon as a child process, edit content while it works, kill -9 it at
 * seeded random moments, and after every kill check what is on disk under final names: every pak
 * opens and verifies (pak verify), the cook cache parses and each entry's output exists with the
 * recorded size and hash. Then restart once more, let it settle, and check the shipped content is
 * the last thing written, no temp file is left, and SIGTERM stops it cleanly (exit 0, daemon.json gone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pakVerify } from '../../cli/commands/pak.js';
import { CACHE_FILE_NAME, CookCache } from '../../cook/cookCache.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { TEMP_MARKER } from '../../src/util/atomicWrite.js';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { daemonStatus } from '../../watch/daemonClient.js';
import { sleep, tempDir, waitFor } from './helpers.js';
import { G, makeProject, savePackage, shippedHas } from './project.js';
import { mulberry32 as rng } from '../helpers/rng.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(repo, 'watch', 'daemonMain.ts');
// Replay or stress: LUMINA_CRASH_SEED=123 LUMINA_CRASH_ITERATIONS=40 npx vitest run test/watch/crash.test.ts
const ITERATIONS = Number(process.env.LUMINA_CRASH_ITERATIONS ?? 8);
const SEED = Number(process.env.LUMINA_CRASH_SEED ?? 0xc0ffee);

function startChild(project: string): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, '--project', project, '--debounce', '20'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LUMINA_LOG_LEVEL: 'warn' },
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => err };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(p);
    }
  };
  await walk(dir);
  return out;
}

/** Everything under final names is whole: paks verify, cache entries point at the outputs they describe. */
async function checkFinalNames(project: string): Promise<void> {
  const paksDir = path.join(project, 'Saved', 'Paks');
  const paks = (await filesUnder(paksDir)).filter((f) => f.endsWith('.pak'));
  const verified = await pakVerify(paks);
  expect(verified.data.paks.filter((p) => !p.ok)).toEqual([]);

  // The cache as the next start loads it: snapshot plus journal.
  const { cache, warning } = await CookCache.load(path.join(project, 'Intermediates', CACHE_FILE_NAME), path.join(project, 'Saved', 'Cooked'));
  expect(warning).toBeUndefined();
  for (const [guid, e] of cache.list()) {
    const out = path.join(project, 'Saved', 'Cooked', ...e.cookedFile.split('/'));
    const bytes = await fsp.readFile(out).catch(() => undefined);
    expect(bytes, `cache entry ${guid} names ${e.cookedFile}, which was never written`).toBeDefined();
    expect(bytes!.byteLength).toBe(e.cookedSize);
    const raw = e.cookedFile.endsWith('.lasset') ? await decodeCooked(bytes!, out) : bytes!;
    expect(hashHex(xxh64(raw))).toBe(e.xxh64);
  }
}

describe('kill -9 at random moments', () => {
  let root: string | undefined;
  afterAll(async () => {
    if (root) await fsp.rm(root, { recursive: true, force: true });
  });

  it(`leaves only whole outputs under final names, ${ITERATIONS} kills, then recovers`, async () => {
    await initHash();
    root = await tempDir('lumina-crash-');
    const p = await makeProject(root);
    const rand = rng(SEED);
    const rockFile = path.join(p.content, 'Meshes', 'Rock.lasset');
    const treeFile = path.join(p.content, 'Meshes', 'Tree.lasset');
    let edit = 0;
    let lastRock = 'rock-v1';
    let treeShips = false;

    for (let i = 0; i < ITERATIONS; i++) {
      const { child, exited } = startChild(p.dir);
      // Kill somewhere between "still starting" and "mid-edits": tsx start-up alone is ~0.5-1 s.
      const killAt = Date.now() + 300 + Math.floor(rand() * 1700);
      while (Date.now() < killAt) {
        const r = rand();
        edit++;
        if (r < 0.6) {
          lastRock = `rock-e${edit}`;
          await savePackage(rockFile, 'Rock', G.rock, lastRock);
        } else if (r < 0.8) {
          // Add or drop Tree, and Main's reference to it: a change of what ships.
          treeShips = !treeShips;
          if (treeShips) await savePackage(treeFile, 'Tree', G.tree, `tree-e${edit}`);
          else await fsp.rm(treeFile, { force: true });
          await savePackage(path.join(p.content, 'Maps', 'Main.lasset'), 'Main', G.main, `main-e${edit}`, treeShips ? [G.rock, G.tree] : [G.rock]);
        } else {
          await fsp.writeFile(path.join(p.content, 'UI', 'Menu.rml'), `<rml>menu-e${edit}</rml>`);
        }
        await sleep(10 + Math.floor(rand() * 60));
      }
      child.kill('SIGKILL');
      await exited;
      await checkFinalNames(p.dir);
    }

    // Restart and settle: the paks must now show the last edit, with nothing left half-done.
    const { child, exited, stderr } = startChild(p.dir);
    const inter = path.join(p.dir, 'Intermediates');
    await waitFor(
      async () => {
        const s = await daemonStatus(inter).catch(() => undefined);
        return s !== undefined && s.pid === child.pid && s.state === 'idle' && s.queue === 0;
      },
      `the restarted daemon to settle (${stderr()})`,
      30_000,
      50,
    );
    await waitFor(() => shippedHas(p.paks, '/Game/Meshes/Rock.lasset', lastRock), `${lastRock} in the paks`, 10_000);
    expect(await shippedHas(p.paks, '/Game/Meshes/Tree.lasset', 'tree-')).toBe(treeShips);
    const temps = [...(await filesUnder(path.join(p.dir, 'Saved'))), ...(await filesUnder(inter))].filter((f) => f.includes(TEMP_MARKER));
    expect(temps).toEqual([]);
    await checkFinalNames(p.dir);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fs.existsSync(path.join(inter, 'daemon.json'))).toBe(false);
  }, 60_000 + ITERATIONS * 6_000);
});
