/**
 * The progress bar through the real CLI: on a terminal (a pseudo-terminal from `script`) a cook
 * shows the scan and the cook on the bar; into a pipe, or with --quiet, there is no bar at all.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli, TSX_LOADER } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const run = promisify(execFile);
let project: string;

beforeAll(async () => {
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-progress-'));
  await copySampleProject(project);
});
afterAll(async () => {
  await fs.rm(project, { recursive: true, force: true });
});

describe('the progress bar on a terminal', () => {
  it('shows the scan and the cook with its count; a pipe and --quiet get no bar', async () => {
    const cli = [process.execPath, '--import', TSX_LOADER, path.join(REPO, 'cli/main.ts')].map((a) => `'${a}'`).join(' ');
    const tty = await run('script', ['-qec', `${cli} cook --project '${project}'`, '/dev/null'], { env: { ...process.env, CI: '', NO_COLOR: '1' }, maxBuffer: 8 << 20 });
    expect(tty.stdout).toContain('\rscanning the project...');
    expect(tty.stdout).toMatch(/\r\[[#-]+\] \d+\/\d+ \d+%/);
    const piped = await runCli(['cook', '--project', project]);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).not.toContain('\r');
    const quiet = await run('script', ['-qec', `${cli} cook --quiet --project '${project}'`, '/dev/null'], { env: { ...process.env, CI: '', NO_COLOR: '1' }, maxBuffer: 8 << 20 });
    expect(quiet.stdout).not.toContain('scanning the project');
  }, 180_000);
});
