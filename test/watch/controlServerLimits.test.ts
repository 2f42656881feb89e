/**
 * The control server under hostile or broken clients, with real sockets: event-stream clients
 * that stop reading are dropped and memory stays bounded, slow and idle connections are closed,
 * requests naming another Host or Origin are refused (DNS rebinding), and the browser login is a
 * one-time token exchanged for an HttpOnly, SameSite=Strict cookie. Every wait is on an event
 * ('close', a stream ending, a received message), never on a duration.
 */
import { once } from 'node:events';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProgressBus } from '../../src/log/events.js';
import { ControlServer, type ControlServerLimits, type DaemonStatus } from '../../watch/controlServer.js';
import type { StreamEndReason } from '../../watch/eventStreams.js';
import { tempDir, waitFor } from './helpers.js';

const status = (dir: string): DaemonStatus => ({ state: 'idle', pid: process.pid, project: dir, startedAt: 'now', queue: 0, batches: 0, lastCook: null, errors: [] });

interface Harness {
  server: ControlServer;
  bus: ProgressBus;
  ends: StreamEndReason[];
  dir: string;
}

const open: Harness[] = [];

async function start(limits: Partial<ControlServerLimits> = {}): Promise<Harness> {
  const dir = await tempDir();
  const bus = new ProgressBus();
  const ends: StreamEndReason[] = [];
  const server = await ControlServer.start({
    port: 0,
    infoFile: path.join(dir, 'daemon.json'),
    project: dir,
    bus,
    status: () => status(dir),
    triggerCook: () => ({ id: 'cook-1', joined: false }),
    limits,
    onStreamEnd: (r) => ends.push(r),
  });
  const h = { server, bus, ends, dir };
  open.push(h);
  return h;
}

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.server.close();
    await fsp.rm(h.dir, { recursive: true, force: true });
  }
});

/**
 * A raw connection that sends `request` and then sends nothing more. With `read: false` it also
 * never reads (beyond what Node buffers itself); with `read: true` it reads, so it sees the
 * server closing the connection.
 */
function stalledClient(port: number, request: string, read = false): net.Socket {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => {});
  if (read) s.resume();
  s.write(request);
  return s;
}

/** One raw request with arbitrary headers (fetch does not let a caller set Host). */
function rawRequest(port: number, opts: { path: string; method?: string; headers: Record<string, string> }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: opts.path, method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('control server limits', () => {
  it('drops event-stream clients that stop reading, keeps a reading one, and stays bounded in memory', async () => {
    const limit = 256 << 10;
    const { server, bus, ends } = await start({ streamBufferBytes: limit, maxStreams: 300 });
    const host = `127.0.0.1:${server.port}`;
    const stalled: net.Socket[] = [];
    for (let i = 0; i < 200; i++) stalled.push(stalledClient(server.port, `GET /events HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\n\r\n`));

    // A client that reads everything, counting the flood's events it received.
    const res = await fetch(`${server.url}/events`, { headers: { authorization: `Bearer ${server.token}` } });
    const reader = res.body!.getReader();
    let received = 0;
    let text = '';
    const dec = new TextDecoder();
    const readUpTo = async (n: number) => {
      while (received < n) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the reading client was dropped');
        text += dec.decode(value, { stream: true });
        const parts = text.split('\n\n');
        text = parts.pop()!;
        received += parts.filter((p) => p.startsWith('event: WARNING')).length;
      }
    };
    await waitFor(() => server.streamCount === 201, 'all 201 streams open');

    const rssBefore = process.memoryUsage.rss();
    const payload = 'x'.repeat(32 << 10);
    let sent = 0;
    let maxGrowth = 0;
    // Flood until every stalled client is gone; without a bound this would buffer every event for
    // each of them (200 x everything), so the loop also stops once memory grew by 256 MiB.
    while (ends.filter((r) => r === 'slow').length < 200 && maxGrowth < 256 << 20 && sent < 4096) {
      bus.emit({ type: 'WARNING', log: { code: 'COOK_FAILED', message: `${sent} ${payload}` } });
      sent++;
      await readUpTo(sent);
      maxGrowth = Math.max(maxGrowth, process.memoryUsage.rss() - rssBefore);
    }
    expect(ends.filter((r) => r === 'slow')).toHaveLength(200);
    expect(server.streamCount).toBe(1);
    expect(received).toBe(sent);
    // 200 clients x the per-client bound (plus one shared copy of each event) at most.
    expect(maxGrowth).toBeLessThan(200 * limit + (64 << 20));
    await Promise.all(stalled.map((s) => (s.destroyed ? undefined : (s.destroy(), once(s, 'close')))));
    await reader.cancel();
  });

  it('closes a connection whose body trickles in (slow loris), and idle ones', async () => {
    const { server } = await start({ headersTimeoutMs: 200, requestTimeoutMs: 300, keepAliveTimeoutMs: 200, idleTimeoutMs: 400 });
    const host = `127.0.0.1:${server.port}`;
    const slowBody = stalledClient(server.port, `POST /nope HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1000\r\n\r\n0123456789`, true);
    const partialHeaders = stalledClient(server.port, `GET /status HTTP/1.1\r\nHost: ${host}\r\n`, true);
    const silent = stalledClient(server.port, '', true);
    await Promise.all([once(slowBody, 'close'), once(partialHeaders, 'close'), once(silent, 'close')]);

    // A keep-alive connection that goes quiet after its answer is closed too.
    const kept = net.connect(server.port, '127.0.0.1');
    let answer = '';
    kept.setEncoding('utf8');
    kept.on('data', (c) => (answer += c));
    kept.write(`GET /status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\n\r\n`);
    await once(kept, 'close');
    expect(answer).toMatch(/^HTTP\/1.1 200 /);
  });

  it('refuses large request bodies without reading them', async () => {
    const { server } = await start();
    const r = await rawRequest(server.port, { path: '/cook', method: 'POST', headers: { host: `127.0.0.1:${server.port}`, authorization: `Bearer ${server.token}`, 'content-length': String(10 << 20) } });
    expect(r.status).toBe(413);
  });

  it('refuses a foreign Host or Origin even with the token (DNS rebinding)', async () => {
    const { server } = await start();
    const auth = `Bearer ${server.token}`;
    const p = server.port;
    for (const headers of <Array<Record<string, string>>>[
      { host: `evil.example:${p}` },
      { host: 'evil.example' },
      { host: `127.0.0.1:${p + 1}` },
      { host: `localhost:${p}`, origin: 'http://evil.example' },
      { host: `127.0.0.1:${p}`, origin: 'null' },
      { host: `127.0.0.1:${p}`, origin: `http://127.0.0.1:${p + 1}` },
    ]) {
      const r = await rawRequest(p, { path: '/status', headers: { ...headers, authorization: auth } });
      expect(r.status, JSON.stringify(headers)).toBe(403);
    }
    for (const headers of <Array<Record<string, string>>>[{ host: `127.0.0.1:${p}` }, { host: `localhost:${p}` }, { host: `LOCALHOST:${p}`, origin: `http://localhost:${p}` }]) {
      const r = await rawRequest(p, { path: '/status', headers: { ...headers, authorization: auth } });
      expect(r.status, JSON.stringify(headers)).toBe(200);
    }
  });

  it('exchanges a one-time login URL for an HttpOnly, SameSite=Strict session cookie', async () => {
    const { server } = await start();
    const p = server.port;
    const host = { host: `127.0.0.1:${p}` };
    // No cookie: the page says how to log in; the API wants the token.
    expect((await rawRequest(p, { path: '/', headers: host })).status).toBe(401);
    expect((await rawRequest(p, { path: '/status', headers: host })).status).toBe(401);

    const minted = await rawRequest(p, { path: '/login-url', method: 'POST', headers: { ...host, authorization: `Bearer ${server.token}` } });
    const url = new URL(JSON.parse(minted.body).url);
    expect(url.origin).toBe(server.url);
    const login = await rawRequest(p, { path: url.pathname + url.search, headers: host });
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe('/');
    const setCookie = login.headers['set-cookie']![0];
    expect(setCookie).toMatch(new RegExp(`^lumina_session_${p}=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/$`));
    const cookie = setCookie.split(';')[0];
    expect(cookie).not.toContain(server.token);

    // The link is spent.
    expect((await rawRequest(p, { path: url.pathname + url.search, headers: host })).status).toBe(403);
    // The cookie opens the page and the API, but cannot mint more logins.
    const page = await rawRequest(p, { path: '/', headers: { ...host, cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.body).toContain('<title>Lumina daemon</title>');
    expect(JSON.parse((await rawRequest(p, { path: '/status', headers: { ...host, cookie } })).body)).toMatchObject({ state: 'idle' });
    expect((await rawRequest(p, { path: '/login-url', method: 'POST', headers: { ...host, cookie } })).status).toBe(403);
    // A wrong cookie is nothing.
    expect((await rawRequest(p, { path: '/status', headers: { ...host, cookie: `lumina_session_${p}=${'0'.repeat(64)}` } })).status).toBe(401);
    // The cookie does not help a foreign origin.
    expect((await rawRequest(p, { path: '/status', headers: { ...host, cookie, origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('caps the number of event streams', async () => {
    const { server } = await start({ maxStreams: 2 });
    const host = `127.0.0.1:${server.port}`;
    const req = `GET /events HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
    const a = stalledClient(server.port, req);
    const b = stalledClient(server.port, req);
    await waitFor(() => server.streamCount === 2, 'two streams');
    const third = await rawRequest(server.port, { path: '/events', headers: { host, authorization: `Bearer ${server.token}` } });
    expect(third.status).toBe(503);
    a.destroy();
    b.destroy();
  });
});
