/**
 * The one place a failure becomes output. User errors (LuminaError) print one line with the file
 * relative to the project and no stack; anything else is a bug in lumina-cook and prints the stack
 * so it can be reported. In JSON mode (--json or CI) the error is a pino line on stderr with the
 * same fields as every other log line (level, time, msg, code, file, ...), and stdout gets the
 * command's one result line, `{ "ok": false, "error": {...} }`, unless it printed one already.
 */
import { formatLog, isLuminaError } from '../src/errors.js';
import { createLogger } from '../src/log/logger.js';
import { jsonLine, resultPrinted } from './commandOutput.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 70;

/** A write to a pipe whose reader has gone (`| head`): not a failure of the command. */
export function isBrokenPipe(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}

export function reportError(e: unknown, opts: { json: boolean; root?: string; stream?: NodeJS.WritableStream; stdout?: NodeJS.WritableStream }): number {
  if (isBrokenPipe(e)) return EXIT_OK;
  const out = opts.stream ?? process.stderr;
  // Errors are always shown, whatever --quiet or LUMINA_LOG_LEVEL say about other lines.
  const log = opts.json ? createLogger({ json: true, level: 'trace', destination: out }) : undefined;
  const result = (error: object) => {
    if (opts.json && !resultPrinted()) (opts.stdout ?? process.stdout).write(jsonLine({ error }, false));
  };
  if (isLuminaError(e)) {
    const { message, ...fields } = e.toLog();
    if (log) log.error(fields, message);
    else out.write(`error ${formatLog(e.toLog(), opts.root ?? process.cwd())}\n`);
    result(e.toLog());
    return e.code === 'USAGE' ? EXIT_USAGE : EXIT_FAILED;
  }
  const err = e as Error;
  if (log) log.fatal({ code: 'INTERNAL', err }, String(err?.message ?? e));
  else out.write(`internal error (a bug in lumina-cook, please report it):\n${err?.stack ?? String(e)}\n`);
  result({ code: 'INTERNAL', message: String(err?.message ?? e) });
  return EXIT_INTERNAL;
}
