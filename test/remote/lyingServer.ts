/**
 * A real HTTP server speaking the Bazel cache protocol from memory, which can be told to lie about
 * chosen keys: truncated, flipped, foreign or garbage bytes, answers that drip too slowly, bodies
 * cut off by a reset, or a status code. It counts connections, requests and the most requests it
 * ever had in flight, so tests can see keep-alive and the concurrency bound from the server's side.
 */
import http from 'node:http';
import type net from 'node:net';

export type Lie =
  | { kind: 'truncated' }
  | { kind: 'flipped' }
  /** Serve these bytes instead (another blob's, or garbage for an action entry). */
  | { kind: 'foreign'; bytes: Buffer }
  | { kind: 'slow' }
  | { kind: 'reset' }
  | { kind: 'status'; status: number };

export interface LyingServer {
  url: string;
  store: Map<string, Buffer>;
  /** Lies by path (`/ac/<key>` or `/cas/<hash>`, after the prefix is stripped). */
  lies: Map<string, Lie>;
  /** Answer every request with this status (a broken server), when set. */
  failAll?: number;
  stats: { connections: number; requests: number; inFlight: number; maxInFlight: number };
  close(): Promise<void>;
}

export async function startLyingServer(): Promise<LyingServer> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const self: LyingServer = {
    url: '',
    store: new Map(),
    lies: new Map(),
    stats: { connections: 0, requests: 0, inFlight: 0, maxInFlight: 0 },
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    self.stats.requests++;
    self.stats.inFlight++;
    self.stats.maxInFlight = Math.max(self.stats.maxInFlight, self.stats.inFlight);
    res.on('close', () => self.stats.inFlight--);
    const key = (req.url ?? '').replace(/^.*\/(ac|cas)\//, '/$1/');
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      if (self.failAll) {
        res.writeHead(self.failAll).end('broken');
        return;
      }
      if (req.method === 'PUT') {
        self.store.set(key, Buffer.concat(body));
        res.writeHead(201, { 'content-length': 0 }).end();
        return;
      }
      const stored = self.store.get(key);
      if (!stored) {
        // With a length, as real servers answer: Node's client reuses a socket after a HEAD only then.
        res.writeHead(404, { 'content-length': 0 }).end();
        return;
      }
      if (req.method === 'HEAD') {
        res.writeHead(200, { 'content-length': stored.byteLength }).end();
        return;
      }
      const lie = self.lies.get(key);
      switch (lie?.kind) {
        case undefined:
          res.writeHead(200, { 'content-length': stored.byteLength }).end(stored);
          return;
        case 'truncated': {
          const half = stored.subarray(0, stored.byteLength >> 1);
          res.writeHead(200, { 'content-length': half.byteLength }).end(half);
          return;
        }
        case 'flipped': {
          const bad = Buffer.from(stored);
          bad[bad.byteLength >> 1] ^= 0x10;
          res.writeHead(200, { 'content-length': bad.byteLength }).end(bad);
          return;
        }
        case 'foreign':
          res.writeHead(200, { 'content-length': lie.bytes.byteLength }).end(lie.bytes);
          return;
        case 'slow': {
          // Promise the whole body, then drip one byte every 100 ms: never idle, never done.
          res.writeHead(200, { 'content-length': stored.byteLength });
          let i = 0;
          const t = setInterval(() => {
            if (res.destroyed || i >= stored.byteLength) return clearInterval(t);
            res.write(stored.subarray(i, i + 1));
            i++;
          }, 100);
          timers.add(t);
          return;
        }
        case 'reset':
          res.writeHead(200, { 'content-length': stored.byteLength });
          res.write(stored.subarray(0, stored.byteLength >> 1), () => req.socket.destroy());
          return;
        case 'status':
          res.writeHead(lie.status).end('lie');
          return;
      }
    });
  });
  // The tests read keep-alive from the connection count: never let an idle socket close under load.
  server.keepAliveTimeout = 120_000;
  server.on('connection', (s) => {
    self.stats.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  self.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return self;
}
