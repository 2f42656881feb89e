/**
 * Bad input is normal input: a truncated package and a missing sidecar in a real project, cooked
 * through the CLI under --ci. Each problem is reported once, naming its file; the rest of the
 * content still cooks; no stack trace; exit code 1; the last good paks are untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let project: string;

beforeAll(async () => {
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-badinput-'));
  await copySampleProject(project);
});

afterAll(async () => {
  await fs.rm(project, { recursive: true, force: true });
});

interface LogLine {
  level: number;
  code?: string;
  file?: string;
  msg: string;
}

describe('a cook of a project with bad content', () => {
  it('reports each problem once with its file, and keeps the good paks', async () => {
    const good = await runCli(['cook', '--project', project, '--ci']);
    expect(good.code, good.stderr).toBe(0);
    // The cook report's path is the last line of the summary.
    expect(good.stdout.trim().split('\n').at(-1)).toBe(`report: ${path.join(project, 'Saved/Reports/cook.html')}`);
    const mainPak = path.join(project, 'Saved/Paks/Main.pak');
    const before = await fs.readFile(mainPak);

    const crate = path.join(project, 'Content/Meshes/Crate.lasset');
    await fs.writeFile(crate, (await fs.readFile(crate)).subarray(0, 100));
    await fs.rm(path.join(project, 'Content/UI/MainMenu.rml.lmeta'));

    const bad = await runCli(['cook', '--project', project, '--ci', '--json']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const lines = bad.stderr.trim().split('\n').map((l) => JSON.parse(l) as LogLine);
    const errorsOf = (code: string) => lines.filter((l) => l.code === code);
    expect(errorsOf('PACKAGE_TRUNCATED')).toEqual([
      expect.objectContaining({ file: crate, msg: 'export table: needs 144 bytes at offset 65 but the file ends at 100' }),
    ]);
    expect(errorsOf('LMETA_MISSING')).toEqual([expect.objectContaining({ file: path.join(project, 'Content/UI/MainMenu.rml') })]);
    // --ci never writes into the source tree.
    await expect(fs.stat(path.join(project, 'Content/UI/MainMenu.rml.lmeta'))).rejects.toThrow();
    // Main references the broken Crate: a missing dependency naming the referrer.
    expect(errorsOf('DEPENDENCY_MISSING').map((l) => path.basename(l.file!))).toContain('Main.lasset');

    const summary = JSON.parse(bad.stdout);
    expect(summary.ok).toBe(false);
    expect(summary.report).toEqual({ html: path.join(project, 'Saved/Reports/cook.html'), json: path.join(project, 'Saved/Reports/cook-report.json') });
    expect(summary.cooked + summary.cached).toBeGreaterThan(10);
    expect((await fs.readFile(mainPak)).equals(before)).toBe(true);
  });
});
