/**
 * No lost work: a cook killed with SIGKILL, or stopped with Ctrl-C (SIGINT), keeps every asset it
 * finished; the next cook reports them as cached. SIGINT ends cleanly: the summary, exit 130, no pak.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCookJournal } from '../../cook/cookJournal.js';
import { cookProject } from '../../cook/cookProject.js';
import { generateProject } from '../../samples/generate/generateProject.js';
import { initHash } from '../../src/util/hash.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function bigProject(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-interrupt-'));
  dirs.push(dir);
  await generateProject({ out: dir, assets: 1500, seed: 7, textureEncoder: 'rgba8' });
  return dir;
}

/** GUIDs the journal holds a finished entry for now (a torn last frame is not one). */
function journaled(dir: string): Set<string> {
  const done = new Set<string>();
  for (const frame of readCookJournal(fs.readFileSync(path.join(dir, 'Intermediates', 'CookCache.journal'))).frames) {
    for (const op of frame.ops) {
      if (op.kind === 'set') done.add(op.guid);
      else if (op.kind === 'delete') done.delete(op.guid);
    }
  }
  return done;
}

function startCook(dir: string) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, path.join(REPO, 'cli/main.ts'), 'cook', '--project', dir], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: '1', LUMINA_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { child, exited, stdout: () => stdout };
}

/** Wait until the journal holds at least `n` finished assets (polling; no timing assumption). */
async function journalReaches(dir: string, n: number, running: () => boolean): Promise<void> {
  const file = path.join(dir, 'Intermediates', 'CookCache.journal');
  for (;;) {
    if (fs.existsSync(file) && journaled(dir).size >= n) return;
    if (!running()) throw new Error('the cook ended before the journal had the assets to interrupt at');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('an interrupted cook keeps every finished asset', () => {
  it('kill -9 mid-cook: the re-run reports the journaled assets as cached', async () => {
    const dir = await bigProject();
    const run = startCook(dir);
    let running = true;
    void run.exited.then(() => (running = false));
    await journalReaches(dir, 100, () => running);
    run.child.kill('SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    const finished = journaled(dir);
    expect(finished.size).toBeGreaterThanOrEqual(100);

    const again = await cookProject({ projectDir: dir });
    expect(again.ok).toBe(true);
    const cached = new Set(again.assetReports.filter((r) => r.status === 'cached').map((r) => r.guid));
    expect([...finished].filter((g) => !cached.has(g))).toEqual([]);
    expect(again.cooked + again.cached).toBe(again.assets);
  }, 120_000);

  it('Ctrl-C: the assets in flight finish, a summary, exit 130, no pak; the re-run has them cached', async () => {
    const dir = await bigProject();
    const run = startCook(dir);
    let running = true;
    void run.exited.then(() => (running = false));
    await journalReaches(dir, 100, () => running);
    run.child.kill('SIGINT');
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stdout()).toMatch(/^cook INTERRUPTED: 1\d\d\d assets/);
    const m = /error COOK_FAILED .*lumina-cook\.json: interrupted after (\d+) of (\d+) assets/.exec(run.stdout());
    expect(m).not.toBeNull();
    const finished = Number(m![1]);
    // It stopped soon after the signal, not at the end.
    expect(finished).toBeLessThan(Number(m![2]));
    expect(fs.existsSync(path.join(dir, 'Saved', 'Paks', 'Main.pak'))).toBe(false);

    const again = await cookProject({ projectDir: dir });
    expect(again.ok).toBe(true);
    expect(again.cached).toBe(finished);
    expect(again.cooked).toBe(again.assets - finished);
  }, 120_000);
});
