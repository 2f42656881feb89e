/**
 * The CLI conventions people rely on, checked against the real CLI in child processes with real
 * pipes: a reader that goes away ends the command quietly, CI means JSON lines, one JSON result
 * shape, --quiet/--verbose, NO_COLOR on a real terminal, usage errors without stacks, group help,
 * "did you mean", and config errors that say where and what.
 */
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePak, type PakSource } from '../../pak/writePak.js';
import { initHash } from '../../src/util/hash.js';
import { REPO, runCli, TSX_LOADER, type CliResult } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const run = promisify(execFile);
const CLI = [process.execPath, '--import', TSX_LOADER, path.join(REPO, 'cli/main.ts')];

let dir: string;
let project: string;
let bigPak: string;
let cooked: CliResult;

beforeAll(async () => {
  await initHash();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-conventions-'));
  project = path.join(dir, 'project');
  await copySampleProject(project);
  // Far more listing than a pipe holds (64 KiB), so the CLI is still writing when the reader goes.
  const sources: PakSource[] = Array.from({ length: 12_000 }, (_, i) => ({ path: `/Game/Many/Entry_${String(i).padStart(5, '0')}.rml`, kind: 'bytes', data: new Uint8Array([i & 0xff]) }));
  sources.push({ path: '/Game/Big.bin', kind: 'bytes', data: new Uint8Array(8 << 20).fill(7) });
  bigPak = path.join(dir, 'big.pak');
  await writePak(bigPak, sources, { level: 1 });
  cooked = await runCli(['cook', '--project', project]);
}, 180_000);

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Spawn the CLI with stdout piped to a reader that closes after `lines` lines (or `bytes` bytes). */
function runAndCloseEarly(args: string[], stop: { lines?: number; bytes?: number }): Promise<CliResult & { got: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI[0], [...CLI.slice(1), ...args], { cwd: dir, env: { ...process.env, CI: '', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let got = '';
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      bytes += d.byteLength;
      const done = stop.lines !== undefined ? got.split('\n').length > stop.lines : bytes >= (stop.bytes ?? 1);
      if (done) child.stdout.destroy();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: '', stderr, got }));
  });
}

const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Every `ms` / `...Ms` number anywhere in a value. */
function msValues(v: unknown, key = ''): number[] {
  if (typeof v === 'number') return key === 'ms' || key.endsWith('Ms') ? [v] : [];
  if (Array.isArray(v)) return v.flatMap((x) => msValues(x));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => msValues(x, k));
  return [];
}

describe('a reader that goes away (EPIPE)', () => {
  it('`pak ls` into a reader that closes after 2 lines ends quietly with status 0', async () => {
    const r = await runAndCloseEarly(['pak', 'ls', bigPak], { lines: 2 });
    expect(r.got.split('\n').length).toBeGreaterThan(2);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  it('`pak cat` of an 8 MiB entry into a reader that closes after the first bytes ends quietly with status 0', async () => {
    const r = await runAndCloseEarly(['pak', 'cat', bigPak, '/Game/Big.bin'], { bytes: 1 });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  it('`lumina-cook pak ls big.pak | head -2` in a shell: two lines, status 0, nothing on stderr', async () => {
    const cmd = `${CLI.map((a) => `'${a}'`).join(' ')} pak ls '${bigPak}' | head -2; echo "status=\${PIPESTATUS[0]}" >&2`;
    const r = await run('bash', ['-c', cmd], { env: { ...process.env, CI: '' }, maxBuffer: 1 << 20 });
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(r.stderr).toBe('status=0\n');
  }, 180_000);
});

describe('CI set: JSON lines on stdout and stderr', () => {
  const cases: Array<[string, string[], number]> = [
    ['cook', ['cook', '--project', '<project>'], 0],
    ['pak ls', ['pak', 'ls', '<project>/Saved/Paks/Main.pak'], 0],
    ['registry list', ['registry', 'list', '--project', '<project>'], 0],
    ['registry why', ['registry', 'why', '/Game/Maps/Main', '--project', '<project>'], 0],
    ['inspect', ['inspect', '<project>/Content/Maps/Main.lasset'], 0],
    ['a missing pak', ['pak', 'ls', '<project>/nope.pak'], 1],
    ['a usage error', ['cook', '--projet', 'x'], 2],
    ['no daemon', ['daemon', 'status', '--project', '<project>'], 1],
  ];
  it.each(cases)('%s: every line of both streams is JSON, stdout is one { ok } result', async (_name, args, code) => {
    const r = await runCli(
      args.map((a) => a.replace('<project>', project)),
      { env: { CI: 'true' } },
    );
    expect(r.code, r.stderr).toBe(code);
    const out = parseLines(r.stdout);
    expect(out).toHaveLength(1);
    expect(out[0].ok).toBe(code === 0);
    for (const line of parseLines(r.stderr)) expect(line).toMatchObject({ level: expect.any(Number), time: expect.any(String), msg: expect.any(String) });
    if (code !== 0) expect(out[0].error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    for (const ms of msValues(out[0])) expect(Number.isInteger(ms)).toBe(true);
  }, 180_000);

  it('CI=false or CI=0 is not CI', async () => {
    for (const ci of ['false', '0']) {
      const r = await runCli(['pak', 'ls', path.join(project, 'Saved/Paks/Main.pak')], { env: { CI: ci } });
      expect(r.stdout.startsWith('# ')).toBe(true);
    }
  }, 180_000);
});

describe('one JSON shape with --json', () => {
  it('cook, registry scan, pak verify and samples generate print one { ok } line with integer milliseconds', async () => {
    const results = [
      await runCli(['cook', '--project', project, '--json']),
      await runCli(['registry', 'scan', '--project', project, '--json']),
      await runCli(['pak', 'verify', path.join(project, 'Saved/Paks/Main.pak'), '--json']),
      await runCli(['samples', 'generate', '--assets', '3', '--out', path.join(dir, 'gen'), '--json']),
    ];
    for (const r of results) {
      expect(r.code, r.stderr).toBe(0);
      const [line, ...rest] = r.stdout.split('\n').filter(Boolean);
      expect(rest).toEqual([]);
      const obj = JSON.parse(line);
      expect(obj.ok).toBe(true);
      expect(msValues(obj).every(Number.isInteger)).toBe(true);
    }
    // The registry scan measures fractions of a millisecond; the JSON carries a whole number.
    expect(msValues(JSON.parse(results[1].stdout)).length).toBeGreaterThan(0);
  }, 180_000);

  it('a pak that fails verify prints { ok: false } and exits 1', async () => {
    const bad = path.join(dir, 'bad.pak');
    const b = await fs.readFile(path.join(project, 'Saved/Paks/Main.pak'));
    b[40] ^= 0xff;
    await fs.writeFile(bad, b);
    const r = await runCli(['pak', 'verify', bad, '--json']);
    expect(r.code).toBe(1);
    expect(parseLines(r.stdout)).toEqual([expect.objectContaining({ ok: false })]);
  }, 180_000);
});

describe('--quiet, --verbose, LUMINA_LOG_LEVEL', () => {
  it('a cook logs info lines; --quiet leaves only errors (none here), --verbose adds debug lines', async () => {
    expect(cooked.code, cooked.stderr).toBe(0);
    const normal = await runCli(['cook', '--project', project]);
    expect(normal.stderr).toMatch(/INFO/);
    const quiet = await runCli(['cook', '--project', project, '--quiet']);
    expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: '' });
    expect(quiet.stdout).toMatch(/^cooked: /);
    // Debug lines name each asset that did not come from the cache: start from no cache.
    await fs.rm(path.join(project, 'Intermediates'), { recursive: true, force: true });
    const verbose = await runCli(['cook', '--project', project, '--verbose', '--json']);
    expect(parseLines(verbose.stderr).some((l) => l.level === 20)).toBe(true);
  }, 180_000);

  it('--quiet and --verbose together are a usage error', async () => {
    const r = await runCli(['cook', '--project', project, '--quiet', '--verbose']);
    expect(r.code).toBe(2);
  }, 180_000);

  it('a bad LUMINA_LOG_LEVEL is a usage error naming the value, with no stack', async () => {
    const r = await runCli(['pak', 'ls', path.join(project, 'Saved/Paks/Main.pak')], { env: { LUMINA_LOG_LEVEL: 'bogus' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('LUMINA_LOG_LEVEL is "bogus", which is not a log level');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const ok = await runCli(['pak', 'ls', path.join(project, 'Saved/Paks/Main.pak')], { env: { LUMINA_LOG_LEVEL: 'WARN' } });
    expect(ok.code).toBe(0);
  }, 180_000);
});

describe('NO_COLOR on a real terminal', () => {
  // `script` gives the CLI a pseudo-terminal, so it behaves as it does for a person.
  const inTerminal = async (env: NodeJS.ProcessEnv) => {
    const cmd = `${CLI.map((a) => `'${a}'`).join(' ')} cook --project '${project}'`;
    const r = await run('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, CI: '', ...env }, maxBuffer: 4 << 20 });
    return r.stdout;
  };
  it('colours log levels on a terminal, and not when NO_COLOR is set', async () => {
    const sgr = /\x1b\[\d+(;\d+)*m/;
    const coloured = await inTerminal({ NO_COLOR: '' });
    expect(coloured).toMatch(/INFO/);
    expect(coloured).toMatch(sgr);
    const plain = await inTerminal({ NO_COLOR: '1' });
    expect(plain).toMatch(/INFO/);
    expect(plain).not.toMatch(sgr);
  }, 180_000);
});

describe('help and mistakes', () => {
  it.each(['registry', 'pak'])('`%s` with no subcommand prints its help, exit 0', async (group) => {
    const r = await runCli([group]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Commands:');
    expect(r.stdout).toContain(`lumina-cook ${group} ls`.replace('registry ls', 'registry list'));
    expect(r.stderr).toBe('');
  }, 180_000);

  it('an unknown option gets "did you mean", exit 2, no stack', async () => {
    const r = await runCli(['cook', '--projet', project]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown argument: projet; did you mean --project?');
    const two = await runCli(['pak', 'ls', 'x.pak', '--jsno', '--overlya', 'd']);
    expect(two.stderr).toContain('jsno: did you mean --json?; overlya: did you mean --overlay?');
    expect(two.stderr).not.toMatch(/\n\s+at /);
  }, 180_000);

  it('a config syntax error gives line and column; a bad value is echoed', async () => {
    const p = path.join(dir, 'badconfig');
    await fs.mkdir(p);
    await fs.writeFile(path.join(p, 'lumina-cook.json'), '{\n  "name": "X",\n  "cookRoots": ["/Game/Maps/Main",]\n}\n');
    const syntax = await runCli(['cook', '--project', p]);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toContain('lumina-cook.json');
    expect(syntax.stderr).toContain('not valid JSON at line 3, column 35: a value is expected, found "]"');
    await fs.writeFile(path.join(p, 'lumina-cook.json'), JSON.stringify({ cook: { soft: 'sometimes' } }));
    const value = await runCli(['cook', '--project', p]);
    expect(value.code).toBe(1);
    expect(value.stderr).toContain('"cook.soft" must be one of "include", "exclude", not "sometimes"');
  }, 180_000);
});
