/**
 * Shader throughput: permutations per second of the shader cook (compile, spirv-val, store,
 * ShaderCache.bin) against the compiler's own command line on the same sources and the same
 * permutations, run with the same parallelism (one per core) in the same run. Also the warm cook,
 * where every permutation comes from the shader cache. Run directly: `npx tsx bench/shaderBench.ts`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Cooker } from '../cook/Cooker.js';
import { compileArgs, detectCompiler, type ShaderCompiler } from '../cook/shaders/compiler.js';
import { buildPackage, hard, prop } from '../src/format/packageBuilder.js';
import { decodeShaderCache } from '../src/format/shaderCache.js';
import { SAMPLE_GLOBAL_SHADERS, SAMPLE_LIT_SHADER, SAMPLE_SHADER_FILES } from '../samples/sampleShaders.js';

const LABEL = 58;
const DEFINE_POOL = ['USE_NORMAL_MAP', 'ALPHA_TEST=0.5', 'TINT=0.8', 'FOG', 'WET', 'SNOW', 'DETAIL'];

const g = (n: number) => n.toString(16).padStart(32, '0');

/** A project whose `materials` materials each ask Lit.hlsl for a different define set. */
function writeProject(dir: string, materials: number): void {
  const w = (rel: string, data: string | Uint8Array) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), data);
  };
  w('lumina-cook.json', JSON.stringify({ name: 'ShaderBench', cookRoots: ['/Game/Maps/Main'], shaders: { global: SAMPLE_GLOBAL_SHADERS } }));
  for (const [rel, text] of Object.entries(SAMPLE_SHADER_FILES)) w(`Content/${rel}`, text);
  const guids: string[] = [];
  for (let i = 0; i < materials; i++) {
    const guid = g(0x1000 + i);
    guids.push(guid);
    // Bit i of the pool picks the defines: every material gets its own set.
    const defines = DEFINE_POOL.filter((_, b) => ((i + 1) >> b) & 1);
    w(`Content/Materials/M_${i}.lasset`, buildPackage({
      exports: [{
        guid,
        name: `M_${i}`,
        className: '/Script/Engine.CMaterial',
        properties: [prop.str('ShaderSource', SAMPLE_LIT_SHADER), { name: 'ShaderDefines', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StrProperty', value: defines }],
      }],
    }));
  }
  w('Content/Maps/Main.lasset', buildPackage({ imports: guids.map(hard), exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.int('X', 1)] }] }));
}

/** Every permutation straight through the compiler's command line, `parallel` at a time, no validation. */
async function compilerAlone(compiler: ShaderCompiler, jobs: Array<{ args: string[] }>, parallel: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const j = jobs[next++];
      await new Promise<void>((resolve, reject) => {
        const c = spawn(compiler.exe, j.args, { stdio: 'ignore' });
        c.on('error', reject);
        c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${compiler.exe} exited with ${code}`))));
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return (performance.now() - t0) / 1000;
}

/** Run the benchmark with `materials` materials (default 60: 121 permutations). */
export async function runShaderBench(opts: { materials?: number } = {}): Promise<{ lines: string[] }> {
  const materials = opts.materials ?? 60;
  const found = await detectCompiler();
  if (typeof found === 'string') return { lines: [`shader: skipped: ${found}`] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-shader-bench-'));
  try {
    writeProject(dir, materials);
    const cores = os.availableParallelism();
    const cooker = await Cooker.open({ projectDir: dir });
    const plan = cooker.plan();
    const t0 = performance.now();
    const cold = await cooker.cookShaders(plan.packages, plan.chunks);
    const coldS = (performance.now() - t0) / 1000;
    if (!cold.ok) throw new Error('the shader cook failed');
    const t1 = performance.now();
    const warm = await cooker.cookShaders(plan.packages, plan.chunks);
    const warmS = (performance.now() - t1) / 1000;
    cooker.close();

    // The same permutations, as the command lines the cook runs.
    const out = path.join(dir, 'alone.spv');
    const jobs = decodeShaderCache(cold.allBytes, 'bench').permutations.map((p) => {
      const rec = cooker.shaders.get(p.source)!;
      return { args: compileArgs(found, { file: rec.file, language: rec.language, entry: p.entry, stage: p.stage, defines: p.defines, includeDirs: cooker.shaders.includeDirs }, `${out}.${p.key.toString(16)}`) };
    });
    const aloneS = await compilerAlone(found, jobs, cores);

    const n = cold.permutations;
    const rate = (s: number) => `${(n / s).toFixed(1)} permutations/s`;
    return {
      lines: [
        `shader: ${n} permutations of ${SAMPLE_LIT_SHADER} (+ a global compute shader), ${found.id}, ${cores} cores`,
        `${`${path.basename(found.exe)} command line alone (compile only):`.padEnd(LABEL)}${rate(aloneS)}`,
        `${'shader cook, cold (compile + spirv-val + cache + pack):'.padEnd(LABEL)}${rate(coldS)}  (${(coldS / aloneS).toFixed(2)}x the compiler alone)`,
        `${'shader cook, warm (every permutation cached):'.padEnd(LABEL)}${rate(warmS)}  (${warm.cached} cached, ${warm.compiled} compiled)`,
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { initHash } = await import('../src/util/hash.js');
  await initHash();
  const { lines } = await runShaderBench();
  for (const l of lines) process.stdout.write(`${l}\n`);
}
