/**
 * The daemon's control API: plain node:http on 127.0.0.1 only, every request authenticated with a
 * random bearer token. The port and token go to `Intermediates/daemon.json` (mode 0600), so only
 * the user who started the daemon (and processes running as them) can talk to it; a web page in
 * a browser cannot read the file and so cannot forge the header.
 *
 *   GET  /status    queue, state, last cook, recent errors
 *   POST /cook      trigger a full cook (202 + id; joins an in-flight or queued one)
 *   GET  /events    text/event-stream of every ProgressEvent, heartbeat comment every 15 s
 *   POST /shutdown  graceful stop (202, then the daemon stops)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, type LuminaLog } from '../src/errors.js';
import type { ProgressBus, ProgressEvent } from '../src/log/events.js';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { writeFileAtomicSync } from '../src/util/atomicWrite.js';

export const DAEMON_INFO_FILE = 'daemon.json';

/** What `daemon.json` holds. */
export interface DaemonInfo {
  pid: number;
  port: number;
  token: string;
  startedAt: string;
  project: string;
}

export interface LastCook {
  id: string;
  /** 'full' from POST /cook or start-up, 'batch' from a watch batch. */
  kind: 'full' | 'batch';
  ok: boolean;
  startedAt: string;
  ms: number;
  /** Whatever summary the cook returned, as JSON. */
  summary?: unknown;
}

export interface DaemonStatus {
  state: 'starting' | 'idle' | 'cooking' | 'stopping';
  pid: number;
  project: string;
  startedAt: string;
  /** Files waiting for the next batch, plus a queued full cook (1) if any. */
  queue: number;
  batches: number;
  lastCook: LastCook | null;
  /** The most recent errors, newest last (bounded). */
  errors: LuminaLog[];
}

export interface ControlServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** Absolute path of daemon.json. */
  infoFile: string;
  project: string;
  bus: ProgressBus;
  status: () => DaemonStatus;
  /** Start (or join) a full cook; returns its id at once. */
  triggerCook: () => { id: string; joined: boolean };
  /** Called after a 202 to POST /shutdown has been sent. */
  shutdown?: () => void;
  log?: Logger;
  heartbeatMs?: number;
}

const HOST = '127.0.0.1';

/** Constant-time token check; hashing first makes the lengths equal, as timingSafeEqual needs. */
function tokenMatches(header: string | undefined, token: string): boolean {
  if (!header || !header.startsWith('Bearer ')) return false;
  const given = crypto.createHash('sha256').update(header.slice(7)).digest();
  const want = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(given, want);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/** Format one SSE message. Event types are single words, data is one line of JSON. */
export function formatSse(event: ProgressEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class ControlServer {
  private readonly streams = new Set<http.ServerResponse>();
  private closing: Promise<void> | undefined;
  private infoFile: string;

  private constructor(
    private readonly server: http.Server,
    readonly info: DaemonInfo,
    private readonly opts: ControlServerOptions,
  ) {
    this.infoFile = opts.infoFile;
  }

  get port(): number {
    return this.info.port;
  }

  get token(): string {
    return this.info.token;
  }

  get url(): string {
    return `http://${HOST}:${this.info.port}`;
  }

  /** Listen on 127.0.0.1, then write daemon.json (mode 0600) atomically. */
  static async start(opts: ControlServerOptions): Promise<ControlServer> {
    const log = opts.log ?? silentLogger;
    const token = crypto.randomBytes(32).toString('hex');
    let self: ControlServer | undefined;
    const server = http.createServer((req, res) => {
      if (!self) return sendJson(res, 503, { error: 'starting' });
      self.handle(req, res).catch((e: unknown) => {
        log.error({ err: e, url: req.url }, 'control request failed');
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
        else res.destroy();
      });
    });
    // Requests are tiny; a slow or stuck client must not pin a socket forever.
    server.headersTimeout = 10_000;
    server.requestTimeout = 0; // the SSE stream is a request that never ends
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(errors.daemonUnavailable(opts.infoFile, `cannot listen on ${HOST}:${opts.port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      server.once('error', onError);
      server.listen(opts.port, HOST, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const info: DaemonInfo = { pid: process.pid, port, token, startedAt: new Date().toISOString(), project: opts.project };
    self = new ControlServer(server, info, opts);
    try {
      writeFileAtomicSync(opts.infoFile, `${JSON.stringify(info, null, 2)}\n`, 0o600);
    } catch (e) {
      await self.close();
      throw e;
    }
    return self;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!tokenMatches(req.headers.authorization, this.info.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendJson(res, 401, { error: 'missing or wrong bearer token (see daemon.json)' });
    }
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /status':
        return sendJson(res, 200, this.opts.status());
      case 'POST /cook': {
        req.resume(); // any body is ignored
        return sendJson(res, 202, this.opts.triggerCook());
      }
      case 'GET /events':
        return this.openStream(req, res);
      case 'POST /shutdown': {
        req.resume();
        if (!this.opts.shutdown) return sendJson(res, 404, { error: 'shutdown is not enabled' });
        sendJson(res, 202, { stopping: true });
        const stop = this.opts.shutdown;
        res.once('finish', () => setImmediate(stop));
        return;
      }
      default: {
        const known = ['/status', '/cook', '/events', '/shutdown'].includes(url.pathname);
        return sendJson(res, known ? 405 : 404, { error: known ? `${req.method} is not allowed here` : `no route ${url.pathname}` });
      }
    }
  }

  private openStream(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    // A first comment flushes the headers, so the client knows it is subscribed.
    res.write(': connected\n\n');
    this.streams.add(res);
    const off = this.opts.bus.on((e) => {
      if (!res.writableEnded) res.write(formatSse(e));
    });
    const beat = setInterval(() => res.write(': heartbeat\n\n'), this.opts.heartbeatMs ?? 15_000);
    beat.unref();
    const cleanup = () => {
      off();
      clearInterval(beat);
      this.streams.delete(res);
    };
    req.once('close', cleanup);
    res.once('close', cleanup);
  }

  /**
   * Move daemon.json to another project (a project switch keeps the server, its port, token and
   * event streams): the new file is written first, then the old one removed.
   */
  relocate(infoFile: string, project: string): void {
    const old = this.infoFile;
    this.info.project = project;
    writeFileAtomicSync(infoFile, `${JSON.stringify(this.info, null, 2)}\n`, 0o600);
    this.infoFile = infoFile;
    if (old !== infoFile) removeIfOurs(old, this.info.token);
  }

  /**
   * Stop listening, end the event streams and remove daemon.json (only if it is still ours: a
   * newer daemon may have replaced it).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const s of this.streams) s.end();
      this.streams.clear();
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
      removeIfOurs(this.infoFile, this.info.token);
    })();
    return this.closing;
  }
}

function removeIfOurs(file: string, token: string): void {
  try {
    const now = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DaemonInfo>;
    if (now.token === token) fs.rmSync(file, { force: true });
  } catch {
    // Already gone or unreadable: nothing of ours to remove.
  }
}
