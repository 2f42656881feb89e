/**
 * `pak extract` through the real CLI: every way the output folder or the pak's paths can be wrong
 * is a user error (exit 1, a typed error naming the file, no stack), checked before anything is
 * created, and nothing is ever created outside `--out`.
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initHash } from '../../src/util/hash.js';
import { writePak } from '../../pak/writePak.js';
import { REPO, TSX_LOADER, runCli, type CliResult } from '../helpers/runCli.js';
import { tempDir } from './helpers.js';

let dir: string;
let good: string;
const enc = (s: string) => new TextEncoder().encode(s);

beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-extract-');
  good = path.join(dir, 'good.pak');
  await writePak(good, [
    { path: '/Game/Sub/Deep/C.txt', kind: 'bytes', data: enc('c') },
    { path: '/Game/A.txt', kind: 'bytes', data: enc('a') },
  ]);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Exit 1 with one `error [CODE] ...` line and no stack trace. */
function expectUserError(r: CliResult, code: string): string {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
  const line = r.stderr.trim();
  expect(line.startsWith(`error [${code}] `), line).toBe(true);
  return line;
}

async function tree(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(root, { recursive: true, withFileTypes: true })) out.push(path.relative(root, path.join(e.parentPath, e.name)));
  return out.sort();
}

describe('pak extract user errors', () => {
  it('--out naming an existing file (like /etc/passwd) is IO_FAILED, exit 1', async () => {
    const file = path.join(dir, 'a-file');
    await fsp.writeFile(file, 'keep');
    const line = expectUserError(await runCli(['pak', 'extract', good, '--out', file]), 'IO_FAILED');
    expect(line).toContain(`${file}: use as the output folder failed: it is a file, not a folder`);
    expect(await fsp.readFile(file, 'utf8')).toBe('keep');
    expectUserError(await runCli(['pak', 'extract', good, '--out', '/etc/passwd']), 'IO_FAILED');
  });

  it('a pak holding both /a and /a/b is refused before anything is written', async () => {
    const pak = path.join(dir, 'clash.pak');
    await writePak(pak, [
      { path: '/a', kind: 'bytes', data: enc('file') },
      { path: '/a/b', kind: 'bytes', data: enc('under it') },
      { path: '/0first', kind: 'bytes', data: enc('x') },
    ]);
    const out = path.join(dir, 'clash-out');
    const line = expectUserError(await runCli(['pak', 'extract', pak, '--out', out]), 'PAK_PATH_INVALID');
    expect(line).toContain('entry "/a/b" needs "/a" as a folder, but the paks also hold a file there');
    expect(await tree(out)).toEqual([]);
  });

  it('a name longer than the filesystem allows is a typed error, not ENAMETOOLONG with a stack', async () => {
    const longSegment = path.join(dir, 'long-seg.pak');
    await writePak(longSegment, [{ path: `/${'n'.repeat(300)}.txt`, kind: 'bytes', data: enc('x') }]);
    const line = expectUserError(await runCli(['pak', 'extract', longSegment, '--out', path.join(dir, 'long-out')]), 'PAK_PATH_INVALID');
    expect(line).toContain('has a segment of 304 bytes, longer than a file name may be (255)');
    // Every segment fits, the whole path does not (PATH_MAX 4096): the OS says so, typed.
    const longPath = path.join(dir, 'long-path.pak');
    await writePak(longPath, [{ path: '/' + Array.from({ length: 24 }, (_, i) => `${i}`.padEnd(200, 'd')).join('/'), kind: 'bytes', data: enc('x') }]);
    const deep = expectUserError(await runCli(['pak', 'extract', longPath, '--out', path.join(dir, 'deep-out')]), 'IO_FAILED');
    expect(deep).toContain('the name is too long for this filesystem (ENAMETOOLONG)');
  });

  it('a dangling symlink as --out, or inside it, is refused and nothing is created where it points', async () => {
    const nowhere = path.join(dir, 'nowhere');
    const link = path.join(dir, 'dangling');
    await fsp.symlink(nowhere, link);
    const line = expectUserError(await runCli(['pak', 'extract', good, '--out', link]), 'IO_FAILED');
    expect(line).toContain(`${link}: use as the output folder failed: no such file or folder (ENOENT)`);
    await expect(fsp.lstat(nowhere)).rejects.toMatchObject({ code: 'ENOENT' });

    const out = path.join(dir, 'with-dangling');
    await fsp.mkdir(out);
    await fsp.symlink(path.join(dir, 'nowhere2'), path.join(out, 'Game'));
    const inner = expectUserError(await runCli(['pak', 'extract', good, '--out', out]), 'PAK_PATH_INVALID');
    expect(inner).toContain('escapes the output folder through a symlink');
    await expect(fsp.lstat(path.join(dir, 'nowhere2'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a symlink pre-placed in --out is refused before any folder is made outside --out', async () => {
    const out = path.join(dir, 'linked-out');
    const elsewhere = path.join(dir, 'elsewhere');
    await fsp.mkdir(out);
    await fsp.mkdir(elsewhere);
    await fsp.symlink(elsewhere, path.join(out, 'Game'));
    const deepOnly = path.join(dir, 'deep-only.pak');
    await writePak(deepOnly, [{ path: '/Game/Sub/Deep/C.txt', kind: 'bytes', data: enc('c') }]);
    const line = expectUserError(await runCli(['pak', 'extract', deepOnly, '--out', out]), 'PAK_PATH_INVALID');
    expect(line).toContain('escapes the output folder through a symlink');
    // The old extract made elsewhere/Sub/Deep through the link before it noticed.
    expect(await tree(elsewhere)).toEqual([]);
    expect(await tree(out)).toEqual(['Game']);
  });

  it('an --out the user cannot write to is IO_FAILED, exit 1 (run as nobody: root ignores modes)', async () => {
    const locked = path.join(dir, 'locked');
    await fsp.mkdir(locked, { mode: 0o555 });
    await fsp.chmod(locked, 0o555);
    await fsp.chmod(dir, 0o755);
    await fsp.chmod(good, 0o644);
    const r = await runAsNobody(['pak', 'extract', good, '--out', path.join(locked, 'sub')]);
    const line = expectUserError(r, 'IO_FAILED');
    expect(line).toContain('permission denied (EACCES)');
    const r2 = await runAsNobody(['pak', 'extract', good, '--out', locked]);
    expect(expectUserError(r2, 'IO_FAILED')).toContain('permission denied (EACCES)');
    expect(await tree(locked)).toEqual([]);
  });

  it('extracts valid names that merely start with dots, like /..foo', async () => {
    const pak = path.join(dir, 'dots.pak');
    await writePak(pak, [
      { path: '/..foo', kind: 'bytes', data: enc('dots') },
      { path: '/Game/...bar/..baz', kind: 'bytes', data: enc('more') },
    ]);
    const out = path.join(dir, 'dots-out');
    const r = await runCli(['pak', 'extract', pak, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(await fsp.readFile(path.join(out, '..foo'), 'utf8')).toBe('dots');
    expect(await fsp.readFile(path.join(out, 'Game', '...bar', '..baz'), 'utf8')).toBe('more');
  });
});

/** The CLI as uid/gid 65534 (nobody), through setpriv, so file modes apply. */
function runAsNobody(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', TSX_LOADER, path.join(REPO, 'cli/main.ts'), ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1', HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
