/**
 * `cook` when the project's Saved folder is a file: a user error (exit 1, typed, naming the
 * output it could not write), not an internal error with a stack from the temp-file cleanup.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let project: string;
beforeAll(async () => {
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-savedfile-'));
  await copySampleProject(project);
  await fs.writeFile(path.join(project, 'Saved'), 'not a folder');
});
afterAll(async () => {
  await fs.rm(project, { recursive: true, force: true });
});

describe('cook with Saved as a file', () => {
  it('exits 1 with IO_FAILED naming the output, no stack, and leaves the file alone', async () => {
    const r = await runCli(['cook', '--project', project, '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at |internal error|"level":"fatal"/);
    const lines = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as { code?: string; file?: string; msg?: string; message?: string });
    const io = lines.filter((l) => l.code === 'IO_FAILED');
    expect(io.length).toBeGreaterThan(0);
    for (const l of io) {
      expect(l.file!.startsWith(path.join(project, 'Saved') + path.sep), l.file).toBe(true);
      expect(l.msg ?? l.message).toBe('write failed: a part of the path is not a folder (ENOTDIR)');
    }
    expect(lines.some((l) => l.code === 'COOK_FAILED')).toBe(false);
    expect(await fs.readFile(path.join(project, 'Saved'), 'utf8')).toBe('not a folder');
  });
});
