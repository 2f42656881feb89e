/**
 * `lumina-cook watch [--project DIR] [--json]` runs the daemon in the foreground until SIGINT or
 * SIGTERM (or POST /shutdown); `lumina-cook daemon status|cook|stop|url` talks to a running one.
 * Both are thin wrappers over Daemon and daemonClient.
 */
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { loadConfig } from '../../config/index.js';
import { errors, formatLog } from '../../src/errors.js';
import { runWatch, type WatchArgs } from '../../watch/runWatch.js';
import { daemonCook, daemonCookAndWait, daemonLoginUrl, daemonShutdown, daemonStatus } from '../../watch/daemonClient.js';
import { cliLogger, jsonLine } from '../commandOutput.js';

export type { WatchArgs } from '../../watch/runWatch.js';

const withProject = <T>(y: Argv<T>) => y.option('project', { type: 'string', describe: 'project folder (holding lumina-cook.json)', default: '.' });

export const watchCommand: CommandModule<object, WatchArgs> = {
  command: 'watch',
  describe: 'watch the content, re-cook on change and serve the control API',
  builder: (y) =>
    withProject(y)
      .option('port', { type: 'number', describe: 'control API port on 127.0.0.1 (default: watch.port, 0 = any free port)' })
      .option('debounce', { type: 'number', describe: 'quiet time in ms that closes a batch (default: watch.debounceMs)' }) as unknown as Argv<WatchArgs>,
  handler: async (a) => {
    process.exitCode = await runWatch(a, {
      log: cliLogger(),
      // The one-time login link for the status page (spent on first use; `daemon url` mints another).
      onStarted: (d) => process.stdout.write(a.json ? jsonLine({ statusPage: d.loginUrl() }) : `status page: ${d.loginUrl()}\n`),
    });
  },
};

interface DaemonArgs {
  action: 'status' | 'cook' | 'stop' | 'url';
  project?: string;
  json?: boolean;
  /** `daemon cook --wait`: wait for the cook to finish and print its result. */
  wait?: boolean;
}

/** `daemon status|cook|stop`: the client side. Prints one JSON line with --json, a short summary otherwise. */
export async function runDaemonClient(a: DaemonArgs, out: NodeJS.WritableStream = process.stdout): Promise<unknown> {
  const { config } = loadConfig(path.resolve(a.project ?? '.'));
  const dir = config.intermediatesDir;
  if (a.wait && a.action !== 'cook') throw errors.usage(`--wait goes with "daemon cook", not "daemon ${a.action}"`);
  const result =
    a.action === 'status'
      ? await daemonStatus(dir)
      : a.action === 'cook'
        ? await (a.wait ? daemonCookAndWait(dir) : daemonCook(dir))
        : a.action === 'url'
          ? await daemonLoginUrl(dir)
          : await daemonShutdown(dir);
  const waited = a.wait ? (result as Awaited<ReturnType<typeof daemonCookAndWait>>).cook : undefined;
  if (waited && !waited.ok) process.exitCode = 1;
  if (a.json) {
    out.write(jsonLine(result, waited ? waited.ok : true));
  } else if (a.action === 'status') {
    const s = result as Awaited<ReturnType<typeof daemonStatus>>;
    out.write(`${s.state}, pid ${s.pid}, ${s.queue} queued, ${s.batches} batches\n`);
    if (s.lastCook) out.write(`last cook ${s.lastCook.id} (${s.lastCook.kind}): ${s.lastCook.ok ? 'ok' : 'failed'} in ${s.lastCook.ms} ms\n`);
    // Current errors only (each goes once its file is fixed), with when it was raised.
    for (const e of s.errors) out.write(`${e.time ? `${new Date(e.time).toLocaleTimeString()}  ` : ''}${formatLog(e, config.projectDir)}\n`);
  } else if (a.action === 'cook') {
    const c = result as { id: string; joined: boolean };
    out.write(`${c.joined ? 'joined' : 'started'} ${c.id}\n`);
    if (waited) out.write(`${waited.id} ${waited.ok ? 'finished' : 'FAILED'} in ${waited.ms} ms${cookBrief(waited.summary)}\n`);
  } else if (a.action === 'url') {
    out.write(`${(result as { url: string }).url}\n`);
  } else {
    out.write('stopping\n');
  }
  return result;
}

/** ": 23 assets (2 cooked, 21 cached, 0 failed)" from a cook's brief summary, when it has one. */
function cookBrief(summary: unknown): string {
  const s = summary as { assets?: number; cooked?: number; cached?: number; failed?: number } | undefined;
  return s && typeof s.assets === 'number' ? `: ${s.assets} assets (${s.cooked} cooked, ${s.cached} cached, ${s.failed} failed)` : '';
}

export const daemonCommand: CommandModule<object, DaemonArgs> = {
  command: 'daemon <action>',
  describe: 'talk to a running watch daemon: status, cook [--wait], stop, url (a one-time status page login)',
  builder: (y) =>
    withProject(y)
      .positional('action', { choices: ['status', 'cook', 'stop', 'url'] as const, demandOption: true })
      .option('wait', { type: 'boolean', default: false, describe: 'with cook: wait until the cook is done, print its result, exit 1 if it failed' }) as unknown as Argv<DaemonArgs>,
  handler: async (a) => {
    if (!['status', 'cook', 'stop', 'url'].includes(a.action)) throw errors.usage(`unknown daemon action "${a.action}"`, 'use status, cook, stop or url');
    await runDaemonClient(a);
  },
};
