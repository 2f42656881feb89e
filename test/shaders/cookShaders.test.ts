/**
 * The shader cook on real files with the real compiler (glslangValidator) and validator (spirv-val).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cooker, type CookSummary } from '../../cook/Cooker.js';
import { cookShaders } from '../../cook/shaders/cookShaders.js';
import { checkDefine, compileShader, detectCompiler, parseDiagnostics, type ShaderCompiler } from '../../cook/shaders/compiler.js';
import { decodeShaderCache, describePermutation } from '../../src/format/shaderCache.js';
import { PakReader } from '../../pak/PakReader.js';
import { tempDir } from '../cook/helpers.js';
import { CONFIG, GUIDS, LIGHTING_HLSLI, material, sidecar, writeShaderProject } from './fixtures.js';

async function cook(dir: string): Promise<CookSummary & { compiledList?: string[] }> {
  const c = await Cooker.open({ projectDir: dir });
  try {
    return await c.cook();
  } finally {
    c.close();
  }
}

/** Cook only the shaders of a project (the whole cook's permutations), to see exactly what compiled. */
async function shaderPass(dir: string) {
  const c = await Cooker.open({ projectDir: dir });
  try {
    const plan = c.plan();
    const problems: Array<{ code: string; message: string; file?: string }> = [];
    const res = await c.cookShaders(plan.packages, plan.chunks, problems as never);
    return { res, problems: problems.map(({ code, message, file }) => ({ code, message, file })) };
  } finally {
    c.close();
  }
}

function rewrite(file: string, text: string): void {
  fs.writeFileSync(file, text);
  const t = new Date(Date.now() + 5000);
  fs.utimesSync(file, t, t);
}

async function entry(pak: string, p: string): Promise<Uint8Array> {
  const r = await PakReader.open(pak);
  try {
    return await r.readEntry(p);
  } finally {
    await r.close();
  }
}

const errorsOf = (s: CookSummary) => s.problems.filter((p) => p.severity === 'error').map(({ code, message, file }) => ({ code, message, file }));

describe('shader cook (glslang + spirv-val, for real)', () => {
  it('the compiler is found, with its version', async () => {
    const c = (await detectCompiler()) as ShaderCompiler;
    expect(typeof c).toBe('object');
    expect(c.id).toMatch(/^(glslang|slang) \S+/);
    expect(c.validatorId).toMatch(/^spirv-val SPIRV-Tools v/);
  });

  it('ships every material permutation plus shaders.global in Main, valid SPIR-V, and a re-cook compiles nothing', async () => {
    const dir = await writeShaderProject(await tempDir());
    const s = await cook(dir);
    expect(errorsOf(s)).toEqual([]);
    expect(s.ok).toBe(true);
    // Lit x {no defines, TINT=0.5 USE_SHADOWS} x {VS, PS} + Blur compute + Unlit (global).
    expect(s.shaders).toMatchObject({ permutations: 6, compiled: 6, cached: 0, failed: 0 });
    const bin = await entry(path.join(dir, 'Saved/Paks/Main.pak'), '/ShaderCache.bin');
    const cache = decodeShaderCache(bin, 'Main.pak');
    expect(cache.compiler).toBe(s.shaders.compiler);
    expect(cache.permutations.map((p) => describePermutation(p)).sort()).toEqual([
      '/Game/Shaders/Blur.glsl main (compute) [no defines]',
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [no defines]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [no defines]',
      '/Game/Shaders/Unlit.hlsl PSMain (fragment) [no defines]',
    ]);
    // The defines reached the compiler: the tinted fragment shader differs from the plain one.
    const ps = cache.permutations.filter((p) => p.entry === 'PSMain' && p.source.endsWith('Lit.hlsl'));
    expect(Buffer.from(ps[0].code).equals(Buffer.from(ps[1].code))).toBe(false);
    expect(Buffer.from(fs.readFileSync(path.join(dir, 'Saved/Cooked/ShaderCache.bin'))).equals(Buffer.from(bin))).toBe(true);

    const again = await cook(dir);
    expect(again.shaders).toMatchObject({ permutations: 6, compiled: 0, cached: 6 });
    expect(again.paks.every((p) => !p.written)).toBe(true);
    // Deterministic: a clean cook of the same sources gives the same bytes.
    fs.rmSync(path.join(dir, 'Intermediates'), { recursive: true });
    fs.rmSync(path.join(dir, 'Saved'), { recursive: true });
    await cook(dir);
    expect(Buffer.from(await entry(path.join(dir, 'Saved/Paks/Main.pak'), '/ShaderCache.bin')).equals(Buffer.from(bin))).toBe(true);
  });

  it('editing an include re-compiles exactly the permutations that use it', async () => {
    const dir = await writeShaderProject(await tempDir());
    expect((await shaderPass(dir)).res.compiled).toBe(6);
    rewrite(path.join(dir, 'Content/Shaders/Lighting.hlsli'), LIGHTING_HLSLI.replace('max(dot', '0.5 * max(dot'));
    const lit = await shaderPass(dir);
    expect(lit.problems).toEqual([]);
    expect(lit.res.compiledList).toEqual([
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [no defines]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [no defines]',
    ]);
    expect(lit.res.cached).toBe(2);
    rewrite(path.join(dir, 'Content/Shaders/Common/Math.glsli'), 'float twice(float x) { return x + x; }\n');
    expect((await shaderPass(dir)).res.compiledList).toEqual(['/Game/Shaders/Blur.glsl main (compute) [no defines]']);
    // A material's defines change only its own permutations.
    fs.writeFileSync(path.join(dir, 'Content/Materials/Rock.lasset'), (await import('../../src/format/packageBuilder.js')).buildPackage(material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['TINT=0.25'])));
    const t = new Date(Date.now() + 9000);
    fs.utimesSync(path.join(dir, 'Content/Materials/Rock.lasset'), t, t);
    expect((await shaderPass(dir)).res.compiledList).toEqual(['/Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.25]', '/Game/Shaders/Lit.hlsl VSMain (vertex) [TINT=0.25]']);
  });

  it('a compile error names file:line:column and the material that asked, and fails the cook without touching the paks', async () => {
    const dir = await writeShaderProject(await tempDir());
    expect((await cook(dir)).ok).toBe(true);
    const before = fs.readFileSync(path.join(dir, 'Saved/Paks/Main.pak'));
    rewrite(path.join(dir, 'Content/Shaders/Common/Math.glsli'), 'float twice(float x) {\n  return x * undefinedScale;\n}\n');
    const s = await cook(dir);
    expect(s.ok).toBe(false);
    expect(errorsOf(s)).toEqual([
      {
        code: 'SHADER_COMPILE_FAILED',
        message: "/Game/Shaders/Common/Math.glsli:2:14: 'undefinedScale' : undeclared identifier (compiling /Game/Shaders/Blur.glsl main (compute) [no defines], asked for by material /Game/Materials/BlurMat.BlurMat)",
        file: path.join(dir, 'Content/Shaders/Common/Math.glsli'),
      },
    ]);
    expect(fs.readFileSync(path.join(dir, 'Saved/Paks/Main.pak')).equals(before)).toBe(true);
  });

  it('HLSL errors carry a column too', async () => {
    const c = (await detectCompiler()) as ShaderCompiler;
    const dir = await tempDir();
    const file = path.join(dir, 'Bad.hlsl');
    fs.writeFileSync(file, 'float4 PSMain() : SV_Target {\n  return float4(nope, 1);\n}\n');
    const res = await compileShader(c, { file, language: 'hlsl', entry: 'PSMain', stage: 'fragment', defines: [], includeDirs: [], timeoutMs: 60_000 });
    expect(res.ok).toBe(false);
    expect(res.ok === false && res.kind === 'error' && res.diagnostics[0]).toEqual({ file, line: 2, column: 17, message: "'nope' : unknown variable" });
  });

  it('refuses defines that could inject into a command line, naming the material and the define', async () => {
    for (const d of ['A B', 'X=1;rm', '-o/tmp/x', 'A="q"', '$(id)', 'A=`x`', '1ABC', 'A=\n', '']) expect(checkDefine(d), d).toBe(false);
    for (const d of ['A', 'USE_X', 'TINT=0.5', 'N=-1', 'V=1e+3']) expect(checkDefine(d), d).toBe(true);
    const dir = await writeShaderProject(await tempDir(), { 'Content/Materials/Rock.lasset': material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['OK', 'EVIL=1 -o /tmp/pwn']) });
    const s = await cook(dir);
    expect(errorsOf(s)).toEqual([
      {
        code: 'SHADER_DEFINE_INVALID',
        message:
          'define "EVIL=1 -o /tmp/pwn" is refused: it must be NAME or NAME=VALUE (NAME letters, digits and _, not starting with a digit; VALUE letters, digits and _ . + -)',
        file: path.join(dir, 'Content/Materials/Rock.lasset'),
      },
    ]);
    expect(s.problems.find((p) => p.code === 'SHADER_DEFINE_INVALID')!.field).toBe('/Game/Materials/Rock.Rock ShaderDefines[1]');
    expect(fs.existsSync('/tmp/pwn')).toBe(false);
  });

  it('materials asking for the same source and defines share its permutations; each material with a refused define is reported', async () => {
    const lit = '/Game/Shaders/Lit.hlsl';
    const dir = await writeShaderProject(await tempDir(), {
      'Content/Materials/Rock.lasset': material(GUIDS.rock, 'Rock', lit, ['EVIL X']),
      'Content/Materials/Plain.lasset': material(GUIDS.plain, 'Plain', lit, ['EVIL X']),
      'Content/Materials/BlurMat.lasset': material(GUIDS.blur, 'BlurMat', '/Game/Shaders/Gone.hlsl', ['EVIL X']),
    });
    const refused = (file: string) => ({
      code: 'SHADER_DEFINE_INVALID',
      message: 'define "EVIL X" is refused: it must be NAME or NAME=VALUE (NAME letters, digits and _, not starting with a digit; VALUE letters, digits and _ . + -)',
      file: path.join(dir, 'Content/Materials', file),
    });
    // In package path order: BlurMat (its shader is missing, reported before its defines), Plain, Rock.
    expect((await shaderPass(dir)).problems).toEqual([
      { code: 'SHADER_NOT_FOUND', message: 'shader source "/Game/Shaders/Gone.hlsl" is not a compiled source under any mount\'s Shaders/ (.slang, .hlsl, .glsl)', file: path.join(dir, 'Content/Materials/BlurMat.lasset') },
      refused('Plain.lasset'),
      refused('Rock.lasset'),
    ]);
    // The same defines in another order ask for the same permutations, named by both materials.
    fs.writeFileSync(path.join(dir, 'Content/Materials/Rock.lasset'), (await import('../../src/format/packageBuilder.js')).buildPackage(material(GUIDS.rock, 'Rock', lit, ['USE_SHADOWS', 'TINT=0.5'])));
    fs.writeFileSync(path.join(dir, 'Content/Materials/Plain.lasset'), (await import('../../src/format/packageBuilder.js')).buildPackage(material(GUIDS.plain, 'Plain', lit, ['TINT=0.5', 'USE_SHADOWS'])));
    fs.writeFileSync(path.join(dir, 'Content/Materials/BlurMat.lasset'), (await import('../../src/format/packageBuilder.js')).buildPackage(material(GUIDS.blur, 'BlurMat', lit)));
    for (const f of ['Rock', 'Plain', 'BlurMat']) {
      const t = new Date(Date.now() + 9000);
      fs.utimesSync(path.join(dir, `Content/Materials/${f}.lasset`), t, t);
    }
    const ok = await shaderPass(dir);
    expect(ok.problems).toEqual([]);
    expect(ok.res.compiledList).toEqual([
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [no defines]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl VSMain (vertex) [no defines]',
    ]);
    // The global Unlit compiled in the first pass.
    expect(ok.res).toMatchObject({ permutations: 5, cached: 1 });
  });

  it('a material naming a missing shader, a bad sidecar, a missing include and a cycle each fail with the file named', async () => {
    const dir = await writeShaderProject(await tempDir(), {
      'Content/Materials/Rock.lasset': material(GUIDS.rock, 'Rock', '/Game/Shaders/Gone.hlsl'),
      'Content/Shaders/Lit.hlsl.shader.json': '{"entries": [{"name": "VSMain", "stage": "geometry"}]}',
      'Content/Shaders/Blur.glsl': '#version 450\n#extension GL_GOOGLE_include_directive : require\n#include "Loop.glsli"\nvoid main() {}\n',
      'Content/Shaders/Loop.glsli': '#include "Blur.glsl"\n',
      'Content/Shaders/Unlit.hlsl': '#include "NotThere.hlsli"\n',
    });
    const s = await cook(dir);
    const sh = (n: string) => path.join(dir, 'Content/Shaders', n);
    expect(errorsOf(s)).toEqual([
      { code: 'SHADER_INCLUDE_CYCLE', message: '#include cycle: /Game/Shaders/Blur.glsl -> /Game/Shaders/Loop.glsli -> /Game/Shaders/Blur.glsl', file: sh('Loop.glsli') },
      { code: 'SHADER_SIDECAR_INVALID', message: 'entries[0].stage must be one of "vertex", "fragment", "compute"', file: sh('Lit.hlsl.shader.json') },
      { code: 'SHADER_NOT_FOUND', message: 'shader source "/Game/Shaders/Gone.hlsl" is not a compiled source under any mount\'s Shaders/ (.slang, .hlsl, .glsl)', file: path.join(dir, 'Content/Materials/Rock.lasset') },
      { code: 'SHADER_INCLUDE_MISSING', message: 'line 1: #include "NotThere.hlsli" matches no file beside it or in any mount\'s Shaders/', file: sh('Unlit.hlsl') },
    ]);
    expect(s.ok).toBe(false);
  });

  it('a hung compiler is killed with its process group after the timeout and reported naming the source and permutation', async () => {
    const dir = await writeShaderProject(await tempDir(), {}, { ...CONFIG, shaders: { global: [], timeoutMs: 1500 } });
    const marker = path.join(dir, 'grandchild.pid');
    const fake = path.join(dir, 'hang.sh');
    // --version answers like glslang; a compile forks a grandchild and both sleep forever.
    fs.writeFileSync(fake, `#!/bin/sh\nif [ "$1" = "--version" ]; then exec glslangValidator --version; fi\nsleep 1000 & echo $! > ${marker}\nsleep 1000\n`, { mode: 0o755 });
    const c = await Cooker.open({ projectDir: dir });
    const real = (await detectCompiler()) as ShaderCompiler;
    const problems: Array<{ code: string; message: string; file?: string }> = [];
    const plan = c.plan();
    c.shaders.scan();
    const res = await cookShaders({
      config: c.config,
      shaders: c.shaders,
      packages: plan.packages.filter((p) => p.record.guid === GUIDS.blur),
      chunks: plan.chunks,
      report: (e) => problems.push({ code: e.code, message: e.message, file: e.file }),
      compiler: { ...real, exe: fake },
    });
    c.close();
    expect(res.ok).toBe(false);
    expect(problems).toEqual([
      {
        code: 'SHADER_COMPILER_FAILED',
        message: 'hang.sh timed out after 1500 ms and was killed (compiling /Game/Shaders/Blur.glsl main (compute) [no defines], asked for by material /Game/Materials/BlurMat.BlurMat)',
        file: path.join(dir, 'Content/Shaders/Blur.glsl'),
      },
    ]);
    const grandchild = Number(fs.readFileSync(marker, 'utf8'));
    // The whole group got SIGKILL: the grandchild is gone too (kill 0 throws ESRCH), or at worst a zombie being reaped.
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      try {
        process.kill(grandchild, 0);
        const stat = fs.readFileSync(`/proc/${grandchild}/stat`, 'utf8');
        alive = !/\) Z /.test(stat);
      } catch {
        alive = false;
      }
      if (alive) await new Promise((r) => setTimeout(r, 20));
    }
    expect(alive).toBe(false);
  });

  it('through the cook, a crashing compiler fails the permutation naming source, permutation and material', async () => {
    const dir = await writeShaderProject(await tempDir(), { 'Content/Materials/BlurMat.lasset': null, 'Content/Materials/Plain.lasset': null }, { ...CONFIG, shaders: { global: [] } });
    const fake = path.join(dir, 'crash.sh');
    fs.writeFileSync(fake, `#!/bin/sh\nif [ "$1" = "--version" ]; then exec glslangValidator --version; fi\nkill -SEGV $$\n`, { mode: 0o755 });
    const c = await Cooker.open({ projectDir: dir });
    const real = (await detectCompiler()) as ShaderCompiler;
    const problems: Array<{ code: string; message: string }> = [];
    const plan = c.plan();
    c.shaders.scan();
    // The same orchestration the cook runs, with the crashing tool standing in.
    const res = await cookShaders({
      config: c.config,
      shaders: c.shaders,
      packages: plan.packages.filter((p) => p.record.guid === GUIDS.rock),
      chunks: plan.chunks,
      report: (e) => problems.push({ code: e.code, message: e.message }),
      compiler: { ...real, exe: fake },
    });
    c.close();
    expect(res.ok).toBe(false);
    expect(problems.sort((a, b) => (a.message < b.message ? -1 : 1))).toEqual([
      { code: 'SHADER_COMPILER_FAILED', message: 'crash.sh was killed by SIGSEGV (compiling /Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.5 USE_SHADOWS], asked for by material /Game/Materials/Rock.Rock)' },
      { code: 'SHADER_COMPILER_FAILED', message: 'crash.sh was killed by SIGSEGV (compiling /Game/Shaders/Lit.hlsl VSMain (vertex) [TINT=0.5 USE_SHADOWS], asked for by material /Game/Materials/Rock.Rock)' },
    ]);
  });

  it('an include edited while its users compile ships their code but files none of it under the key of the bytes the scan hashed', async () => {
    const dir = await writeShaderProject(await tempDir(), { 'Content/Materials/BlurMat.lasset': null, 'Content/Materials/Plain.lasset': null }, { ...CONFIG, shaders: { global: [] } });
    const include = path.join(dir, 'Content/Shaders/Lighting.hlsli');
    const edited = LIGHTING_HLSLI.replace('max(dot', '0.5 * max(dot');
    fs.writeFileSync(path.join(dir, 'next.hlsli'), edited);
    // The real compiler, with the include saved (atomically) just before it reads it: after the scan hashed it.
    const fake = path.join(dir, 'edit-then-compile.sh');
    fs.writeFileSync(
      fake,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then exec glslangValidator --version; fi\ncp ${path.join(dir, 'next.hlsli')} ${include}.tmp && mv ${include}.tmp ${include}\nexec glslangValidator "$@"\n`,
      { mode: 0o755 },
    );
    const c = await Cooker.open({ projectDir: dir });
    const real = (await detectCompiler()) as ShaderCompiler;
    const plan = c.plan();
    const rock = plan.packages.filter((p) => p.record.guid === GUIDS.rock);
    c.shaders.scan();
    const problems: string[] = [];
    const store = path.join(dir, 'Intermediates', 'ShaderCache');
    const spv = () => (fs.existsSync(store) ? fs.readdirSync(store).filter((n) => n.endsWith('.spv')) : []);
    const raced = await cookShaders({ config: c.config, shaders: c.shaders, packages: rock, chunks: plan.chunks, report: (e) => problems.push(e.message), compiler: { ...real, exe: fake } });
    expect(problems).toEqual([]);
    expect(raced).toMatchObject({ ok: true, permutations: 2, compiled: 2 });
    // Compiled from the edited include (shipped), but cached under no key: the scan's key names the old bytes.
    expect(spv()).toEqual([]);

    // The edit's own re-cook (a fresh scan) compiles the same code under its key, and caches it.
    c.shaders.scan();
    const after = await cookShaders({ config: c.config, shaders: c.shaders, packages: rock, chunks: plan.chunks, report: (e) => problems.push(e.message), compiler: real });
    c.close();
    expect(problems).toEqual([]);
    expect(after).toMatchObject({ ok: true, compiled: 2, cached: 0 });
    expect(spv()).toHaveLength(2);
    expect(Buffer.from(after.allBytes).equals(Buffer.from(raced.allBytes))).toBe(true);
  });

  it('parses glslang diagnostics, GLSL columns from the quoted token', () => {
    const d = parseDiagnostics("ERROR: /x/y.hlsl:3: 'declaration' : Expected \n/x/y.hlsl(3): error at column 4, HLSL parsing failed.\nERROR: 2 compilation errors.  No code generated.\n", '/x/y.hlsl');
    expect(d).toEqual([{ file: '/x/y.hlsl', line: 3, column: 5, message: "'declaration' : Expected" }]);
  });
});
