#!/usr/bin/env node
/**
 * The CLI is a thin wrapper over the programmatic API: it parses arguments, resolves how output
 * looks (--json or CI, --quiet, --verbose, LUMINA_LOG_LEVEL, NO_COLOR), runs one command and turns
 * failures into exit codes. Commands throw LuminaError; reportError prints them.
 */
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { errors } from '../src/errors.js';
import { isCi, logLevelFromEnv } from '../src/log/logger.js';
import { initHash } from '../src/util/hash.js';
import { configureOutput } from './commandOutput.js';
import { loadCommands } from './commands.js';
import { closest } from './didYouMean.js';
import { isBrokenPipe, reportError } from './reportError.js';


/**
 * `| head` closes the pipe early: the rest of the output has nowhere to go, which is not an error.
 * End quietly with status 0 instead of an EPIPE stack (the outputs a command writes to disk are
 * atomic, so stopping here leaves nothing half-written).
 */
function endQuietlyOnBrokenPipe(): void {
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (e) => {
      if (isBrokenPipe(e)) process.exit(0);
      throw e;
    });
  }
}

/** "Unknown argument: projet" plus the nearest option this command knows. */
function unknownOptionMessage(msg: string, y: Argv | undefined): string {
  const m = /^Unknown arguments?: (.+)$/.exec(msg);
  if (!m || !y) return msg;
  const known = new Set<string>();
  const opts = (y as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
  for (const k of Object.keys(opts.key)) known.add(k);
  for (const [k, as] of Object.entries(opts.alias)) for (const a of [k, ...as]) known.add(a);
  const hints = m[1]
    .split(', ')
    .map((typed) => [typed, closest(typed.replace(/^-+/, ''), [...known].filter((k) => k.length > 1 && !/[A-Z]/.test(k)))] as const)
    .filter(([, near]) => near !== undefined)
    .map(([typed, near]) => (m[1].includes(', ') ? `${typed}: did you mean --${near}?` : `did you mean --${near}?`));
  return hints.length ? `${msg}; ${hints.join('; ')}` : msg;
}

/** The command a command line names (its first word that is not an option), if any. */
function commandName(argv: string[]): string | undefined {
  // The global options before it (--json, --quiet, --verbose) take no value.
  return argv.find((a) => !a.startsWith('-'));
}

const GLOBAL_FLAGS = new Set(['--json', '--quiet', '-q', '--verbose']);

/**
 * `lumina-cook --version` (with global flags only) prints the version before yargs looks at any
 * command, so it registers none: loading every command module for it cost ~150 ms of CPU.
 */
export function onlyVersion(argv: string[]): boolean {
  return argv.includes('--version') && argv.every((a) => a === '--version' || GLOBAL_FLAGS.has(a));
}

/** --help or -h anywhere: yargs prints help instead of running the command. */
function asksHelp(argv: string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h');
}

export async function main(argv: string[]): Promise<number> {
  const ci = isCi();
  // Before yargs has parsed anything, an early usage error must already come out as JSON.
  let json = ci || argv.includes('--json');
  try {
    const envLevel = logLevelFromEnv();
    await initHash();
    let cli = yargs(argv)
      .scriptName('lumina-cook')
      .usage('$0 <command> [options]')
      .strict()
      .demandCommand(1, 'name a command: lumina-cook <command> (see --help)')
      .recommendCommands()
      .option('json', { type: 'boolean', global: true, default: ci, describe: 'one JSON object a line on stdout and stderr (default when CI is set)' })
      .option('quiet', { alias: 'q', type: 'boolean', global: true, describe: 'only errors on stderr, no progress bar' })
      .option('verbose', { type: 'boolean', global: true, describe: 'debug lines on stderr' })
      .conflicts('quiet', 'verbose')
      .middleware((a) => {
        json = Boolean(a.json);
        const level = a.quiet ? 'error' : a.verbose ? 'debug' : envLevel;
        // --verbose means every debug namespace unless LUMINA_DEBUG already picks some.
        if (a.verbose && !process.env.LUMINA_DEBUG) process.env.LUMINA_DEBUG = '*';
        configureOutput({ json, level, quiet: Boolean(a.quiet) });
      })
      .help()
      .alias('h', 'help')
      .version()
      .wrap(Math.min(110, process.stdout.columns || 110))
      .fail((msg, err) => {
        if (err) throw err;
        // yargs runs a command on this same instance, so its options are the failing command's.
        throw errors.usage(unknownOptionMessage(msg ?? 'invalid arguments', cli), 'run lumina-cook --help');
      });
    if (!onlyVersion(argv)) for (const c of await loadCommands(commandName(argv))) cli = cli.command(c);
    if (!asksHelp(argv)) skipHelpCache(cli);
    await cli.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e, { json });
  }
}

/**
 * yargs formats the running command's whole help text (cliui, wrap-ansi, string-width's grapheme
 * segmenter) before the handler's promise settles, only to keep it for a later showHelp() while an
 * async handler runs (yargs PRs #1535, #1865). Nothing here asks for it: .fail() above turns every
 * failure into a usage error without help, and a command group prints its help before the cache
 * is filled. ~25-35 ms of CPU per command; Angular's CLI turns it off the same way (angular-cli
 * PR #34087). Not when --help is asked for: yargs builds that help on its own path anyway.
 */
export function skipHelpCache(cli: Argv): void {
  const internal = (cli as unknown as { getInternalMethods?(): { getUsageInstance?(): { cacheHelpMessage?: () => void } } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

/** The process entry (bin/lumina-cook.js, or this file run directly): run and set the exit code. */
export async function run(argv: string[]): Promise<void> {
  endQuietlyOnBrokenPipe();
  process.exitCode = await main(argv);
}

// Run when executed directly (node dist/cli/main.js, tsx cli/main.ts), not when imported.
const entry = process.argv[1] ?? '';
if (/[\\/]cli[\\/]main\.(ts|js)$/.test(entry)) void run(hideBin(process.argv));
