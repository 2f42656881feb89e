/**
 * The daemon's control API and status page: plain node:http on 127.0.0.1 only.
 *
 * Programs authenticate with a random bearer token. The port and token go to
 * `Intermediates/daemon.json` (mode 0600), so only the user who started the daemon (and processes
 * running as them) can talk to it; a web page cannot read the file and so cannot forge the header.
 * Browsers authenticate with a session cookie got from a one-time login URL (see browserAccess.ts),
 * and every request, token or not, must name 127.0.0.1/localhost on our port as its Host and
 * carry no foreign Origin (DNS rebinding).
 *
 *   GET  /          the status page (live progress, queue, last cook, errors, report link)
 *   GET  /login     ?token=<one-time>: sets the session cookie, redirects to /
 *   GET  /report    the latest cook report (Saved/Reports/cook.html)
 *   GET  /status    queue, state, last cook, current errors
 *   POST /cook      trigger a full cook (202 + id; joins an in-flight or queued one)
 *   GET  /events    text/event-stream of every ProgressEvent, heartbeat comment every 15 s
 *   POST /login-url a fresh one-time login URL (bearer token only)
 *   POST /shutdown  graceful stop (202, then the daemon stops)
 *
 * Bounded by design: slow or idle connections time out (headers, whole request, keep-alive and
 * socket idle timeouts), request bodies are capped, and event-stream clients that fall behind are
 * dropped (eventStreams.ts).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { errors, type LuminaLog } from '../src/errors.js';
import type { ProgressBus } from '../src/log/events.js';
import type { Logger } from '../src/log/logger.js';
import { silentLogger } from '../src/log/logger.js';
import { writeFileAtomicSync } from '../src/util/atomicWrite.js';
import { bearerMatches, BrowserAccess } from './browserAccess.js';
import { EventStreams, type StreamEndReason } from './eventStreams.js';
import { messagePage, statusPageHtml } from './statusPage.js';

export { formatSse } from './eventStreams.js';

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

/** A current error: when it was raised. Cleared once its file is fixed. */
export type DaemonError = LuminaLog & { time: string };

export interface DaemonStatus {
  state: 'starting' | 'idle' | 'cooking' | 'stopping';
  pid: number;
  project: string;
  startedAt: string;
  /** Files waiting for the next batch, plus a queued full cook (1) if any. */
  queue: number;
  batches: number;
  lastCook: LastCook | null;
  /** The last cooks (full and batch), oldest first: `daemon cook --wait` finds its cook here. */
  recentCooks?: LastCook[];
  /** Current errors, oldest first (bounded). */
  errors: Array<LuminaLog & { time?: string }>;
  /** Whether Saved/Reports/cook.html exists (GET /report serves it). */
  report?: boolean;
}

/** Timeouts and bounds; the defaults suit a local daemon, tests shrink them. */
export interface ControlServerLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (a slow-loris body is cut off). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Any socket with no traffic for this long is closed (event streams excepted). */
  idleTimeoutMs: number;
  /** Unsent bytes one event stream may hold before the client is dropped. */
  streamBufferBytes: number;
  /** Open event streams at most; more get 503. */
  maxStreams: number;
  /** Request bodies are ignored; larger ones are refused (413). */
  maxBodyBytes: number;
}

export const DEFAULT_LIMITS: ControlServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  streamBufferBytes: 1 << 20,
  maxStreams: 64,
  maxBodyBytes: 64 << 10,
};

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
  /** The latest cook report (HTML), served at GET /report. */
  reportFile?: () => string | undefined;
  log?: Logger;
  heartbeatMs?: number;
  limits?: Partial<ControlServerLimits>;
  /** Told whenever an event stream ends, and why (tests, logs). */
  onStreamEnd?: (reason: StreamEndReason) => void;
}

const HOST = '127.0.0.1';

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/** Pages run only their own inline script and talk only to this origin; no framing, no referrer. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function sendPage(res: http.ServerResponse, status: number, html: string | Buffer): void {
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(html) });
  res.end(html);
}

export class ControlServer {
  private readonly streams: EventStreams;
  private readonly access: BrowserAccess;
  private closing: Promise<void> | undefined;
  private infoFile: string;

  private constructor(
    private readonly server: http.Server,
    readonly info: DaemonInfo,
    private readonly opts: ControlServerOptions,
    private readonly limits: ControlServerLimits,
  ) {
    this.infoFile = opts.infoFile;
    this.access = new BrowserAccess(info.port);
    this.streams = new EventStreams({ bus: opts.bus, maxBufferedBytes: limits.streamBufferBytes, heartbeatMs: opts.heartbeatMs ?? 15_000, onEnd: opts.onStreamEnd });
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

  /** Event streams open now. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** A fresh one-time URL that logs a browser in to the status page. */
  loginUrl(): string {
    return this.access.mintLoginUrl();
  }

  /** Listen on 127.0.0.1, then write daemon.json (mode 0600) atomically. */
  static async start(opts: ControlServerOptions): Promise<ControlServer> {
    const log = opts.log ?? silentLogger;
    const limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const token = crypto.randomBytes(32).toString('hex');
    let self: ControlServer | undefined;
    const server = http.createServer(
      {
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // The header and request timeouts are only checked this often (Node's default is 30 s).
        connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
      },
      (req, res) => {
        if (!self) return sendJson(res, 503, { error: 'starting' });
        self.handle(req, res).catch((e: unknown) => {
          log.error({ err: e, url: req.url }, 'control request failed');
          if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
          else res.destroy();
        });
      },
    );
    // Socket inactivity: with no 'timeout' listener, Node destroys the socket.
    server.timeout = limits.idleTimeoutMs;
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
    self = new ControlServer(server, info, opts, limits);
    try {
      writeFileAtomicSync(opts.infoFile, `${JSON.stringify(info, null, 2)}\n`, 0o600);
    } catch (e) {
      await self.close();
      throw e;
    }
    return self;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Where the request claims to come from is checked before anything else, token or not.
    const refusal = this.access.refusal(req);
    if (refusal) {
      res.setHeader('connection', 'close');
      return sendJson(res, 403, { error: refusal });
    }
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > this.limits.maxBodyBytes || (req.headers['transfer-encoding'] !== undefined && req.method !== 'GET')) {
      res.setHeader('connection', 'close');
      return sendJson(res, 413, { error: 'request bodies are not accepted' });
    }
    req.resume(); // any (small) body is ignored; requestTimeout cuts off one that never ends
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    if (req.method === 'GET' && url.pathname === '/login') return this.login(url, res);

    const bearer = bearerMatches(req.headers.authorization, this.info.token);
    const browser = !bearer && this.access.hasSession(req);
    if (!bearer && !browser) {
      if (req.method === 'GET' && (url.pathname === '/' || url.pathname === '/report')) {
        return sendPage(res, 401, messagePage('Not logged in', 'Open the one-time URL that <code>lumina-cook watch</code> printed, or get a new one with <code>lumina-cook daemon url</code>.'));
      }
      res.setHeader('www-authenticate', 'Bearer');
      return sendJson(res, 401, { error: 'missing or wrong bearer token (see daemon.json)' });
    }
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /':
        return sendPage(res, 200, statusPageHtml());
      case 'GET /report':
        return this.sendReport(res);
      case 'GET /status':
        return sendJson(res, 200, this.opts.status());
      case 'POST /cook':
        return sendJson(res, 202, this.opts.triggerCook());
      case 'GET /events':
        if (this.streams.size >= this.limits.maxStreams) return sendJson(res, 503, { error: `too many event streams (${this.limits.maxStreams})` });
        return this.streams.add(req, res);
      case 'POST /login-url':
        // Only a holder of the token may mint logins; a browser session cannot mint more.
        if (!bearer) return sendJson(res, 403, { error: 'needs the bearer token' });
        return sendJson(res, 200, { url: this.loginUrl() });
      case 'POST /shutdown': {
        if (!this.opts.shutdown) return sendJson(res, 404, { error: 'shutdown is not enabled' });
        sendJson(res, 202, { stopping: true });
        const stop = this.opts.shutdown;
        res.once('finish', () => setImmediate(stop));
        return;
      }
      default: {
        const known = ['/', '/report', '/status', '/cook', '/events', '/login-url', '/shutdown'].includes(url.pathname);
        return sendJson(res, known ? 405 : 404, { error: known ? `${req.method} is not allowed here` : `no route ${url.pathname}` });
      }
    }
  }

  private login(url: URL, res: http.ServerResponse): void {
    const cookie = this.access.redeem(url.searchParams.get('token'));
    if (!cookie) {
      return sendPage(res, 403, messagePage('Login link used or unknown', 'Each login link works once. Get a new one with <code>lumina-cook daemon url</code>.'));
    }
    // 303 to / drops the token from the address bar and history.
    res.writeHead(303, { 'set-cookie': cookie, location: '/', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-length': 0 });
    res.end();
  }

  private async sendReport(res: http.ServerResponse): Promise<void> {
    const file = this.opts.reportFile?.();
    const html = file ? await fsp.readFile(file).catch(() => undefined) : undefined;
    if (!html) return sendPage(res, 404, messagePage('No cook report yet', 'A report is written after every full cook.'));
    sendPage(res, 200, html);
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
      this.streams.closeAll();
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
