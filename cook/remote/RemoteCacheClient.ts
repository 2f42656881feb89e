/**
 * A client for the Bazel HTTP remote cache protocol, as bazel-remote, nginx WebDAV and other
 * servers speak it: `GET/PUT/HEAD <url>/cas/<sha256>` for bytes addressed by their SHA-256 and
 * `<url>/ac/<sha256>` for action results. The URL's path is the instance prefix
 * (`http://cache:8080/studio-a` -> `/studio-a/cas/...`).
 *
 * Every request: keep-alive sockets, at most `concurrency` in flight (a p-queue), and one
 * deadline for the whole exchange (`timeoutMs`), so a server that drips bytes cannot stall a cook
 * the way a per-read idle timeout would let it. A CAS download is checked against the size and the
 * SHA-256 it was asked for before it is returned: a short, long, flipped or foreign body is an
 * `integrity` failure, never data. Bodies are capped at the expected size while they stream.
 *
 * Credentials come only from the environment (`LUMINA_REMOTE_CACHE_TOKEN` for a bearer token,
 * `LUMINA_REMOTE_CACHE_BASIC` as `user:password`), never from the project's files.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import PQueue from 'p-queue';

export type RemoteFailureKind = 'timeout' | 'reset' | 'status' | 'integrity';

/** A request that did not give a usable answer; `kind` says how, for the counts in the summary. */
export class RemoteRequestError extends Error {
  constructor(
    readonly kind: RemoteFailureKind,
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RemoteRequestError';
  }
}

export interface RemoteCacheClientOptions {
  /** Base URL; its path is the instance prefix. */
  url: string;
  /** Deadline of one request, from sending it to the last body byte. */
  timeoutMs: number;
  /** Requests in flight at once (and keep-alive sockets). Default 16. */
  concurrency?: number;
  /** Where credentials are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The largest action-cache value accepted (default 1 MiB; a cook result is ~200 bytes). */
  maxAcBytes?: number;
}

/** What went over the wire, for the summary and the bench. */
export interface RemoteTraffic {
  requests: number;
  bytesDown: number;
  bytesUp: number;
}

export const TOKEN_ENV = 'LUMINA_REMOTE_CACHE_TOKEN';
export const BASIC_ENV = 'LUMINA_REMOTE_CACHE_BASIC';

/** The Authorization header the environment asks for, if any. */
export function authorizationFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env[TOKEN_ENV];
  if (token) return `Bearer ${token}`;
  const basic = env[BASIC_ENV];
  if (basic) return `Basic ${Buffer.from(basic, 'utf8').toString('base64')}`;
  return undefined;
}

/** Lowercase hex SHA-256. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

interface Answer {
  status: number;
  body: Buffer;
}

/** How many blob hashes putCas remembers (about 150 bytes each). */
const MAX_REMEMBERED_BLOBS = 100_000;

export class RemoteCacheClient {
  readonly base: URL;
  readonly traffic: RemoteTraffic = { requests: 0, bytesDown: 0, bytesUp: 0 };
  private readonly agent: http.Agent;
  private readonly queue: PQueue;
  private readonly auth: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxAcBytes: number;
  private readonly mod: typeof http | typeof https;
  private aborted = false;
  /** Blobs put (or being put) in this run, by SHA-256. */
  private readonly casPuts = new Map<string, Promise<boolean>>();

  constructor(opts: RemoteCacheClientOptions) {
    const base = new URL(opts.url);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.base = base;
    const concurrency = opts.concurrency ?? 16;
    this.mod = base.protocol === 'https:' ? https : http;
    this.agent = new this.mod.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
    this.queue = new PQueue({ concurrency });
    this.auth = authorizationFromEnv(opts.env);
    this.timeoutMs = opts.timeoutMs;
    this.maxAcBytes = opts.maxAcBytes ?? 1 << 20;
  }

  /** `<base>/<kind>/<hash>`, for messages. */
  urlFor(kind: 'ac' | 'cas', hash: string): string {
    return new URL(`${kind}/${hash}`, this.base).href;
  }

  /** Fetch a CAS blob; undefined when the server does not have it. Checked against `hash` and `size`. */
  async getCas(hash: string, size: number): Promise<Buffer | undefined> {
    const url = this.urlFor('cas', hash);
    const a = await this.request('GET', url, undefined, size);
    if (a.status === 404) return undefined;
    if (a.status !== 200) throw new RemoteRequestError('status', `GET answered ${a.status}`, url, a.status);
    if (a.body.byteLength !== size) throw new RemoteRequestError('integrity', `blob has ${a.body.byteLength} bytes, expected ${size}`, url);
    const got = sha256Hex(a.body);
    if (got !== hash) throw new RemoteRequestError('integrity', `blob hashes to sha256 ${got}, not ${hash}`, url);
    return a.body;
  }

  /** Fetch an action-cache value; undefined when there is none. */
  async getAc(key: string): Promise<Buffer | undefined> {
    const url = this.urlFor('ac', key);
    const a = await this.request('GET', url, undefined, this.maxAcBytes);
    if (a.status === 404) return undefined;
    if (a.status !== 200) throw new RemoteRequestError('status', `GET answered ${a.status}`, url, a.status);
    return a.body;
  }

  /** Does the server hold this key? */
  async has(kind: 'ac' | 'cas', hash: string): Promise<boolean> {
    const url = this.urlFor(kind, hash);
    const a = await this.request('HEAD', url, undefined, 0);
    if (a.status === 200) return true;
    if (a.status === 404) return false;
    throw new RemoteRequestError('status', `HEAD answered ${a.status}`, url, a.status);
  }

  /**
   * Upload a blob to the CAS unless the server already has it. Returns its SHA-256. A blob this
   * client already put, or is putting (two shader permutations often compile to the same bytes),
   * is not asked about or sent again: one HEAD and at most one PUT per distinct blob and run.
   */
  async putCas(bytes: Uint8Array): Promise<{ hash: string; uploaded: boolean }> {
    const hash = sha256Hex(bytes);
    const earlier = this.casPuts.get(hash);
    if (earlier) {
      await earlier;
      return { hash, uploaded: false };
    }
    const p = (async () => {
      if (await this.has('cas', hash)) return false;
      await this.put(this.urlFor('cas', hash), bytes);
      return true;
    })();
    // Bounded: past the cap a repeat costs one HEAD again, nothing worse.
    if (this.casPuts.size >= MAX_REMEMBERED_BLOBS) this.casPuts.clear();
    this.casPuts.set(hash, p);
    try {
      return { hash, uploaded: await p };
    } catch (e) {
      this.casPuts.delete(hash);
      throw e;
    }
  }

  /**
   * Store an action-cache value unless one is already there: an existing entry is never
   * overwritten. `If-None-Match: *` asks servers that honour it to refuse a racing second writer
   * too (412, taken as "already there").
   */
  async putAc(key: string, bytes: Uint8Array): Promise<boolean> {
    if (await this.has('ac', key)) return false;
    return this.put(this.urlFor('ac', key), bytes, { 'if-none-match': '*' });
  }

  private async put(url: string, bytes: Uint8Array, extra: Record<string, string> = {}): Promise<boolean> {
    const a = await this.request('PUT', url, bytes, 64 * 1024, { 'content-type': 'application/octet-stream', ...extra });
    if (a.status === 412) return false;
    if (a.status < 200 || a.status > 299) throw new RemoteRequestError('status', `PUT answered ${a.status}`, url, a.status);
    return true;
  }

  /** Fail every request not yet sent, at once (the cache was turned off for the run). */
  abort(): void {
    this.aborted = true;
  }

  /** Close the keep-alive sockets; requests not yet sent fail at once. */
  close(): void {
    this.aborted = true;
    this.agent.destroy();
  }

  /** One request through the queue; the body is read up to `maxBody` bytes (more is an integrity failure). */
  private request(method: string, url: string, body: Uint8Array | undefined, maxBody: number, headers: Record<string, string> = {}): Promise<Answer> {
    return this.queue.add(() => this.send(method, url, body, maxBody, headers)) as Promise<Answer>;
  }

  private send(method: string, url: string, body: Uint8Array | undefined, maxBody: number, headers: Record<string, string>): Promise<Answer> {
    if (this.aborted) return Promise.reject(new RemoteRequestError('reset', `${method} not sent: the remote cache is off`, url));
    this.traffic.requests++;
    return new Promise<Answer>((resolve, reject) => {
      let settled = false;
      const fail = (e: RemoteRequestError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(e);
      };
      const h: Record<string, string> = { ...headers };
      if (this.auth) h.authorization = this.auth;
      if (body) h['content-length'] = String(body.byteLength);
      const req = this.mod.request(url, { method, agent: this.agent, headers: h });
      // One deadline for the whole exchange: slow bytes time out as surely as silence does.
      const timer = setTimeout(() => fail(new RemoteRequestError('timeout', `${method} got no complete answer within ${this.timeoutMs} ms`, url)), this.timeoutMs);
      req.on('error', (e: NodeJS.ErrnoException) => fail(new RemoteRequestError('reset', `${method} failed: ${e.code ?? e.message}`, url)));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        // Only a successful GET's body is data; anything else is drained up to a small cap.
        const cap = status === 200 ? maxBody : 64 * 1024;
        const declared = res.headers['content-length'] === undefined ? undefined : Number(res.headers['content-length']);
        if (method !== 'HEAD' && status === 200 && declared !== undefined && declared > cap) {
          fail(new RemoteRequestError('integrity', `${method} answered ${declared} bytes, more than the ${cap} expected`, url));
          return;
        }
        const parts: Buffer[] = [];
        let got = 0;
        res.on('data', (chunk: Buffer) => {
          got += chunk.byteLength;
          this.traffic.bytesDown += chunk.byteLength;
          if (got > cap) {
            fail(new RemoteRequestError('integrity', `${method} answered more than the ${cap} bytes expected`, url));
            return;
          }
          parts.push(chunk);
        });
        res.on('error', (e: NodeJS.ErrnoException) => fail(new RemoteRequestError('reset', `${method} body failed: ${e.code ?? e.message}`, url)));
        res.on('aborted', () => fail(new RemoteRequestError('reset', `${method} body was cut off`, url)));
        res.on('end', () => {
          if (settled) return;
          // A body shorter than its Content-Length means the connection broke mid-answer.
          if (!res.complete) {
            fail(new RemoteRequestError('reset', `${method} body was cut off after ${got} bytes`, url));
            return;
          }
          settled = true;
          clearTimeout(timer);
          resolve({ status, body: Buffer.concat(parts, got) });
        });
      });
      if (body) {
        this.traffic.bytesUp += body.byteLength;
        req.end(body);
      } else {
        req.end();
      }
    });
  }
}
