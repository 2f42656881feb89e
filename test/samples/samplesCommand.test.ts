import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { runSamplesGenerate, samplesCommand } from '../../cli/commands/samples.js';
import { listFiles, removeDir, tempDir } from './helpers.js';

describe('samples generate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('cmd');
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  const usage = (message: string) => expect.objectContaining({ code: 'USAGE', message });

  it.each([
    [0, '--assets must be a whole number from 1 to 1000000, not 0'],
    [1_000_001, '--assets must be a whole number from 1 to 1000000, not 1000001'],
    [2.5, '--assets must be a whole number from 1 to 1000000, not 2.5'],
    [Number.NaN, '--assets must be a whole number from 1 to 1000000, not NaN'],
  ])('rejects --assets %s', async (assets, message) => {
    await expect(runSamplesGenerate({ assets, out: path.join(dir, 'never') })).rejects.toEqual(usage(message));
    expect(fs.existsSync(path.join(dir, 'never'))).toBe(false);
  });

  it('rejects a bad seed and texture size', async () => {
    await expect(runSamplesGenerate({ assets: 5, out: path.join(dir, 'x'), seed: -1 })).rejects.toEqual(usage('--seed must be a whole number from 0 to 4294967295, not -1'));
    await expect(runSamplesGenerate({ assets: 5, out: path.join(dir, 'x'), textureSize: 0 })).rejects.toEqual(usage('--texture-size must be a whole number from 1 to 4096, not 0'));
  });

  it('refuses a non-empty folder without --force and a file always', async () => {
    const busy = path.join(dir, 'busy');
    fs.mkdirSync(busy);
    fs.writeFileSync(path.join(busy, 'keep.txt'), 'mine');
    await expect(runSamplesGenerate({ assets: 5, out: busy })).rejects.toEqual(usage(`--out ${busy} is not empty`));
    const file = path.join(dir, 'file.txt');
    fs.writeFileSync(file, 'x');
    await expect(runSamplesGenerate({ assets: 5, out: file, force: true })).rejects.toEqual(usage(`--out ${file} is a file, not a folder`));

    const r = await runSamplesGenerate({ assets: 5, out: busy, force: true });
    expect(r.data.assets).toBe(5);
    expect(fs.readFileSync(path.join(busy, 'keep.txt'), 'utf8')).toBe('mine'); // --force deletes nothing
  });

  it('runs through yargs and prints a one-line summary', async () => {
    const out = path.join(dir, 'cli');
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((s: string) => (lines.push(String(s)), true)) as typeof process.stdout.write;
    try {
      await yargs(['samples', 'generate', '--assets', '40', '--out', out, '--seed', '9', '--texture-size', '8'])
        .command(samplesCommand)
        .strict()
        .fail((msg, err) => {
          throw err ?? new Error(msg);
        })
        .parseAsync();
    } finally {
      process.stdout.write = write;
    }
    expect(lines.join('')).toMatch(new RegExp(`^generated 40 assets \\(\\d+ files, [\\d.]+ KiB\\) in ${out.replace(/[/\\.]/g, '\\$&')} from seed 9 in [\\d.]+ s\\n$`));
    const files = listFiles(out);
    expect(files).toContain('lumina-cook.json');
    expect(files.filter((f) => f.endsWith('.lasset') || /\.(rml|rcss|luau)$/.test(f)).length).toBe(40);
  });
});
