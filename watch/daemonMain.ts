/**
 * A bare entry point that runs the daemon in its own process, for the crash tests and for
 * `node --import tsx watch/daemonMain.ts --project DIR [--debounce MS]`. Failures print one
 * formatted line (no stack for user errors) and exit 1.
 */
import { formatLog, isLuminaError } from '../src/errors.js';
import { createLogger } from '../src/log/logger.js';
import { runWatch } from './runWatch.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const debounce = arg('debounce');
const log = createLogger({ json: true, level: (process.env.LUMINA_LOG_LEVEL as 'info' | undefined) ?? 'info' });
runWatch({ project: arg('project') ?? '.', debounce: debounce === undefined ? undefined : Number(debounce), json: true }, { log }).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${isLuminaError(e) ? formatLog(e.toLog()) : String((e as Error)?.stack ?? e)}\n`);
    process.exit(1);
  },
);
