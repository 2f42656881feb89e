/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepare`), unpack the
 * tarball into a fresh project's node_modules, and `import { cookProject } from 'lumina-cook'`
 * from there, on a copy of the sample project. Its runtime dependencies are linked from this
 * repo's node_modules (the versions package.json pins), so the test needs no network. A second
 * step type-checks a consumer file against the emitted declarations.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/runCli.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const run = promisify(execFile);
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };

let dir: string;
let packed: string[];

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lc-packed-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: REPO, maxBuffer: 64 << 20 });
  // prepare's tsc output precedes the JSON on stdout; the JSON is the last array printed.
  const json = JSON.parse(stdout.slice(stdout.lastIndexOf('\n[') + 1)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = json[0].files.map((f) => f.path);
  const consumer = path.join(dir, 'consumer');
  const installed = path.join(consumer, 'node_modules', pkg.name);
  await fsp.mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', path.join(dir, json[0].filename), '-C', installed, '--strip-components=1']);
  for (const dep of Object.keys(pkg.dependencies)) {
    const link = path.join(consumer, 'node_modules', dep);
    await fsp.mkdir(path.dirname(link), { recursive: true });
    await fsp.symlink(path.join(REPO, 'node_modules', dep), link, 'dir');
  }
  await fsp.writeFile(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await copySampleProject(path.join(consumer, 'project'));
}, 600_000);

afterAll(async () => {
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the build, the declarations, the bin, the config schema and the format docs, and no sources or tests', () => {
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'bin/lumina-cook.js', 'config/lumina-cook.schema.json', 'docs/FORMAT.md', 'package.json']) {
      expect(packed, f).toContain(f);
    }
    expect(packed.filter((f) => /^(test|src|cook|pak|watch)\/|\.ts$(?<!\.d\.ts)/.test(f))).toEqual([]);
  });

  it('cooks a copy of the sample project through `import { cookProject } from "lumina-cook"`', async () => {
    const consumer = path.join(dir, 'consumer');
    const script = [
      "import { cookProject, PakReader, isLuminaError } from 'lumina-cook';",
      "const s = await cookProject({ projectDir: 'project' });",
      "const pak = await PakReader.open(s.paks[0].file);",
      'const entries = pak.entries.length; await pak.close();',
      "let err = null; try { await cookProject({ projectDir: 'nowhere' }); } catch (e) { err = isLuminaError(e) ? e.code : String(e); }",
      'console.log(JSON.stringify({ ok: s.ok, chunks: s.chunks, cooked: s.cooked, entries, err }));',
    ].join('\n');
    await fsp.writeFile(path.join(consumer, 'use.mjs'), script);
    const { stdout } = await run(process.execPath, ['use.mjs'], { cwd: consumer, env: { ...process.env, CI: '' } });
    const r = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(r).toEqual({ ok: true, chunks: ['Main', 'Foliage'], cooked: expect.any(Number), entries: expect.any(Number), err: 'CONFIG_NOT_FOUND' });
    expect(r.cooked).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(consumer, 'project/Saved/Paks/Main.pak'))).toBe(true);

    // The installed bin runs the compiled CLI from the package.
    const bin = path.join(consumer, 'node_modules', pkg.name, 'bin/lumina-cook.js');
    const ls = await run(process.execPath, [bin, 'pak', 'ls', 'project/Saved/Paks/Main.pak'], { cwd: consumer });
    expect(ls.stdout).toContain('/AssetRegistry.bin');
  });

  it('types the API from the emitted declarations', async () => {
    const consumer = path.join(dir, 'consumer');
    await fsp.writeFile(
      path.join(consumer, 'use.ts'),
      [
        "import { cookProject, type CookSummary, type ProjectConfig } from 'lumina-cook';",
        "const s: CookSummary = await cookProject({ projectDir: 'project' });",
        'const n: number = s.assets;',
        // Fails to compile only when the declarations are missing (then everything is `any`).
        '// @ts-expect-error projectDir is a string',
        'await cookProject({ projectDir: 1 });',
        'export type C = ProjectConfig; export { n };',
      ].join('\n'),
    );
    await fsp.writeFile(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [], typeRoots: [path.join(REPO, 'node_modules/@types')] }, files: ['use.ts'] }),
    );
    const tsc = path.join(REPO, 'node_modules/typescript/bin/tsc');
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer }).catch((e: { stdout: string; code: number }) => ({ stdout: e.stdout, code: e.code }));
    expect(r.stdout).toBe('');
  });
});
