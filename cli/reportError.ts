/**
 * The one place a failure becomes output. User errors (LuminaError) print one line with the file
 * relative to the project and no stack; anything else is a bug in lumina-cook and prints the stack
 * so it can be reported.
 */
import { formatLog, isLuminaError } from '../src/errors.js';

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 70;

export function reportError(e: unknown, opts: { json: boolean; root?: string; stream?: NodeJS.WritableStream }): number {
  const out = opts.stream ?? process.stderr;
  if (isLuminaError(e)) {
    if (opts.json) out.write(`${JSON.stringify({ level: 'error', ...e.toLog() })}\n`);
    else out.write(`error ${formatLog(e.toLog(), opts.root ?? process.cwd())}\n`);
    return e.code === 'USAGE' ? EXIT_USAGE : EXIT_FAILED;
  }
  const err = e as Error;
  if (opts.json) out.write(`${JSON.stringify({ level: 'fatal', code: 'INTERNAL', message: String(err?.message ?? e), stack: err?.stack })}\n`);
  else out.write(`internal error (a bug in lumina-cook, please report it):\n${err?.stack ?? String(e)}\n`);
  return EXIT_INTERNAL;
}
