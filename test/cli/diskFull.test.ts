/**
 * A full disk mid-cook: a real tmpfs of a few hundred KiB holds Saved/. The cook must fail with a
 * clear error naming the file, leave no temp files, and keep the paks of the last good cook intact.
 * Needs root to mount tmpfs (CI runs as root here); elsewhere the test is skipped, not faked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildPackage, prop } from '../../src/format/packageBuilder.js';
import { runCli } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let root: string;
let mountDir: string;
let mounted = false;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-diskfull-'));
  mountDir = path.join(root, 'small');
  await fs.mkdir(mountDir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=320k', 'tmpfs', mountDir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    mounted = false;
  }
});

afterAll(async () => {
  if (mounted) execFileSync('umount', [mountDir], { stdio: 'ignore' });
  await fs.rm(root, { recursive: true, force: true });
});

async function listAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out;
}

describe('a full disk', () => {
  it('fails the cook naming the file and keeps the last good paks', async (ctx) => {
    if (!mounted) ctx.skip();
    const project = path.join(root, 'project');
    await copySampleProject(project);
    const cfgFile = path.join(project, 'lumina-cook.json');
    const cfg = JSON.parse(await fs.readFile(cfgFile, 'utf8'));
    cfg.savedDir = path.join(mountDir, 'Saved');
    await fs.writeFile(cfgFile, JSON.stringify(cfg));

    const good = await runCli(['cook', '--project', project]);
    expect(good.code, good.stderr).toBe(0);
    const mainPak = path.join(mountDir, 'Saved/Paks/Main.pak');
    const before = await fs.readFile(mainPak);

    // A Primary asset with 400 KiB of incompressible data cannot fit in what is left.
    await fs.writeFile(
      path.join(project, 'Content/Data/Huge.lasset'),
      buildPackage({
        exports: [{ guid: 'c'.repeat(32), name: 'Huge', className: '/Script/Engine.CDataAsset', assetFlags: 1, properties: [prop.bytes('Blob', crypto.randomBytes(400 * 1024))] }],
      }),
    );
    const full = await runCli(['cook', '--project', project]);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/the disk is full \(ENOSPC\)/);
    expect(full.stderr).not.toMatch(/\n\s+at /);

    expect((await fs.readFile(mainPak)).equals(before)).toBe(true);
    const verify = await runCli(['pak', 'verify', mainPak, path.join(mountDir, 'Saved/Paks/Foliage.pak')]);
    expect(verify.code, verify.stderr).toBe(0);
    const leftovers = (await listAll(mountDir)).filter((f) => f.includes('.lctmp-'));
    expect(leftovers).toEqual([]);
  });
});
