/**
 * The `cook` and `patch` CLI commands: thin yargs wrappers over cookProject. Output: a progress
 * bar on a TTY (stderr), structured logs (stderr), and one summary on stdout (text, or the whole
 * summary as JSON with --json). Exit code 1 when the cook is not ok (an asset failed under
 * onCookFailure "fail"; under --ci also missing dependencies, missing roots, scan problems).
 */
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { errors } from '../../src/errors.js';
import { ProgressBar } from '../../src/log/progressBar.js';
import { ProgressBus } from '../../src/log/events.js';
// The cook engine, the patch writer and the pak command are loaded when a cook starts, not
// before: a usage error or --help answers without loading them (~1 s of module loading).
import type { CookSummary } from '../../cook/cookProject.js';
import { cliLogger, formatBytes, outputSettings, printOutput } from '../commandOutput.js';
import { loadConfig } from '../../config/index.js';
import { remoteCacheUrlProblem } from '../../config/schema.js';
import type { RemoteCacheSettings } from '../../cook/remote/RemoteCookCache.js';
import { parseShard } from '../../cook/remote/shardPlan.js';

export interface CookArgs {
  project?: string;
  ci?: boolean;
  json?: boolean;
  release?: string;
  remoteCache?: string;
  remoteCacheRead?: boolean;
  remoteCacheWrite?: boolean;
  shard?: string;
  shardCosts?: string;
  assemble?: boolean;
}

/** The remote cache settings the flags override (undefined: the config decides). */
export function remoteCacheFlags(a: CookArgs): Partial<RemoteCacheSettings> {
  const out: Partial<RemoteCacheSettings> = {};
  if (a.remoteCache !== undefined) {
    const why = remoteCacheUrlProblem(a.remoteCache);
    if (why) throw errors.usage(`--remote-cache ${why}`, 'e.g. --remote-cache http://cache.internal:8080');
    out.url = a.remoteCache;
  }
  if (a.remoteCacheRead !== undefined) out.read = a.remoteCacheRead;
  if (a.remoteCacheWrite !== undefined) out.write = a.remoteCacheWrite;
  return out;
}

/**
 * Above this many assets the `--json` line leaves out `assetReports` (the cook report has every
 * asset): at a million assets they were one ~300 MB line, built in memory.
 */
export const JSON_ASSET_REPORTS_MAX = 5000;

/** The summary as `--json` prints it: `assetReports` only for cooks of up to JSON_ASSET_REPORTS_MAX assets (else `assetReportsOmitted` says how many). */
export function jsonSummary(s: CookSummary): CookSummary | (Omit<CookSummary, 'assetReports'> & { assetReports: never[]; assetReportsOmitted: number }) {
  if (s.assetReports.length <= JSON_ASSET_REPORTS_MAX) return s;
  return { ...s, assetReports: [], assetReportsOmitted: s.assetReports.length };
}

/** The one-line summary (plus a line per pak) printed at the end of a cook. */
export function formatSummary(s: CookSummary): string {
  const errorsN = s.problems.filter((p) => p.severity === 'error').length;
  const warningsN = s.problems.length - errorsN;
  const lines = [
    `${s.ok ? 'cooked' : s.interrupted ? 'cook INTERRUPTED' : 'cook FAILED'}${s.shard ? ` shard ${s.shard.index + 1}/${s.shard.count}` : ''}: ${s.assets} assets (${s.cooked} cooked, ${s.cached} cached, ` +
      `${s.fetched ? `${s.fetched} from the remote cache, ` : ''}${s.failed} failed` +
      `${s.verbatim ? `, ${s.verbatim} verbatim` : ''}), ${s.strippedExports} stripped objects, ` +
      `${formatBytes(s.bytesIn)} in -> ${formatBytes(s.bytesOut)} out, ${(s.ms / 1000).toFixed(2)} s` +
      `${errorsN || warningsN ? `; ${errorsN} errors, ${warningsN} warnings` : ''}`,
  ];
  // Each error with its file, so a failed cook says what to fix without scrolling the log.
  for (const p of s.problems) {
    if (p.severity !== 'error') continue;
    lines.push(`  error ${p.code}${p.file ? ` ${p.file}` : ''}${p.field ? ` (${p.field})` : ''}: ${p.message}`);
    if (p.hint) lines.push(`    hint: ${p.hint}`);
  }
  if (!s.ok) lines.push('  the paks were not written: the last good ones are untouched');
  if (s.shard) {
    const t = s.shard.costTable === 'none' ? 'size estimate (no cost table)' : `cost table ${s.shard.costTable.slice(0, 12)} (${s.shard.recorded} recorded)`;
    lines.push(`  shard split ${s.shard.assignment.slice(0, 12)} by ${t}; every agent of the run prints the same`);
  }
  const r = s.remoteCache;
  if (r) {
    const failed = Object.values(r.failures).reduce((a, b) => a + b, 0);
    lines.push(
      `  remote cache ${r.url}: ${r.hits} of ${r.lookups} lookups hit, ${r.published} published` +
        `${r.shaders.lookups || r.shaders.published ? ` (shaders: ${r.shaders.hits} of ${r.shaders.lookups} hit, ${r.shaders.published} published)` : ''}` +
        `${r.alreadyThere ? ` (${r.alreadyThere} already there)` : ''}, ${failed} failed${r.disabled ? ' (turned off for this run)' : ''}, ` +
        `${r.requests} requests, ${formatBytes(r.bytesDown)} down, ${formatBytes(r.bytesUp)} up`,
    );
  }
  for (const p of s.paks) lines.push(`  ${p.file}: ${p.entries} entries, ${formatBytes(p.bytes)}${p.written ? '' : ' (up to date)'}`);
  if (s.releaseManifest) lines.push(`  release: ${s.releaseManifest}`);
  if (s.report) lines.push(`report: ${s.report.html}`);
  return lines.join('\n') + '\n';
}

/** Run a cook the way the CLI does: logger, progress bar, summary; sets the exit code. */
export async function runCook(args: CookArgs): Promise<CookSummary> {
  const { json, quiet } = outputSettings();
  const bus = new ProgressBus();
  // The bar is for a person at a terminal: never in JSON mode, under --quiet, or into a pipe.
  const bar = !json && !args.json && !quiet && process.stderr.isTTY ? new ProgressBar(process.stderr).attach(bus) : undefined;
  const log = cliLogger({ destination: bar?.logStream() });
  let summary: CookSummary;
  // Ctrl-C (or SIGTERM): finish the assets in flight, print the summary, exit 130. Each finished
  // asset is already in the cook cache journal, so a second Ctrl-C quits at once and loses nothing.
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(130);
    log.warn({ signal: sig }, 'stopping: finishing the assets in flight (again to quit at once)');
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const remoteCache = remoteCacheFlags(args);
    const shard = args.shard !== undefined ? parseShard(args.shard) : undefined;
    // A shard exists to publish: writes are on unless turned off (then the cook says so).
    if (shard) remoteCache.write ??= true;
    if (shard && args.assemble) throw errors.usage('--shard and --assemble are two steps: each shard agent runs --shard i/N, then one machine runs --assemble');
    if (shard && args.release !== undefined) throw errors.usage('--release needs the whole cook: pass it to --assemble, not --shard');
    const projectDir = path.resolve(args.project ?? '.');
    if (args.assemble) {
      const { config } = loadConfig(projectDir);
      if (!(remoteCache.url ?? config.remoteCache.url) || (remoteCache.read ?? config.remoteCache.read) === false) {
        throw errors.usage('--assemble fetches the shards\' cooks from a remote cache, but none is set to read', 'set remoteCache.url in lumina-cook.json or pass --remote-cache <url>');
      }
    }
    if (args.shardCosts !== undefined && !shard) throw errors.usage('--shard-costs balances a sharded cook: pass it with --shard i/N');
    const { cookProject } = await import('../../cook/cookProject.js');
    summary = await cookProject({ projectDir, ci: args.ci, release: args.release, log, bus, signal: ac.signal, remoteCache, shard, shardCosts: args.shardCosts });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    bar?.stop();
  }
  printOutput({ data: jsonSummary(summary), text: formatSummary(summary), ok: summary.ok }, args.json);
  if (summary.interrupted) process.exitCode = 130;
  else if (!summary.ok) process.exitCode = 1;
  return summary;
}

const withProject = <T>(y: Argv<T>) =>
  y.option('project', { type: 'string', describe: 'project folder holding lumina-cook.json', default: '.' }).option('ci', {
    type: 'boolean',
    describe: 'CI mode: missing dependencies fail the cook; no .lmeta sidecar is minted',
    default: false,
  });

/** `cook [--project DIR] [--ci] [--json] [--release NAME]`. */
export const cookCommand: CommandModule<object, CookArgs> = {
  command: 'cook',
  describe: 'cook the project and write one pak per chunk into Saved/Paks',
  builder: (y) =>
    withProject(y)
      .option('release', { type: 'string', describe: 'also write Saved/Releases/<NAME>/ (paks + release.json) for later patches' })
      .option('remote-cache', { type: 'string', describe: 'a Bazel HTTP remote cache URL (bazel-remote, nginx WebDAV); overrides remoteCache.url' })
      .option('remote-cache-read', { type: 'boolean', describe: 'look cooks up in the remote cache (--no-remote-cache-read: do not)' })
      .option('remote-cache-write', { type: 'boolean', describe: 'publish local cooks to the remote cache (trusted CI only)' })
      .option('shard', { type: 'string', describe: 'cook only share i of N (e.g. 2/3) and publish it to the remote cache; no paks' })
      .option('shard-costs', { type: 'string', describe: "recorded cook costs balancing --shard (default CookCosts.json at the project root; a full cook writes Saved/CookCosts.json)" })
      .option('assemble', { type: 'boolean', describe: 'after the shards: fetch every cook from the remote cache, cook what is missing, write the paks' }) as unknown as Argv<CookArgs>,
  handler: async (a) => {
    await runCook(a);
  },
};

interface PatchArgs extends CookArgs {
  base: string;
  out: string;
  mountPoint?: string;
}

/**
 * `patch --base <release> --out <patch.pak> [--project DIR] [--ci]`: cooks the current content
 * (incrementally, through the cook cache), then builds the patch pak against the release. `--base`
 * is a release folder, its release.json or a release name, relative to the project; `--out` is
 * relative to where the command runs. A failed cook writes no patch.
 */
export const patchCommand: CommandModule<object, PatchArgs> = {
  command: 'patch',
  describe: 'cook the current content and write a patch pak against a release',
  builder: (y) =>
    withProject(y)
      .option('base', { type: 'string', demandOption: true, describe: 'release folder, its release.json, or a release name (relative to the project)' })
      .option('out', { type: 'string', demandOption: true, describe: 'patch pak to write' })
      .option('mount-point', { type: 'string', default: '/' }) as unknown as Argv<PatchArgs>,
  handler: async (a) => {
    const [{ patchProject }, { patchOutput }] = await Promise.all([import('../../cook/patchProject.js'), import('./pak.js')]);
    const r = await patchProject({
      projectDir: path.resolve(a.project ?? '.'),
      base: a.base,
      out: path.resolve(a.out),
      mountPoint: a.mountPoint,
      ci: a.ci,
      log: cliLogger(),
    });
    if (!r.ok || !r.patch || !r.base) {
      process.exitCode = 1;
      const n = r.cook.problems.filter((p) => p.severity === 'error').length;
      throw errors.cookFailed(r.configFile, `the cook failed (${n} errors), so no patch was written`);
    }
    printOutput(patchOutput(r.patch, r.base.name), a.json);
  },
};
