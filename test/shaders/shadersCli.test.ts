/** The CLI on a cooked project with shaders: `shaders ls`, `inspect` and `pak ls/cat` show ShaderCache.bin; a compile error exits 1. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/runCli.js';
import { tempDir } from '../cook/helpers.js';
import { writeShaderProject } from './fixtures.js';

describe('shaders on the command line', () => {
  it('cook ships ShaderCache.bin; shaders ls, inspect, pak ls and pak cat show it', async () => {
    const dir = await writeShaderProject(await tempDir());
    const cook = await runCli(['cook', '--project', dir], { timeoutMs: 150_000 });
    expect(cook.code).toBe(0);
    const pak = path.join(dir, 'Saved/Paks/Main.pak');
    const ls = await runCli(['shaders', 'ls', pak, '--json'], { timeoutMs: 120_000 });
    expect(ls.code).toBe(0);
    const [listed] = (JSON.parse(ls.stdout) as { items: Array<{ compiler: string; permutations: Array<{ source: string; entry: string; stage: string; defines: string[] }> }> }).items;
    expect(listed.compiler).toMatch(/^glslang /);
    expect(listed.permutations.map((p) => `${p.source} ${p.entry} ${p.stage} ${p.defines.join(',')}`).sort()).toEqual([
      '/Game/Shaders/Blur.glsl main compute ',
      '/Game/Shaders/Lit.hlsl PSMain fragment ',
      '/Game/Shaders/Lit.hlsl PSMain fragment TINT=0.5,USE_SHADOWS',
      '/Game/Shaders/Lit.hlsl VSMain vertex ',
      '/Game/Shaders/Lit.hlsl VSMain vertex TINT=0.5,USE_SHADOWS',
      '/Game/Shaders/Unlit.hlsl PSMain fragment ',
    ]);
    expect((await runCli(['pak', 'ls', pak], { timeoutMs: 120_000 })).stdout).toMatch(/ \/ShaderCache\.bin\n/);
    // pak cat writes the raw bytes; inspect on that file lists the same permutations.
    const cat = await runCli(['pak', 'cat', pak, '/ShaderCache.bin'], { timeoutMs: 120_000 });
    expect(cat.code).toBe(0);
    expect(Buffer.from(cat.stdout, 'latin1').subarray(0, 4).toString('latin1')).toBe('LSHC');
    const inspect = await runCli(['inspect', path.join(dir, 'Saved/Cooked/ShaderCache.bin')], { timeoutMs: 120_000 });
    expect(inspect.code).toBe(0);
    expect(inspect.stdout.split('\n')[0]).toBe(`# ${path.join(dir, 'Saved/Cooked/ShaderCache.bin')}: 6 permutations, compiler ${listed.compiler}`);
    expect(inspect.stdout).toContain('\tfragment\tPSMain\t/Game/Shaders/Lit.hlsl\tTINT=0.5 USE_SHADOWS\t');
  }, 300_000);

  it('a shader that does not compile fails the cook with exit 1 and a located error, and no stack', async () => {
    const dir = await writeShaderProject(await tempDir(), { 'Content/Shaders/Unlit.hlsl': 'float4 PSMain() : SV_Target {\n  return missingThing;\n}\n' });
    const cook = await runCli(['cook', '--project', dir], { timeoutMs: 150_000 });
    expect(cook.code).toBe(1);
    expect(cook.stdout + cook.stderr).toContain(
      `error SHADER_COMPILE_FAILED ${path.join(dir, 'Content/Shaders/Unlit.hlsl')}: /Game/Shaders/Unlit.hlsl:2:10: 'missingThing' : unknown variable (compiling /Game/Shaders/Unlit.hlsl PSMain (fragment) [no defines], asked for by config shaders.global)`,
    );
    expect(cook.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(dir, 'Saved/Paks/Main.pak'))).toBe(false);
  }, 180_000);
});
