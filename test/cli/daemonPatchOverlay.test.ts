/**
 * Three CLI features through the real CLI: `daemon cook --wait` against a real `watch` daemon,
 * `patch --base` resolved against the project (with a hint when the release is missing), and
 * `pak ls/cat/extract --overlay DIR` resolving through a loose-file folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonStatus } from '../../watch/daemonClient.js';
import { REPO, runCli, TSX_LOADER } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let dir: string;
let project: string;
let daemon: ChildProcess | undefined;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-cli-features-'));
  project = path.join(dir, 'project');
  await copySampleProject(project);
}, 60_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null) {
    daemon.kill('SIGKILL');
    await new Promise((r) => daemon!.once('close', r));
  }
  await fs.rm(dir, { recursive: true, force: true });
});

describe('daemon cook --wait', () => {
  it('waits for the cook it started and prints its result; --json gives { ok, id, cook }', async () => {
    daemon = spawn(process.execPath, ['--import', TSX_LOADER, path.join(REPO, 'cli/main.ts'), 'watch', '--project', project, '--json'], {
      env: { ...process.env, CI: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr!.on('data', (d) => (log += d));
    // The daemon is up once its status answers idle (asked in-process: spawning a CLI per poll is slow).
    const inter = path.join(project, 'Intermediates');
    for (;;) {
      const s = await daemonStatus(inter).catch(() => undefined);
      if (s?.state === 'idle') break;
      expect(daemon.exitCode, log).toBeNull();
      await new Promise((r) => setTimeout(r, 100));
    }
    const text = await runCli(['daemon', 'cook', '--wait', '--project', project]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^started (cook-\d+)\n\1 finished in \d+ ms: \d+ assets \(\d+ cooked, \d+ cached, 0 failed\)\n$/);

    const json = await runCli(['daemon', 'cook', '--wait', '--project', project, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout);
    expect(r).toMatchObject({ ok: true, joined: false, cook: { id: r.id, kind: 'full', ok: true, ms: expect.any(Number) } });
    // The cook it waited for is over: a status right after shows it as done.
    const status = await daemonStatus(inter);
    expect(status.recentCooks?.map((c) => c.id)).toContain(r.id);

    const misuse = await runCli(['daemon', 'status', '--wait', '--project', project]);
    expect(misuse.code).toBe(2);

    expect((await runCli(['daemon', 'stop', '--project', project])).code).toBe(0);
    const code = await new Promise((r) => (daemon!.exitCode !== null ? r(daemon!.exitCode) : daemon!.once('close', r)));
    expect(code).toBe(0);
  }, 240_000);
});

describe('patch --base', () => {
  it('resolves a release folder or name against the project, whatever the working folder', async () => {
    const release = await runCli(['cook', '--project', project, '--release', '1.0']);
    expect(release.code, release.stderr).toBe(0);
    await fs.writeFile(path.join(project, 'Content/UI/MainMenu.rcss'), 'body { color: red; }\n');
    // cwd is not the project: the relative --base is still found inside it.
    const byPath = await runCli(['patch', '--project', project, '--base', 'Saved/Releases/1.0', '--out', path.join(dir, 'p1.pak')], { cwd: dir });
    expect(byPath.code, byPath.stderr).toBe(0);
    expect(byPath.stdout).toMatch(/against "1\.0".*1 changed/);
    const byName = await runCli(['patch', '--project', project, '--base', '1.0', '--out', 'p2.pak', '--json'], { cwd: dir });
    expect(byName.code, byName.stderr).toBe(0);
    expect(JSON.parse(byName.stdout)).toMatchObject({ ok: true, changed: ['/Game/UI/MainMenu.rcss'], file: path.join(dir, 'p2.pak') });
  }, 180_000);

  it('a missing release names where it looked and hints at cook --release', async () => {
    const r = await runCli(['patch', '--project', project, '--base', '2.0', '--out', path.join(dir, 'p3.pak')], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('[PATCH_BASE_INVALID]');
    expect(r.stderr).toContain(`no release at ${path.join(project, '2.0')} (releases here: 1.0)`);
    expect(r.stderr).toContain('lumina-cook cook --release 2.0');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    await expect(fs.stat(path.join(dir, 'p3.pak'))).rejects.toThrow();
  }, 180_000);
});

describe('pak ls/cat/extract --overlay', () => {
  it('resolve through a loose-file folder first, then the paks', async () => {
    const paks = path.join(project, 'Saved/Paks');
    const overlay = path.join(dir, 'overlay');
    await fs.mkdir(path.join(overlay, 'Game/UI'), { recursive: true });
    await fs.writeFile(path.join(overlay, 'Game/UI/MainMenu.rml'), 'LOOSE');
    await fs.writeFile(path.join(overlay, 'Game/Extra.luau'), 'return 1');
    const main = path.join(paks, 'Main.pak');

    const ls = await runCli(['pak', 'ls', main, '--overlay', overlay, '--json']);
    expect(ls.code, ls.stderr).toBe(0);
    const listed = JSON.parse(ls.stdout) as { ok: boolean; paths: Array<{ path: string; source: string; rawSize: number }> };
    const by = new Map(listed.paths.map((p) => [p.path, p]));
    expect(by.get('/Game/UI/MainMenu.rml')).toEqual({ path: '/Game/UI/MainMenu.rml', source: 'overlay', rawSize: 5 });
    expect(by.get('/Game/Extra.luau')?.source).toBe('overlay');
    expect(by.get('/Game/Maps/Main.lasset')?.source).toBe(main);

    const cat = await runCli(['pak', 'cat', main, '/Game/UI/MainMenu.rml', '--overlay', overlay]);
    expect(cat.stdout).toBe('LOOSE');
    const plain = await runCli(['pak', 'cat', main, '/Game/UI/MainMenu.rml']);
    expect(plain.stdout).toContain('<rml>');

    const out = path.join(dir, 'extracted');
    const ex = await runCli(['pak', 'extract', main, '--overlay', overlay, '--out', out]);
    expect(ex.code, ex.stderr).toBe(0);
    expect(await fs.readFile(path.join(out, 'Game/UI/MainMenu.rml'), 'utf8')).toBe('LOOSE');
    expect(await fs.readFile(path.join(out, 'Game/Extra.luau'), 'utf8')).toBe('return 1');
    expect((await fs.stat(path.join(out, 'Game/Maps/Main.lasset'))).size).toBeGreaterThan(0);

    const missing = await runCli(['pak', 'ls', main, '--overlay', path.join(dir, 'no-such-folder')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('is not a folder');
  }, 180_000);
});
