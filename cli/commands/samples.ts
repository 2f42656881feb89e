/**
 * `lumina-cook samples generate --assets N --out DIR [--seed S] [--texture-size PX] [--force]`:
 * a yargs command module over {@link runSamplesGenerate}, which tests and benchmarks call directly.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { errors } from '../../src/errors.js';
import { generateProject, type GenerateResult } from '../../samples/generate/generateProject.js';
import { commandGroup, formatBytes, printOutput } from '../commandOutput.js';

export const MAX_ASSETS = 1_000_000;
export const MAX_TEXTURE_SIZE = 4096;

export interface SamplesGenerateArgs {
  assets: number;
  out: string;
  seed?: number;
  textureSize?: number;
  textureEncoder?: 'basis' | 'rgba8';
  /** Write into a folder that already holds files (they are overwritten or kept, never deleted). */
  force?: boolean;
}

export interface SamplesGenerateOutput {
  data: GenerateResult & { out: string; seed: number; ms: number };
  /** The one-line summary for people. */
  text: string;
}

/** Validate the arguments (USAGE errors), generate the project, and summarise it in one line. */
export async function runSamplesGenerate(args: SamplesGenerateArgs): Promise<SamplesGenerateOutput> {
  const { assets, out } = args;
  if (!Number.isInteger(assets) || assets < 1 || assets > MAX_ASSETS) {
    throw errors.usage(`--assets must be a whole number from 1 to ${MAX_ASSETS}, not ${String(assets)}`);
  }
  const seed = args.seed ?? 1;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    throw errors.usage(`--seed must be a whole number from 0 to 4294967295, not ${String(seed)}`);
  }
  const textureSize = args.textureSize ?? 16;
  if (!Number.isInteger(textureSize) || textureSize < 1 || textureSize > MAX_TEXTURE_SIZE) {
    throw errors.usage(`--texture-size must be a whole number from 1 to ${MAX_TEXTURE_SIZE}, not ${String(textureSize)}`);
  }
  if (typeof out !== 'string' || out.length === 0) throw errors.usage('--out must name a folder');
  checkOutFolder(out, args.force === true);

  const started = performance.now();
  const result = await generateProject({ out, assets, seed, textureSize, textureEncoder: args.textureEncoder });
  const ms = Math.round(performance.now() - started);
  const text = `generated ${result.assets} assets (${result.files} files, ${formatBytes(result.bytes)}) in ${out} from seed ${seed} in ${(ms / 1000).toFixed(1)} s\n`;
  return { data: { ...result, out: path.resolve(out), seed, ms }, text };
}

/** The output must be a missing or empty folder, or any folder with --force; never a file. */
function checkOutFolder(out: string, force: boolean): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(out);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw errors.ioFailed(out, 'stat', e);
  }
  if (!stat.isDirectory()) throw errors.usage(`--out ${out} is a file, not a folder`);
  if (!force && fs.readdirSync(out).length > 0) {
    throw errors.usage(`--out ${out} is not empty`, 'pick a new folder, or pass --force to write into it (nothing is deleted)');
  }
}

type GenerateArgv = SamplesGenerateArgs & { json: boolean };

const generateCommand: CommandModule<object, GenerateArgv> = {
  command: 'generate',
  describe: 'write a large, game-shaped project deterministically from a seed',
  builder: (y) =>
    y
      .option('assets', { type: 'number', demandOption: true, describe: `how many assets, 1..${MAX_ASSETS}` })
      .option('out', { type: 'string', demandOption: true, describe: 'folder to write the project into' })
      .option('seed', { type: 'number', default: 1, describe: 'PRNG seed: the same seed writes the same bytes' })
      .option('texture-size', { type: 'number', default: 16, describe: 'side of each texture source PNG in pixels' })
      .option('texture-encoder', { type: 'string', choices: ['basis', 'rgba8'], describe: 'write textures.encoder into lumina-cook.json' })
      .option('force', { type: 'boolean', default: false, describe: 'write into a non-empty folder' }) as unknown as Argv<GenerateArgv>,
  handler: async (a) => {
    const r = await runSamplesGenerate(a);
    printOutput(r, a.json);
  },
};

/** `samples <subcommand>`: register with `yargs.command(samplesCommand)`. */
export const samplesCommand = commandGroup('samples', 'generate sample projects', [generateCommand]);
