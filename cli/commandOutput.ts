/**
 * What every command module shares: the output settings main.ts resolves once (--json or CI,
 * --quiet, --verbose, LUMINA_LOG_LEVEL), the one JSON shape results are printed in, the logger,
 * and how a command group is declared.
 */
import type { Argv, CommandModule } from 'yargs';
import type pino from 'pino';
import { createLogger, type Logger } from '../src/log/logger.js';

/** What a command produced: `data` for --json, `text` (ending in a newline) for people. */
export interface CommandOutput<T> {
  data: T;
  text: string;
  /** The result's `ok` in JSON (default true); a command that then fails sets it false. */
  ok?: boolean;
}

export interface OutputSettings {
  /** One JSON object a line on stdout and stderr (--json, or CI set). */
  json: boolean;
  level: pino.LevelWithSilent;
  /** --quiet: only errors on stderr and no progress bar. */
  quiet: boolean;
}

const settings: OutputSettings = { json: false, level: 'info', quiet: false };
let printed = false;

/** Set by main.ts once the arguments are parsed, before a command runs. */
export function configureOutput(s: Partial<OutputSettings>): void {
  Object.assign(settings, s);
}

export function outputSettings(): Readonly<OutputSettings> {
  return settings;
}

/** True once a command printed its result on stdout (so a failure adds no second result). */
export function resultPrinted(): boolean {
  return printed;
}

/**
 * Integer milliseconds everywhere: any `ms` or `...Ms` number is rounded, in one place, so no
 * command can print 12.345678 by accident.
 */
function jsonValue(key: string, value: unknown): unknown {
  if (typeof value === 'number' && (key === 'ms' || key.endsWith('Ms')) && !Number.isInteger(value)) return Math.round(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** The one JSON shape: `{ "ok": ..., ...fields }` on one line. An array result is `{ ok, items }`. */
export function jsonLine(data: unknown, ok = true): string {
  const obj = Array.isArray(data) ? { ok, items: data } : typeof data === 'object' && data !== null ? { ok, ...data } : { ok, value: data };
  return `${JSON.stringify(obj, jsonValue)}\n`;
}

/** Print a command's result: one JSON line with --json (or CI), else its text. */
export function printOutput<T>(out: CommandOutput<T>, json: boolean | undefined = settings.json): void {
  printed = true;
  process.stdout.write(json || settings.json ? jsonLine(out.data, out.ok ?? true) : out.text);
}

/** The command's logger on stderr, at the level and in the format main.ts resolved. */
export function cliLogger(opts: { destination?: NodeJS.WritableStream } = {}): Logger {
  return createLogger({ json: settings.json, level: settings.level, destination: opts.destination });
}

/** Human-readable byte counts for summary lines. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * `<name> <subcommand>`: register with `yargs.command(group)`. Without a subcommand it prints its
 * own help (the subcommands and their options) on stdout and exits 0.
 */
export function commandGroup(name: string, describe: string, subcommands: readonly unknown[]): CommandModule {
  let group: Argv | undefined;
  return {
    command: name,
    describe,
    builder: (y) => {
      for (const c of subcommands) y = y.command(c as CommandModule);
      group = y;
      return y;
    },
    handler: async () => {
      const help = await new Promise<string>((resolve) => group!.showHelp((s: string) => resolve(s)));
      printed = true;
      process.stdout.write(`${help}\n`);
    },
  };
}
