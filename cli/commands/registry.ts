/**
 * `lumina-cook registry scan|list|deps|referrers|why`. Each subcommand is a plain function that
 * loads the project, scans (incrementally, through the cache) and returns `{ data, text }`; the
 * yargs handlers only print one or the other (`--json`). User errors are thrown as LuminaError.
 */
import type { Argv, CommandModule } from 'yargs';
import { loadConfig, type ProjectConfig } from '../../config/index.js';
import { formatLog, LuminaError, type ErrorCode } from '../../src/errors.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import type { Logger } from '../../src/log/logger.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { type CookRoot } from '../../src/registry/cookRoots.js';
import type { AssetRecord, ScanProblem, ScanResult } from '../../src/registry/types.js';
import { commandGroup, printOutput, type CommandOutput } from '../commandOutput.js';

export interface RegistryCliOptions {
  /** Project folder; default '.'. */
  project?: string;
  /** CI mode: never write sidecars into the source tree; `scan` fails on any error-level problem. */
  ci?: boolean;
  log?: Logger;
}

export type { CommandOutput } from '../commandOutput.js';

const typeName = (t: DependencyType): 'Hard' | 'Soft' => (t === DependencyType.Soft ? 'Soft' : 'Hard');

async function openScanned(opts: RegistryCliOptions): Promise<{ registry: AssetRegistry; result: ScanResult; config: ProjectConfig }> {
  const { config } = loadConfig(opts.project ?? '.');
  const registry = await AssetRegistry.open({ config, log: opts.log, mintSidecars: !opts.ci });
  const result = await registry.scan();
  return { registry, result, config };
}

function problemLines(problems: ScanProblem[], root: string): string {
  return problems.map((p) => `${formatLog({ code: p.code as ErrorCode, message: p.message, file: p.file, hint: p.hint }, root)}\n`).join('');
}

/** A problem as a throwable error, for `--ci`. */
export function problemError(p: ScanProblem): LuminaError {
  return new LuminaError({ code: p.code as ErrorCode, message: p.message, file: p.file, hint: p.hint });
}

/** `registry scan`: the incremental pass and what it did. Under `--ci`, `firstError` is set when any problem is an error. */
export async function registryScan(opts: RegistryCliOptions = {}): Promise<CommandOutput<ScanResult> & { firstError?: LuminaError }> {
  const { result, config } = await openScanned(opts);
  const text =
    `${result.assets} assets in ${result.ms.toFixed(0)} ms: ${result.read} read, ${result.cached} cached, ` +
    `${result.rehashed} rehashed, ${result.removed} removed, ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}\n` +
    problemLines(result.problems, config.projectDir);
  const bad = opts.ci ? result.problems.find((p) => p.severity !== 'warning') : undefined;
  return bad ? { data: result, text, firstError: problemError(bad) } : { data: result, text };
}

export interface ListedAsset {
  guid: string;
  className: string;
  packagePath: string;
  virtualPath: string;
  kind: AssetRecord['kind'];
  flags: number;
}

/** `registry list`: one line per asset (GUID, class, package path), sorted by GUID. */
export async function registryList(opts: RegistryCliOptions = {}): Promise<CommandOutput<ListedAsset[]>> {
  const { registry } = await openScanned(opts);
  const data = registry.all().map((r) => ({ guid: r.guid, className: r.className, packagePath: r.packagePath, virtualPath: r.virtualPath, kind: r.kind, flags: r.flags }));
  return { data, text: data.map((a) => `${a.guid}  ${a.className}  ${a.packagePath}\n`).join('') };
}

export interface EdgeOut {
  guid: string;
  type: 'Hard' | 'Soft';
  /** Null when no mounted asset has the GUID. */
  packagePath: string | null;
}

export interface EdgesOutput {
  asset: { guid: string; packagePath: string };
  edges: EdgeOut[];
}

function edgeText(title: string, data: EdgesOutput): string {
  const lines = data.edges.map((e) => `  ${e.type}  ${e.guid}  ${e.packagePath ?? '(missing)'}\n`);
  return `${data.asset.packagePath} (${data.asset.guid}) ${title}: ${data.edges.length === 0 ? 'none' : ''}\n${lines.join('')}`;
}

/** `registry deps <asset>`: the asset's imports, Hard or Soft, in import order. */
export async function registryDeps(asset: string, opts: RegistryCliOptions = {}): Promise<CommandOutput<EdgesOutput>> {
  const { registry } = await openScanned(opts);
  const r = registry.resolve(asset);
  const edges = r.dependencies.map((d) => ({ guid: d.guid, type: typeName(d.type), packagePath: registry.get(d.guid)?.packagePath ?? null }));
  const data: EdgesOutput = { asset: { guid: r.guid, packagePath: r.packagePath }, edges };
  return { data, text: edgeText('depends on', data) };
}

/** `registry referrers <asset>`: the assets that import it (reverse map), sorted by GUID. */
export async function registryReferrers(asset: string, opts: RegistryCliOptions = {}): Promise<CommandOutput<EdgesOutput>> {
  const { registry } = await openScanned(opts);
  const r = registry.resolve(asset);
  const edges = registry.referrers(r.guid).map((x) => ({ guid: x.guid, type: typeName(x.type), packagePath: registry.get(x.guid)?.packagePath ?? null }));
  const data: EdgesOutput = { asset: { guid: r.guid, packagePath: r.packagePath }, edges };
  return { data, text: edgeText('is referenced by', data) };
}

export interface WhyOutput {
  asset: { guid: string; packagePath: string };
  /** The chunk the cook ships it in; null when the cook leaves it out. */
  chunk: string | null;
  /** The root of that chunk the chain starts at; null when the asset is not reached (or is a text asset, which ships by mount). */
  root: CookRoot | null;
  chain: Array<{ guid: string; packagePath: string; via?: 'Hard' | 'Soft' }> | null;
  /** Left out because only Soft references lead to it and cook.soft is "exclude". */
  softExcluded: boolean;
  missingRoots: string[];
}

/**
 * `registry why <asset>`: the shortest chain the cook follows from a root of the chunk the asset
 * ships in (see cook/whyShipped.ts), or why the cook leaves it out.
 */
export async function registryWhy(asset: string, opts: RegistryCliOptions = {}): Promise<CommandOutput<WhyOutput>> {
  const { registry, config } = await openScanned(opts);
  const target = registry.resolve(asset);
  // Loaded here: it pulls in the cook's planner, which `registry scan` (timed against find) never needs.
  const { whyShipped } = await import('../../cook/whyShipped.js');
  const why = whyShipped(registry, config, target.guid);
  const chain = why.chain?.map((l) => ({
    guid: l.guid,
    packagePath: registry.get(l.guid)!.packagePath,
    ...(l.via === undefined ? {} : { via: typeName(l.via) }),
  }));
  const root = chain ? why.root : null;
  const data: WhyOutput = {
    asset: { guid: target.guid, packagePath: target.packagePath },
    chunk: why.chunk,
    root,
    chain: chain ?? null,
    softExcluded: why.softExcluded,
    missingRoots: why.missingRoots,
  };
  let text: string;
  if (why.chunk === null) {
    text = why.softExcluded
      ? `${target.packagePath} is not cooked: only Soft references lead to it and cook.soft is "exclude"\n`
      : `${target.packagePath} is not reachable from any cook root (${why.roots.length} root${why.roots.length === 1 ? '' : 's'}): it would not be cooked\n`;
  } else if (!chain || !root) {
    text = `${target.packagePath} ships in chunk ${why.chunk}: text assets always ship, in their mount's chunk\n`;
  } else {
    text = `${chain[0].packagePath} (cook root: ${root.reason}, chunk ${root.chunk})\n`;
    for (let i = 1; i < chain.length; i++) text += `${'  '.repeat(i)}-> ${chain[i].packagePath} (${chain[i].via})\n`;
  }
  for (const m of why.missingRoots) text += `warning: cook root ${m} matches no asset\n`;
  return { data, text };
}

// ---- yargs wiring ----

interface CommonArgs {
  project: string;
  json: boolean;
  ci: boolean;
}

const common = <T>(y: Argv<T>) =>
  y
    .option('project', { type: 'string', default: '.', describe: 'project folder (holds lumina-cook.json)' })
    .option('ci', { type: 'boolean', default: false, describe: 'CI mode: never mint .lmeta sidecars; scan fails on problems' });


const withAsset = <T>(y: Argv<T>) => common(y).positional('asset', { type: 'string', demandOption: true, describe: 'GUID, /Game/Path/Name, object path, virtual path or file' });

const scanCmd: CommandModule<object, CommonArgs> = {
  command: 'scan',
  describe: 'discover assets incrementally and update Intermediates/AssetRegistry.assetdb',
  builder: (y) => common(y) as unknown as Argv<CommonArgs>,
  handler: async (a) => {
    const out = await registryScan({ project: a.project, ci: a.ci });
    printOutput({ ...out, ok: !out.firstError }, a.json);
    if (out.firstError) throw out.firstError;
  },
};

const listCmd: CommandModule<object, CommonArgs> = {
  command: 'list',
  describe: 'one line per asset: GUID, class, package path',
  builder: (y) => common(y) as unknown as Argv<CommonArgs>,
  handler: async (a) => {
    const r = await registryList({ project: a.project, ci: a.ci });
    printOutput({ data: { assets: r.data }, text: r.text }, a.json);
  },
};

type AssetArgs = CommonArgs & { asset: string };

const depsCmd: CommandModule<object, AssetArgs> = {
  command: 'deps <asset>',
  describe: "an asset's dependencies, Hard or Soft",
  builder: (y) => withAsset(y) as unknown as Argv<AssetArgs>,
  handler: async (a) => printOutput(await registryDeps(a.asset, { project: a.project, ci: a.ci }), a.json),
};

const referrersCmd: CommandModule<object, AssetArgs> = {
  command: 'referrers <asset>',
  describe: 'the assets that depend on an asset',
  builder: (y) => withAsset(y) as unknown as Argv<AssetArgs>,
  handler: async (a) => printOutput(await registryReferrers(a.asset, { project: a.project, ci: a.ci }), a.json),
};

const whyCmd: CommandModule<object, AssetArgs> = {
  command: 'why <asset>',
  describe: 'the dependency chain from a cook root to an asset',
  builder: (y) => withAsset(y) as unknown as Argv<AssetArgs>,
  handler: async (a) => printOutput(await registryWhy(a.asset, { project: a.project, ci: a.ci }), a.json),
};

/** `registry <subcommand>`: register with `yargs.command(registryCommand)`. */
export const registryCommand = commandGroup('registry', 'scan the asset registry and query dependencies', [scanCmd, listCmd, depsCmd, referrersCmd, whyCmd]);
