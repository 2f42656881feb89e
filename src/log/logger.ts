/**
 * Structured logs with pino: pretty lines on a TTY, one JSON object a line with `--json` or in CI.
 * Fields are `{ file, asset, code }`, never pre-formatted strings, so the JSON stays queryable.
 */
import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';
import { errors } from '../errors.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  json?: boolean;
  level?: pino.LevelWithSilent;
  /** Where lines go; stderr by default so stdout stays for command output. */
  destination?: NodeJS.WritableStream;
}

/** CI set to anything but "", "0" or "false" (GitHub, GitLab and most CIs set CI=true). */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI?.trim().toLowerCase();
  return v !== undefined && v !== '' && v !== '0' && v !== 'false';
}

/** True when output should be machine-readable: `--json`, CI, or not a terminal. */
export function wantsJson(json?: boolean): boolean {
  if (json !== undefined) return json;
  return isCi() || !process.stderr.isTTY;
}

const LEVELS: readonly pino.LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The level LUMINA_LOG_LEVEL asks for (case-insensitive), else `debug` when LUMINA_DEBUG is set,
 * else `info`. A value that is not a level is a usage error naming it, not a crash inside pino.
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): pino.LevelWithSilent {
  const raw = env.LUMINA_LOG_LEVEL;
  if (raw !== undefined && raw !== '') {
    const level = raw.trim().toLowerCase() as pino.LevelWithSilent;
    if (!LEVELS.includes(level)) throw errors.usage(`LUMINA_LOG_LEVEL is ${JSON.stringify(raw)}, which is not a log level`, `use one of ${LEVELS.join(', ')}`);
    return level;
  }
  // LUMINA_DEBUG turns on debug lines (for its namespaces only; see createDebugger).
  return env.LUMINA_DEBUG ? 'debug' : 'info';
}

/** NO_COLOR (https://no-color.org): set and not empty means no colour, even on a terminal. */
export function colorAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? logLevelFromEnv();
  const dest = opts.destination ?? process.stderr;
  if (wantsJson(opts.json)) {
    return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, dest as pino.DestinationStream);
  }
  return pino({ level, base: undefined }, lazyPretty(dest));
}

/**
 * pino-pretty's stream, made at the first line written: a command that logs nothing at its level
 * (--quiet, a scan whose lines are all below it) never loads pino-pretty (~25 ms of CPU at
 * start-up), as --json, CI and library callers never do. pino also sends its stream a 'message'
 * with its levels and keys; createLogger keeps pino's defaults, which pino-pretty assumes, so
 * that message is not passed on (this object has no emit, and pino sends none).
 */
function lazyPretty(dest: NodeJS.WritableStream): pino.DestinationStream {
  let stream: NodeJS.WritableStream | undefined;
  const open = (): NodeJS.WritableStream => {
    // Required here, not imported, for the reason above.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pretty({
      destination: dest as NodeJS.WritableStream & { fd?: number },
      colorize: ((dest as { isTTY?: boolean }).isTTY ?? false) && colorAllowed(),
      ignore: 'pid,hostname',
      translateTime: 'HH:MM:ss.l',
      sync: true,
    });
  };
  return {
    write(line: string) {
      (stream ??= open()).write(line);
    },
  };
}

/** A logger that drops everything: for library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * Debug output behind a namespace that costs nothing when off: `debug?.('msg', fields)`.
 * Enabled with LUMINA_DEBUG=registry,cook (or `*`).
 */
export function createDebugger(namespace: string, log: Logger = silentLogger): ((msg: string, fields?: object) => void) | undefined {
  const spec = process.env.LUMINA_DEBUG;
  if (!spec) return undefined;
  const on = spec.split(',').some((s) => s.trim() === '*' || s.trim() === namespace);
  if (!on) return undefined;
  const child = log.child({ ns: namespace });
  return (msg, fields) => child.debug(fields ?? {}, msg);
}
