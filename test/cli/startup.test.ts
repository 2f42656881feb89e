/**
 * What the CLI skips before a command's work: the command modules for a bare --version, yargs'
 * cached copy of the running command's help, and pino-pretty until a line is written. Each is
 * checked on the real thing (yargs, pino, pino-pretty, the CLI in a child process).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { onlyVersion, skipHelpCache } from '../../cli/main.js';
import { REPO, runCli, TSX_LOADER } from '../helpers/runCli.js';

describe('lumina-cook --version', () => {
  it('registers no command when only --version and global flags are given', () => {
    expect(onlyVersion(['--version'])).toBe(true);
    expect(onlyVersion(['--json', '--version', '-q'])).toBe(true);
    expect(onlyVersion(['cook', '--version'])).toBe(false);
    expect(onlyVersion(['--version', '--bogus'])).toBe(false);
    expect(onlyVersion(['--help'])).toBe(false);
  });

  it('prints the package version', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version']);
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe("yargs' help cache", () => {
  type Usage = { hasCachedHelpMessage(): boolean };
  const usageOf = (y: unknown) => (y as { getInternalMethods(): { getUsageInstance(): Usage } }).getInternalMethods().getUsageInstance();
  const run = async (skip: boolean) => {
    let ran = false;
    const y = yargs(['cook', '--project', 'x'])
      .strict()
      .command({ command: 'cook', describe: 'cook it', builder: (b) => b.option('project', { type: 'string' }), handler: async () => void (ran = true) });
    if (skip) skipHelpCache(y);
    await y.parseAsync();
    expect(ran).toBe(true);
    return usageOf(y).hasCachedHelpMessage();
  };

  it('is not filled when a command runs (yargs fills it without skipHelpCache)', async () => {
    expect(await run(false)).toBe(true);
    expect(await run(true)).toBe(false);
  });
});

describe('the pretty logger', () => {
  /** Runs `body` (TypeScript, with createLogger imported) in a fresh process; its stderr and stdout. */
  const child = (body: string) => {
    const src = `import { createRequire } from 'node:module';\nimport { createLogger } from ${JSON.stringify(path.join(REPO, 'src/log/logger.ts'))};\n${body}`;
    const r = spawnSync(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', src], { cwd: REPO, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', CI: '' } });
    expect(r.status, r.stderr).toBe(0);
    return r;
  };
  const prettyLoaded = `const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/pino-pretty/'));`;

  it('loads pino-pretty at the first line written, not before', () => {
    const r = child(`${prettyLoaded}
const log = createLogger({ json: false, level: 'warn' });
log.info('below the level');
process.stdout.write(String(loaded()) + ' ');
log.warn({ file: 'a.lasset' }, 'at the level');
process.stdout.write(String(loaded()));`);
    expect(r.stdout).toBe('false true');
    expect(r.stderr).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: at the level\n {4}file: "a\.lasset"\n$/);
  });

  it('writes what pino-pretty given to pino directly writes, errors included', () => {
    const lines = `log.info({ asset: 'x', n: 1 }, 'one'); const e = new Error('boom'); e.stack = 'Error: boom\\n    at here'; log.error({ err: e }, 'two'); log.child({ ns: 'cook' }).warn('three');`;
    const lazy = child(`const log = createLogger({ json: false, level: 'info' }); ${lines}`);
    const eager = child(`import pino from 'pino';
const pretty = createRequire(import.meta.url)('pino-pretty');
const log = pino({ level: 'info', base: undefined }, pretty({ destination: process.stderr, colorize: false, ignore: 'pid,hostname', translateTime: 'HH:MM:ss.l', sync: true }));
${lines}`);
    const timeless = (s: string) => s.replace(/^\[\d\d:\d\d:\d\d\.\d{3}\]/gm, '[T]');
    expect(timeless(lazy.stderr)).toBe(timeless(eager.stderr));
    expect(lazy.stderr).toContain('Error: boom');
  });
});
