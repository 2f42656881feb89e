/**
 * A small client for a running daemon: read `Intermediates/daemon.json`, call the control API.
 * Every failure to reach the daemon (no file, a dead pid, a refused connection, a wrong token) is
 * DAEMON_UNAVAILABLE with a message that says which.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../src/errors.js';
import { DAEMON_INFO_FILE, type DaemonInfo, type DaemonStatus, type LastCook } from './controlServer.js';
import { pidAlive } from '../src/util/pidAlive.js';

/** Read and check daemon.json in `intermediatesDir`. */
export function readDaemonInfo(intermediatesDir: string): DaemonInfo & { file: string } {
  const file = path.join(intermediatesDir, DAEMON_INFO_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw errors.daemonUnavailable(file, 'no daemon is running for this project (no daemon.json)');
    throw errors.daemonUnavailable(file, `daemon.json is unreadable: ${(e as Error).message}`);
  }
  const r = raw as Partial<DaemonInfo>;
  if (typeof r !== 'object' || r === null || !Number.isInteger(r.port) || typeof r.token !== 'string' || !Number.isInteger(r.pid)) {
    throw errors.daemonUnavailable(file, 'daemon.json lacks pid, port or token');
  }
  return { ...(r as DaemonInfo), file };
}

/** One authenticated JSON request to the daemon. */
export async function daemonRequest<T = unknown>(info: DaemonInfo & { file: string }, method: 'GET' | 'POST', route: string, timeoutMs = 10_000): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${info.port}${route}`, {
      method,
      headers: { authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const dead = !pidAlive(info.pid);
    throw errors.daemonUnavailable(info.file, dead ? `daemon pid ${info.pid} is not running (stale daemon.json)` : `cannot reach the daemon on port ${info.port}: ${(e as Error).message}`);
  }
  const text = await res.text();
  if (res.status === 401) throw errors.daemonUnavailable(info.file, 'the daemon refused the token in daemon.json');
  if (!res.ok) throw errors.daemonUnavailable(info.file, `${method} ${route} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

export async function daemonStatus(intermediatesDir: string): Promise<DaemonStatus> {
  return daemonRequest<DaemonStatus>(readDaemonInfo(intermediatesDir), 'GET', '/status');
}

export async function daemonCook(intermediatesDir: string): Promise<{ id: string; joined: boolean }> {
  return daemonRequest(readDaemonInfo(intermediatesDir), 'POST', '/cook');
}

export async function daemonShutdown(intermediatesDir: string): Promise<{ stopping: boolean }> {
  return daemonRequest(readDaemonInfo(intermediatesDir), 'POST', '/shutdown');
}

/** A fresh one-time login URL for the daemon's status page. */
export async function daemonLoginUrl(intermediatesDir: string): Promise<{ url: string }> {
  return daemonRequest(readDaemonInfo(intermediatesDir), 'POST', '/login-url');
}

/**
 * POST /cook, then wait until that cook is done and return its record (from the daemon's recent
 * cooks, so a batch finishing right after it cannot hide it). Fails with DAEMON_UNAVAILABLE when
 * the daemon goes away meanwhile.
 */
export async function daemonCookAndWait(intermediatesDir: string, opts: { pollMs?: number } = {}): Promise<{ id: string; joined: boolean; cook: LastCook }> {
  const info = readDaemonInfo(intermediatesDir);
  const started = await daemonRequest<{ id: string; joined: boolean }>(info, 'POST', '/cook');
  for (;;) {
    const s = await daemonRequest<DaemonStatus>(info, 'GET', '/status');
    const cook = (s.recentCooks ?? (s.lastCook ? [s.lastCook] : [])).find((c) => c.id === started.id);
    if (cook) return { ...started, cook };
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
  }
}
