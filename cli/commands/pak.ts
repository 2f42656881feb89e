/**
 * `lumina-cook pak ls|cat|extract|verify|diff` and `lumina-cook patch`, as yargs command modules
 * over plain functions (which tests and other tools call directly). Handlers print to stdout and
 * throw LuminaError on user errors; the CLI entry formats those and sets the exit code.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { errors, isLuminaError, type LuminaLog } from '../../src/errors.js';
import { writeFileAtomic } from '../../src/util/atomicWrite.js';
import { hashHex } from '../../src/util/hash.js';
import { PakReader } from '../../pak/PakReader.js';
import { MountedPaks, type MountOptions } from '../../pak/MountedPaks.js';
import { diffPaks, type PakDiff } from '../../pak/diffPaks.js';
import { buildPatchPak, type PatchSummary } from '../../pak/buildPatch.js';
import { collectSources } from '../../pak/collectSources.js';
import { readReleaseManifest } from '../../pak/releaseManifest.js';
import { catPath, extractPaks, type ExtractResult } from '../../pak/extractPaks.js';
import { commandGroup, printOutput, type CommandOutput } from '../commandOutput.js';

export type { CommandOutput } from '../commandOutput.js';

const METHOD_NAMES = ['stored', 'deflate', 'tombstone'] as const;

export interface LsPak {
  file: string;
  mountPoint: string;
  priority: number;
  patch: boolean;
  baseTocHash: string;
  tocHash: string;
  entries: { path: string; method: string; rawSize: number; storedSize: number; xxh64: string }[];
}

/** The TOC of each pak. */
export async function pakLs(paks: readonly string[]): Promise<CommandOutput<LsPak[]>> {
  const data: LsPak[] = [];
  const lines: string[] = [];
  for (const file of paks) {
    const pak = await PakReader.open(file);
    try {
      const d: LsPak = {
        file,
        mountPoint: pak.toc.mountPoint,
        priority: pak.toc.priority,
        patch: pak.isPatch,
        baseTocHash: hashHex(pak.toc.baseTocHash),
        tocHash: hashHex(pak.tocHash),
        entries: pak.entries.map((e) => ({ path: e.path, method: METHOD_NAMES[e.method], rawSize: e.rawSize, storedSize: e.storedSize, xxh64: hashHex(e.xxh64) })),
      };
      data.push(d);
      lines.push(
        `# ${file}: ${d.entries.length} entries, mount ${d.mountPoint}, priority ${d.priority}, toc ${d.tocHash}${d.patch ? `, patch of ${d.baseTocHash}` : ''}`,
      );
      for (const e of d.entries) lines.push(`${e.method.padEnd(9)} ${String(e.rawSize).padStart(12)} ${String(e.storedSize).padStart(12)} ${e.xxh64} ${e.path}`);
    } finally {
      await pak.close();
    }
  }
  return { data, text: lines.join('\n') + '\n' };
}

export interface ResolvedPath {
  path: string;
  /** "overlay", or the pak file that serves the path. */
  source: string;
  rawSize: number;
  method?: string;
  xxh64?: string;
}

/** The merged view of paks under a loose-file overlay: every live path and where it resolves. */
export async function pakLsResolved(paks: readonly string[], overlayDir: string): Promise<CommandOutput<{ overlay: string; paths: ResolvedPath[] }>> {
  const m = await MountedPaks.mount(paks, { overlayDir });
  try {
    const paths: ResolvedPath[] = [];
    for (const p of await m.list()) {
      const r = await m.resolve(p);
      if (!r) continue;
      paths.push(
        r.source === 'overlay'
          ? { path: p, source: 'overlay', rawSize: r.rawSize }
          : { path: p, source: r.pak.file, rawSize: r.rawSize, method: METHOD_NAMES[r.entry.method], xxh64: hashHex(r.entry.xxh64) },
      );
    }
    const overlay = m.overlayDir!;
    const lines = [`# ${paths.length} paths through the overlay ${overlay} and ${paks.length} pak${paks.length === 1 ? '' : 's'}`];
    for (const e of paths) lines.push(`${(e.method ?? 'loose').padEnd(9)} ${String(e.rawSize).padStart(12)} ${e.path}  (${e.source})`);
    return { data: { overlay, paths }, text: lines.join('\n') + '\n' };
  } finally {
    await m.close();
  }
}

/** The raw bytes of a virtual path (mount point applied) as the given paks resolve it, whole (see catPath to stream). */
export async function pakCat(paks: readonly string[], virtualPath: string): Promise<Uint8Array> {
  const m = await MountedPaks.mount(paks);
  try {
    return await m.read(virtualPath);
  } finally {
    await m.close();
  }
}

/**
 * Write every live path of the mounted paks under `outDir` (atomically, one file at a time,
 * streamed in bounded memory); see extractPaks for what is refused before anything is written.
 */
export async function pakExtract(paks: readonly string[], outDir: string, opts: MountOptions = {}): Promise<CommandOutput<ExtractResult>> {
  const r = await extractPaks(paks, outDir, opts);
  return { data: r, text: `extracted ${r.files} files (${r.bytes} bytes) to ${r.out}\n` };
}

export interface VerifyReport {
  ok: boolean;
  paks: { file: string; ok: boolean; entries?: number; rawBytes?: number; error?: LuminaLog }[];
}

/** Check every hash of every pak; each failed pak reports its first bad entry (or its bad header/TOC). */
export async function pakVerify(paks: readonly string[]): Promise<CommandOutput<VerifyReport> & { firstError?: Error }> {
  const report: VerifyReport = { ok: true, paks: [] };
  const lines: string[] = [];
  let firstError: Error | undefined;
  for (const file of paks) {
    let pak: PakReader | undefined;
    try {
      pak = await PakReader.open(file);
      const r = await pak.verify();
      report.paks.push({ file, ok: true, entries: r.entries, rawBytes: r.rawBytes });
      lines.push(`ok   ${file}: ${r.entries} entries, ${r.rawBytes} raw bytes`);
    } catch (e) {
      if (!isLuminaError(e)) throw e;
      report.ok = false;
      firstError ??= e;
      report.paks.push({ file, ok: false, error: e.toLog() });
      lines.push(`BAD  ${file}: [${e.code}] ${e.message}`);
    } finally {
      await pak?.close();
    }
  }
  const out: CommandOutput<VerifyReport> & { firstError?: Error } = { data: report, text: lines.join('\n') + '\n' };
  if (firstError) out.firstError = firstError;
  return out;
}

/** Added, changed and removed virtual paths from the `base` set to the `target` set. */
export async function pakDiff(base: readonly string[], target: readonly string[]): Promise<CommandOutput<PakDiff>> {
  const d = await diffPaks(base, target);
  const lines = [...d.added.map((p) => `+ ${p}`), ...d.changed.map((p) => `M ${p}`), ...d.removed.map((p) => `- ${p}`)];
  lines.push(`${d.added.length} added, ${d.changed.length} changed, ${d.removed.length} removed`);
  return { data: d, text: lines.join('\n') + '\n' };
}

/** A PatchSummary as JSON can carry it: the TOC hashes as 16 hex digits. */
export type PatchOutput = Omit<PatchSummary, 'baseTocHash' | 'tocHash'> & { baseTocHash: string; tocHash: string };

/** Build a patch pak from the cooked tree `cookedDir` (the new full content) against a release. */
export async function runPatch(opts: { base: string; cookedDir: string; out: string; mountPoint?: string }): Promise<CommandOutput<PatchOutput>> {
  const base = await readReleaseManifest(opts.base);
  const s = await buildPatchPak({ base, entries: await collectSources(opts.cookedDir), out: opts.out, mountPoint: opts.mountPoint });
  return patchOutput(s, base.name);
}

/** A written patch as command output: JSON-ready data and one line for people. */
export function patchOutput(s: PatchSummary, baseName: string): CommandOutput<PatchOutput> {
  const data: PatchOutput = { ...s, baseTocHash: hashHex(s.baseTocHash), tocHash: hashHex(s.tocHash) };
  const text =
    `patch ${s.file} against "${baseName}" (base ${data.baseTocHash}), priority ${s.priority}: ` +
    `${s.added.length} added, ${s.changed.length} changed, ${s.removed.length} removed, ${s.unchanged} unchanged\n`;
  return { data, text };
}


interface JsonArg {
  json?: boolean;
}


/** `--overlay DIR`: a loose-file folder that wins over every pak, as at run time (MountedPaks). */
const withOverlay = <T>(y: Argv<T>) =>
  y.option('overlay', { type: 'string', describe: 'loose-file folder that wins over the paks (/Game/X.lasset is DIR/Game/X.lasset)' });

/** The overlay folder, checked: a typo must not silently mean "no loose files". */
async function overlayDir(dir: string | undefined): Promise<MountOptions> {
  if (dir === undefined) return {};
  const st = await fsp.stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw errors.usage(`--overlay ${dir} is not a folder`);
  return { overlayDir: dir };
}

type OverlayArg = { overlay?: string };

const lsCommand: CommandModule<object, JsonArg & OverlayArg & { paks: string[] }> = {
  command: 'ls <paks..>',
  describe: 'list the entries of each pak (with --overlay: every path as the paks and the folder resolve it)',
  builder: (y) => withOverlay(y).positional('paks', { type: 'string', array: true, demandOption: true }) as unknown as Argv<JsonArg & OverlayArg & { paks: string[] }>,
  handler: async (a) => {
    const { overlayDir: dir } = await overlayDir(a.overlay);
    if (dir !== undefined) return printOutput(await pakLsResolved(a.paks, dir), a.json);
    const r = await pakLs(a.paks);
    printOutput({ data: { paks: r.data }, text: r.text }, a.json);
  },
};

const catCommand: CommandModule<object, OverlayArg & { pak: string; path: string; with?: string[] }> = {
  command: 'cat <pak> <path>',
  describe: 'write the raw bytes of a virtual path to stdout',
  builder: (y) =>
    withOverlay(y)
      .positional('pak', { type: 'string', demandOption: true })
      .positional('path', { type: 'string', demandOption: true, describe: 'virtual path, e.g. /Game/Maps/Main.lasset' })
      .option('with', { type: 'string', array: true, describe: 'more paks to mount with it (patches, chunks)' }) as unknown as Argv<
      OverlayArg & { pak: string; path: string; with?: string[] }
    >,
  handler: async (a) => {
    await catPath([a.pak, ...(a.with ?? [])], a.path, process.stdout, await overlayDir(a.overlay));
  },
};

const extractCommand: CommandModule<object, JsonArg & OverlayArg & { paks: string[]; out: string }> = {
  command: 'extract <paks..>',
  describe: 'write every path the paks (and --overlay) resolve to files under --out',
  builder: (y) =>
    withOverlay(y)
      .positional('paks', { type: 'string', array: true, demandOption: true })
      .option('out', { type: 'string', demandOption: true, describe: 'output folder' }) as unknown as Argv<JsonArg & OverlayArg & { paks: string[]; out: string }>,
  handler: async (a) => printOutput(await pakExtract(a.paks, a.out, await overlayDir(a.overlay)), a.json),
};

const verifyCommand: CommandModule<object, JsonArg & { paks: string[] }> = {
  command: 'verify <paks..>',
  describe: 'check every hash; fails with the first bad entry',
  builder: (y) => y.positional('paks', { type: 'string', array: true, demandOption: true }) as unknown as Argv<JsonArg & { paks: string[] }>,
  handler: async (a) => {
    const r = await pakVerify(a.paks);
    if (a.json || r.data.ok) printOutput({ ...r, ok: r.data.ok }, a.json);
    else process.stdout.write(r.text.split('\n').filter((l) => l.startsWith('ok ')).map((l) => l + '\n').join(''));
    if (!r.data.ok) {
      // With --json the report is the output; without it the CLI entry prints the first error.
      if (a.json) process.exitCode = 1;
      else throw r.firstError;
    }
  },
};

const diffCommand: CommandModule<object, JsonArg & { a?: string; b?: string; base?: string[]; target?: string[] }> = {
  command: 'diff [a] [b]',
  describe: 'paths added, changed and removed from pak a to pak b (or from the --base set to the --target set)',
  builder: (y) =>
    y
      .positional('a', { type: 'string' })
      .positional('b', { type: 'string' })
      .option('base', { type: 'string', array: true, describe: 'paks of the old set' })
      .option('target', { type: 'string', array: true, describe: 'paks of the new set' })
      .example('$0 pak diff v1.pak v2.pak', '')
      .example('$0 pak diff --base Main.pak Chunk1.pak --target Main.pak Chunk1.pak Patch.pak', '') as unknown as Argv<
      JsonArg & { a?: string; b?: string; base?: string[]; target?: string[] }
    >,
  handler: async (a) => {
    const base = [...(a.a !== undefined ? [a.a] : []), ...(a.base ?? [])];
    const target = [...(a.b !== undefined ? [a.b] : []), ...(a.target ?? [])];
    if (base.length === 0 || target.length === 0) throw errors.usage('pak diff needs two paks, or --base <paks..> and --target <paks..>');
    printOutput(await pakDiff(base, target), a.json);
  },
};

/** `pak <subcommand>`: register with `yargs.command(pakCommand)`. */
export const pakCommand = commandGroup('pak', 'inspect, extract, verify and diff paks', [lsCommand, catCommand, extractCommand, verifyCommand, diffCommand]);

interface PatchArgs extends JsonArg {
  base: string;
  out: string;
  cooked?: string;
  mountPoint?: string;
}

/**
 * `patch --base <release folder or release.json> --out <patch.pak>`. `cook` runs the cook and
 * resolves with the cooked folder (the CLI entry passes the cook pipeline here); without it the
 * command packs the existing `--cooked` folder (default Saved/Cooked).
 */
export function makePatchCommand(cook?: (argv: PatchArgs) => Promise<string>): CommandModule {
  const mod: CommandModule<object, PatchArgs> = {
    command: 'patch',
    describe: 'cook the current content and write a patch pak against a release',
    builder: (y) =>
      y
        .option('base', { type: 'string', demandOption: true, describe: 'release folder or its release.json' })
        .option('out', { type: 'string', demandOption: true, describe: 'patch pak to write' })
        .option('cooked', { type: 'string', describe: 'cooked folder to pack (default Saved/Cooked)' })
        .option('mount-point', { type: 'string', default: '/' }) as unknown as Argv<PatchArgs>,
    handler: async (a) => {
      const cookedDir = cook ? await cook(a) : (a.cooked ?? path.join('Saved', 'Cooked'));
      printOutput(await runPatch({ base: a.base, cookedDir, out: a.out, mountPoint: a.mountPoint }), a.json);
    },
  };
  return mod as unknown as CommandModule;
}

export const patchCommand: CommandModule = makePatchCommand();
