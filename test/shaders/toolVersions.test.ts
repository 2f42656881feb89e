/**
 * The compiler and validator versions are asked once per executable, not on every cook: a cook
 * that finds every permutation cached starts no process at all. Real tools, through wrappers on
 * PATH that log each call and run the real executable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findCompiler, type ShaderCompiler } from '../../cook/shaders/compiler.js';
import { tempDir } from '../cook/helpers.js';

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  return undefined;
}

const REAL_GLSLANG = which('glslangValidator');
const REAL_VAL = which('spirv-val');
const PATH = process.env.PATH;

describe.skipIf(!REAL_GLSLANG || !REAL_VAL)('shader tool versions', () => {
  afterEach(() => {
    process.env.PATH = PATH;
  });

  async function wrappers(): Promise<{ bin: string; log: string; cache: string }> {
    const root = await tempDir();
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    const log = path.join(root, 'calls.log');
    for (const [name, real] of [['glslangValidator', REAL_GLSLANG!], ['spirv-val', REAL_VAL!]]) {
      fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    }
    // The wrappers first; no slangc from the machine's PATH may take over.
    process.env.PATH = `${bin}${path.delimiter}${PATH}`;
    return { bin, log, cache: path.join(root, 'Intermediates', 'ShaderTools.json') };
  }
  const calls = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []);

  it('asks each tool once, then answers from Intermediates/ShaderTools.json until the executable changes', async () => {
    const { bin, log, cache } = await wrappers();
    const first = (await findCompiler(cache)) as ShaderCompiler;
    expect(first.id).toMatch(/^glslang \S+$/);
    expect(first.validatorId).toMatch(/^spirv-val SPIRV-Tools v/);
    expect(calls(log)).toEqual(['spirv-val --version', 'glslangValidator --version']);

    // Another process (no memo) with the same tools: the same answer, no process started.
    const again = (await findCompiler(cache)) as ShaderCompiler;
    expect({ id: again.id, validatorId: again.validatorId, exe: again.exe }).toEqual({ id: first.id, validatorId: first.validatorId, exe: first.exe });
    expect(calls(log)).toHaveLength(2);

    // The compiler is replaced (an upgrade): only it is asked again.
    const exe = path.join(bin, 'glslangValidator');
    fs.writeFileSync(exe, `${fs.readFileSync(exe, 'utf8')}# upgraded\n`);
    const upgraded = (await findCompiler(cache)) as ShaderCompiler;
    expect(upgraded.id).toBe(first.id);
    expect(calls(log)).toEqual(['spirv-val --version', 'glslangValidator --version', 'glslangValidator --version']);
  });

  it('a damaged versions file is asked past and rewritten', async () => {
    const { log, cache } = await wrappers();
    fs.mkdirSync(path.dirname(cache), { recursive: true });
    fs.writeFileSync(cache, '{"truncated": ');
    const c = (await findCompiler(cache)) as ShaderCompiler;
    expect(c.id).toMatch(/^glslang /);
    expect(calls(log)).toHaveLength(2);
    expect(Object.keys(JSON.parse(fs.readFileSync(cache, 'utf8')))).toHaveLength(2);
    await findCompiler(cache);
    expect(calls(log)).toHaveLength(2);
  });
});
