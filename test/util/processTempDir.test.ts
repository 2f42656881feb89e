/**
 * Per-process scratch folders on a real filesystem with real processes: a folder is removed when
 * its process exits, and one a killed process left behind is swept by the next process that makes
 * one under the same root (the shader compiler's folders used to pile up in /tmp, one per
 * test-runner fork or killed cook).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProcessTempDir } from '../../src/util/processTempDir.js';
import { REPO, TSX_LOADER } from '../helpers/runCli.js';

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-proctemp-'));
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** Run a Node script that makes a folder under `root` and prints it; `then` is its last statement. */
async function child(then: string): Promise<{ dir: string; code: number | null; signal: NodeJS.Signals | null }> {
  const mod = JSON.stringify(pathToFileURL(path.join(REPO, 'src/util/processTempDir.ts')).href);
  const script = `import { makeProcessTempDir } from ${mod};
const dir = makeProcessTempDir(${JSON.stringify(root)}, 'lumina-x-');
(await import('node:fs')).writeFileSync(dir + '/work.bin', 'scratch');
process.stdout.write(dir + '\\n');
${then}`;
  const p = spawn(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => p.on('close', (c, s) => resolve([c, s])));
  return { dir: out.trim(), code, signal };
}

describe('makeProcessTempDir', () => {
  it('removes the folder when its process exits', async () => {
    const run = await child('');
    expect(run.code).toBe(0);
    expect(path.basename(run.dir)).toMatch(/^lumina-x-\d+-/);
    expect(fs.existsSync(run.dir)).toBe(false);
  });

  it("sweeps a killed process's folder on the next make, and keeps live and foreign ones", async () => {
    const killed = await child("process.kill(process.pid, 'SIGKILL');");
    expect(killed.signal).toBe('SIGKILL');
    expect(fs.readFileSync(path.join(killed.dir, 'work.bin'), 'utf8')).toBe('scratch');
    // A folder of a process that is alive (this one's parent) and one of another tool.
    const live = path.join(root, `lumina-x-${process.ppid}-live`);
    const foreign = path.join(root, `lumina-xy-${spawnSync('true').pid}-other`);
    fs.mkdirSync(live);
    fs.mkdirSync(foreign);

    const mine = makeProcessTempDir(root, 'lumina-x-');
    expect(fs.existsSync(killed.dir)).toBe(false);
    expect(fs.readdirSync(root).sort()).toEqual([path.basename(foreign), path.basename(live), path.basename(mine)].sort());
  });
});
