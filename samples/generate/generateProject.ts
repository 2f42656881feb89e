/**
 * Write a complete, deterministic project: lumina-cook.json, /Game content, an enabled plugin
 * with its own cook root and chunk, a disabled plugin, and text assets with sidecars.
 * The same options give the same bytes in every file.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { buildAssetPackage, PackageContext } from './assetPackages.js';
import { planProject, type PlannedAsset, type ProjectPlan } from './planProject.js';
import { lmetaText, textAssetContent } from './textAssets.js';
import { schemaFiles } from '../nativeSamples.js';
import { SAMPLE_GLOBAL_SHADERS, SAMPLE_SHADER_FILES } from '../sampleShaders.js';

export interface GenerateOptions {
  /** Folder to write the project into (created if missing). */
  out: string;
  /** How many assets (packages and text assets), 1..1,000,000. */
  assets: number;
  /** PRNG seed; default 1. */
  seed?: number;
  /** Side of the generated texture sources in pixels; default 16. */
  textureSize?: number;
  /** Include a disabled plugin with content on disk; default true (projects of 100+ assets). */
  withDisabledPlugin?: boolean;
  /** Written as `textures.encoder` in lumina-cook.json when set. */
  textureEncoder?: 'basis' | 'rgba8';
  /** Files written at once; default 64. */
  concurrency?: number;
}

export interface GenerateResult {
  files: number;
  bytes: number;
  assets: number;
}

/** Generate the project and return what was written. */
export async function generateProject(opts: GenerateOptions): Promise<GenerateResult> {
  const seed = (opts.seed ?? 1) >>> 0;
  const plan = planProject({ assets: opts.assets, seed, withDisabledPlugin: opts.withDisabledPlugin });
  const ctx = new PackageContext(plan, seed, opts.textureSize ?? 16);
  const out = path.resolve(opts.out);

  await fsp.mkdir(out, { recursive: true });
  // Folders are made as the first file in each is written (a few thousand at a million assets).
  const made = new Map<string, Promise<unknown>>();
  const folder = (dir: string) => {
    let p = made.get(dir);
    if (!p) made.set(dir, (p = fsp.mkdir(dir, { recursive: true })));
    return p;
  };
  for (const p of plan.plugins) await folder(path.join(out, p.path, 'Content'));

  let files = 0;
  let bytes = 0;
  const write = async (rel: string, data: Uint8Array | string) => {
    const file = path.join(out, rel);
    await folder(path.dirname(file));
    await fsp.writeFile(file, data);
    files++;
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  };

  await write('lumina-cook.json', projectConfigText(plan, opts.textureEncoder));
  // The class schemas of the native tails the packages carry (samples/nativeSamples.ts).
  await fsp.mkdir(path.join(out, 'Schemas'), { recursive: true });
  for (const [rel, text] of schemaFiles()) await write(rel, text);
  // The shaders every generated material names (Lit.hlsl) and the global compute shader.
  for (const [rel, text] of Object.entries(SAMPLE_SHADER_FILES)) {
    await fsp.mkdir(path.dirname(path.join(out, 'Content', rel)), { recursive: true });
    await write(`Content/${rel}`, text);
  }

  // Packages are built inside the workers, one asset at a time from the compact plan (nothing
  // per asset stays in memory): each draws from its own per-asset stream, so the order in which
  // workers finish never changes a byte.
  let next = 0;
  const worker = async () => {
    while (next < plan.count) await writeAsset(plan.asset(next++), ctx, write);
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 64) }, worker));
  return { files, bytes, assets: plan.count };
}

async function writeAsset(a: PlannedAsset, ctx: PackageContext, write: (rel: string, data: Uint8Array | string) => Promise<void>): Promise<void> {
  if (a.kind === 'text') {
    await write(a.file, textAssetContent(a.textExtension!, a.name, ctx.random(a)));
    await write(`${a.file}.lmeta`, lmetaText(a.guid));
    return;
  }
  await write(a.file, buildAssetPackage(a, ctx));
}

/** lumina-cook.json for a plan, pretty-printed with a trailing newline. */
export function projectConfigText(plan: ProjectPlan, textureEncoder?: 'basis' | 'rgba8'): string {
  const config: Record<string, unknown> = {
    name: plan.name,
    cookRoots: plan.cookRoots,
    GameStartupMap: plan.gameStartupMap,
    plugins: plan.plugins.map((p) => ({
      name: p.name,
      path: p.path,
      enabled: p.enabled,
      chunk: p.chunk,
      ...(p.cookRoots.length ? { cookRoots: p.cookRoots } : {}),
    })),
  };
  if (textureEncoder) config.textures = { encoder: textureEncoder };
  config.shaders = { global: SAMPLE_GLOBAL_SHADERS };
  return `${JSON.stringify(config, null, 2)}\n`;
}
