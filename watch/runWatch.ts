/** Run the watch daemon in the foreground: the entry `lumina-cook watch` and watch/daemonMain.ts share. */
import path from 'node:path';
import { createLogger, type Logger } from '../src/log/logger.js';
import { Daemon } from './Daemon.js';

export interface WatchArgs {
  project?: string;
  json?: boolean;
  port?: number;
  debounce?: number;
}

/**
 * Run the daemon until a signal or POST /shutdown. The first SIGINT/SIGTERM stops gracefully (the
 * in-flight batch finishes or is abandoned after 10 s); a second one exits at once, which is safe
 * because every output is written atomically. Resolves with the exit code.
 */
export async function runWatch(args: WatchArgs, opts: { log?: Logger; onStarted?: (daemon: Daemon) => void } = {}): Promise<number> {
  const log = opts.log ?? createLogger({ json: args.json });
  // Signals are handled from before the start: the control API reports "idle" before start()
  // returns, and a SIGTERM in that window must still stop gracefully (it used to kill the process).
  let daemon: Daemon | undefined;
  let stopAsked = false;
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal: sig }, 'second signal: exiting now');
      process.exit(130);
    }
    log.info({ signal: sig }, 'stopping');
    stopAsked = true;
    void daemon?.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    daemon = await Daemon.start({ projectDir: path.resolve(args.project ?? '.'), log, port: args.port, debounceMs: args.debounce });
    if (stopAsked) void daemon.stop();
    else opts.onStarted?.(daemon);
    await daemon.stopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}
